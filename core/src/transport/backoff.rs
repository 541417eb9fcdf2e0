//! Exponential backoff with full jitter, and the retry loop for idempotent requests.

use crate::error::{Error, ErrorKind, Result};
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
            Some(d) => until(d, attempt()).await,
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

/// One attempt, bounded by `deadline`. One that fails unreachable at or after its deadline
/// failed because of it: the server ends a request at its `grpc-timeout` (the same deadline,
/// counted from a moment later) by resetting the stream, and on a busy host that reset can
/// arrive before our own timer fires.
pub(crate) async fn until<T>(deadline: Instant, attempt: impl Future<Output = Result<T>>) -> Result<T> {
    match tokio::time::timeout_at(deadline, attempt).await {
        Ok(Err(e)) if e.kind() == ErrorKind::Unavailable && Instant::now() >= deadline => {
            Err(Error::new(ErrorKind::Timeout, format!("deadline exceeded ({e})")))
        }
        Ok(r) => r,
        Err(_) => Err(Error::new(ErrorKind::Timeout, "deadline exceeded")),
    }
}

#[cfg(test)]
mod deadline_tests {
    use super::*;

    #[tokio::test]
    async fn a_reset_that_beats_our_own_timer_is_a_timeout() {
        let deadline = Instant::now();
        let reset = async { Err::<(), _>(Error::new(ErrorKind::Unavailable, "stream error received: stream no longer needed")) };
        assert_eq!(until(deadline, reset).await.unwrap_err().kind(), ErrorKind::Timeout);
        // Before the deadline, unreachable stays unreachable.
        let early = async { Err::<(), _>(Error::new(ErrorKind::Unavailable, "connection refused")) };
        let later = Instant::now() + Duration::from_secs(5);
        assert_eq!(until(later, early).await.unwrap_err().kind(), ErrorKind::Unavailable);
    }
}
