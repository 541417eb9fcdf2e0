//! Exponential backoff with full jitter, and the retry loop for idempotent requests.

use crate::client::error::{Error, ErrorKind, Result};
use rand::Rng;
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

const BASE: Duration = Duration::from_millis(25);
const CAP: Duration = Duration::from_secs(2);
/// The least time left before a deadline that is worth another attempt.
const LAST_ATTEMPT: Duration = Duration::from_millis(100);

/// Backoff state: attempt `n` sleeps a uniformly random time in `[0, min(CAP, BASE * 2^n))`
/// ("full jitter"), so many clients recovering at once spread out instead of stampeding.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    attempt: u32,
}

impl Backoff {
    pub fn next_delay(&mut self) -> Duration {
        let ceiling = BASE.saturating_mul(1u32 << self.attempt.min(16)).min(CAP);
        self.attempt = self.attempt.saturating_add(1);
        rand::rng().random_range(Duration::ZERO..=ceiling)
    }

    pub fn reset(&mut self) {
        self.attempt = 0;
    }

    /// Sleeps the next delay, cut short so that one more attempt still fits before
    /// `deadline` (giving up when a long delay was drawn would leave up to 2 s of the caller's
    /// time unused). Returns false when the deadline leaves no time for another attempt.
    pub async fn wait(&mut self, deadline: Option<Instant>) -> bool {
        let delay = self.next_delay();
        let delay = match deadline {
            Some(d) => match d.saturating_duration_since(Instant::now()).checked_sub(LAST_ATTEMPT) {
                Some(left) if !left.is_zero() => delay.min(left),
                _ => return false,
            },
            None => delay,
        };
        tokio::time::sleep(delay).await;
        true
    }
}

/// Runs an idempotent request until it succeeds, fails with a non-transient error, or the
/// deadline passes. Each attempt is itself bounded by the deadline.
pub(crate) async fn retry<T, F, Fut>(deadline: Option<Instant>, mut attempt: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let mut backoff = Backoff::default();
    loop {
        let result = match deadline {
            Some(d) => match tokio::time::timeout_at(d, attempt()).await {
                Ok(r) => r,
                Err(_) => return Err(Error::new(ErrorKind::Timeout, "deadline exceeded")),
            },
            None => attempt().await,
        };
        match result {
            Err(e) if e.is_transient() => {
                if !backoff.wait(deadline).await {
                    return Err(e);
                }
            }
            other => return other,
        }
    }
}
