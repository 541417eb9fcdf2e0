//! A fair semaphore: at most N holders of a name at once, FIFO by create revision, each holder
//! fenced by its own key's create revision. The queue rule is `sync/mutex/permits.rs`.

use crate::client::Client;
use crate::error::{Error, Result};
use crate::lease::Lease;
use crate::sync::guard::LockGuard;
use crate::sync::mutex::permits::Permits;
use crate::sync::mutex::{Kind, LockOptions, Mutex};
use std::time::Duration;

/// The most permits a semaphore may have.
pub const MAX_PERMITS: u32 = 1024;

/// A handle on one semaphore name with N permits. Each acquisition takes one permit (or
/// [`Semaphore::with_count`] of them at once) and returns a [`LockGuard`] (its fencing token,
/// fenced writes and release are a lock's). Admission is FIFO with a head-of-line rule: a
/// request for k permits waits at the head until k are free, and later requests wait behind it,
/// so a large request is never starved by small ones. Every
/// participant of a name must give the same N: one that gives another fails with
/// `InvalidArgument` before it waits, and leaves nothing. N is kept only in the participants'
/// keys, so it changes once nobody holds or waits.
///
/// ```
/// # #[tokio::main] async fn main() -> etcdlock::Result<()> {
/// # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
/// # let client = etcdlock::Client::connect(etcd.endpoints(), Default::default()).await?;
/// let slots = client.semaphore("jobs/slots", 3, 10)?;
/// let permit = slots.acquire().await?; // at most 3 holders at once, served in arrival order
/// permit.put(b"jobs/running/7", b"yes").await?; // only while this permit is held
/// permit.release().await?;
/// # client.close().await; Ok(()) }
/// ```
#[derive(Debug)]
pub struct Semaphore {
    mutex: Mutex,
    permits: u32,
    count: u32,
}

impl Client {
    /// The semaphore `name` with `permits` holders at most (1 to [`MAX_PERMITS`]); its keys are
    /// bound to this client's shared lease for `ttl_secs`, as a mutex's are. Sends nothing.
    pub fn semaphore(&self, name: impl Into<Vec<u8>>, permits: u32, ttl_secs: i64) -> Result<Semaphore> {
        check_permits(permits)?;
        Ok(Semaphore { mutex: Mutex::new(self, name.into(), ttl_secs)?.with_kind(Kind::Permits(Permits::one_of(permits))), permits, count: 1 })
    }
}

pub(crate) fn check_permits(permits: u32) -> Result<()> {
    if permits == 0 || permits > MAX_PERMITS {
        return Err(Error::invalid(format!("permits must be 1 to {MAX_PERMITS}, got {permits}")));
    }
    Ok(())
}

impl Semaphore {
    /// A semaphore whose keys are bound to `lease` (never revoked here).
    pub fn with_lease(lease: &Lease, name: impl Into<Vec<u8>>, permits: u32) -> Result<Semaphore> {
        check_permits(permits)?;
        Ok(Semaphore { mutex: Mutex::with_lease(lease, name)?.with_kind(Kind::Permits(Permits::one_of(permits))), permits, count: 1 })
    }

    /// This handle's acquisitions take `count` permits at once (1 to N; more is
    /// `InvalidArgument`): one key, one fencing token, released together.
    ///
    /// ```no_run
    /// # async fn demo(client: etcdlock::Client) -> etcdlock::Result<()> {
    /// let encoders = client.semaphore("encoders", 4, 10)?.with_count(2)?;
    /// let two = encoders.acquire().await?; // two of the four permits, in arrival order
    /// two.release().await?;
    /// # Ok(()) }
    /// ```
    pub fn with_count(mut self, count: u32) -> Result<Semaphore> {
        if count == 0 || count > self.permits {
            return Err(Error::invalid(format!("count must be 1 to the semaphore's {} permits, got {count}", self.permits)));
        }
        self.count = count;
        self.mutex = self.mutex.with_kind(Kind::Permits(Permits { n: self.permits, count, agree: true }));
        Ok(self)
    }

    /// How many permits each acquisition takes.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The semaphore's name: the prefix its holders' and waiters' keys are under.
    pub fn name(&self) -> &[u8] {
        self.mutex.name()
    }

    /// N, the most holders at once, as given to [`Client::semaphore`].
    pub fn permits(&self) -> u32 {
        self.permits
    }

    /// Waits for a permit (`count` of them).
    pub async fn acquire(&self) -> Result<LockGuard> {
        self.mutex.lock().await
    }

    /// Takes a permit only if one is free now; `WouldBlock` otherwise, leaving nothing.
    pub async fn try_acquire(&self) -> Result<LockGuard> {
        self.acquire_with(LockOptions { timeout: Some(Duration::ZERO), ..Default::default() }).await
    }

    /// Waits for a permit within `opts` (timeout, cancel, a value for `inspect`), as
    /// [`Mutex::lock_with`] does: on any failure the key is gone when this returns.
    pub async fn acquire_with(&self, opts: LockOptions) -> Result<LockGuard> {
        self.mutex.lock_with(opts).await
    }
}
