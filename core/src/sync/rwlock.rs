//! A fair read-write lock: readers hold together, a writer alone, in arrival order. The queue
//! rules are `sync/mutex/readers.rs` (readers) and the mutex's (writers).

use crate::client::Client;
use crate::error::Result;
use crate::lease::Lease;
use crate::sync::guard::LockGuard;
use crate::sync::mutex::{Kind, LockOptions, Mutex};
use std::time::Duration;

/// A handle on one read-write lock name. Phase-fair in arrival order: a reader waits only for
/// writers that came before it, a writer for every holder or waiter that came before it; so
/// neither starves. Each acquisition returns a [`LockGuard`] whose fencing token (its key's
/// create revision), fenced writes and release are a lock's: a writer's fenced writes never
/// apply while a reader or another writer holds. Downgrading a write to a read is not offered.
/// A plain mutex (or `etcdctl lock`) on the same name counts as a writer.
///
/// ```
/// # #[tokio::main] async fn main() -> etcdlock::Result<()> {
/// # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
/// # let client = etcdlock::Client::connect(etcd.endpoints(), Default::default()).await?;
/// let rw = client.rwlock("config", 10)?;
/// let r = rw.read().await?;       // many readers at once
/// r.release().await?;
/// let w = rw.write().await?;      // alone
/// w.put(b"config-data", b"v2").await?;
/// w.release().await?;
/// # client.close().await; Ok(()) }
/// ```
#[derive(Debug)]
pub struct RwLock {
    readers: Mutex,
    writers: Mutex,
}

impl Client {
    /// The read-write lock `name`; its keys are bound to this client's shared lease for
    /// `ttl_secs`, as a mutex's are. Sends nothing.
    pub fn rwlock(&self, name: impl Into<Vec<u8>>, ttl_secs: i64) -> Result<RwLock> {
        let name = name.into();
        Ok(RwLock {
            readers: Mutex::new(self, name.clone(), ttl_secs)?.with_kind(Kind::Read),
            writers: Mutex::new(self, name, ttl_secs)?.with_kind(Kind::Write),
        })
    }
}

impl RwLock {
    /// A read-write lock whose keys are bound to `lease` (never revoked here).
    pub fn with_lease(lease: &Lease, name: impl Into<Vec<u8>>) -> Result<RwLock> {
        let name = name.into();
        Ok(RwLock {
            readers: Mutex::with_lease(lease, name.clone())?.with_kind(Kind::Read),
            writers: Mutex::with_lease(lease, name)?.with_kind(Kind::Write),
        })
    }

    /// The lock's name: readers and writers queue under it together, in one FIFO order.
    pub fn name(&self) -> &[u8] {
        self.readers.name()
    }

    /// Waits to read.
    pub async fn read(&self) -> Result<LockGuard> {
        self.readers.lock().await
    }

    /// Waits to write.
    pub async fn write(&self) -> Result<LockGuard> {
        self.writers.lock().await
    }

    /// Reads only if no writer holds or waits; `WouldBlock` otherwise, leaving nothing.
    pub async fn try_read(&self) -> Result<LockGuard> {
        self.read_with(LockOptions { timeout: Some(Duration::ZERO), ..Default::default() }).await
    }

    /// Writes only if nobody holds or waits; `WouldBlock` otherwise, leaving nothing.
    pub async fn try_write(&self) -> Result<LockGuard> {
        self.write_with(LockOptions { timeout: Some(Duration::ZERO), ..Default::default() }).await
    }

    /// Waits to read within `opts`, as [`Mutex::lock_with`] does.
    pub async fn read_with(&self, opts: LockOptions) -> Result<LockGuard> {
        self.readers.lock_with(opts).await
    }

    /// Waits to write within `opts`, as [`Mutex::lock_with`] does.
    pub async fn write_with(&self, opts: LockOptions) -> Result<LockGuard> {
        self.writers.lock_with(opts).await
    }
}
