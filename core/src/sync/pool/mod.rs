//! A pool of named slots (worker ids, devices, test clusters): an acquire gets `count` slot
//! ids that nobody else holds, a fencing token per slot, and keeps them while its lease lives.
//!
//! Requests queue on a fair lock (`<name>/queue/`): FIFO in the order etcd committed them, no
//! herd. The one at the head waits until `count` slots are free and takes them in one Txn that
//! also ends its turn (`claim.rs`), so a request for k slots is never passed by later ones
//! (head of line) and slots change hands one request at a time. A slot whose
//! holder died is not handed out again before `reuse_delay`, timed by an etcd lease; a clean
//! release frees it at once. The keys: `board.rs`; the guarantees: `docs/design.md`, "Pools".
//!
//! ```
//! # #[tokio::main] async fn main() -> etcdlock::Result<()> {
//! # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
//! # let client = etcdlock::Client::connect(etcd.endpoints(), Default::default()).await?;
//! use etcdlock::PoolOptions;
//! use std::time::Duration;
//! let gpus = client.pool("gpus", PoolOptions::named(["gpu0", "gpu1", "gpu2"]).reuse_delay(Duration::from_secs(5)))?;
//! let held = gpus.acquire(1).await?;
//! println!("using {:?}, token {:?}", held.slots(), held.tokens());
//! held.put(b"jobs/7/device", held.slots()[0].as_bytes()).await?; // only while the slot is held
//! held.release().await?;
//! # client.close().await; Ok(()) }
//! ```

mod board;
mod claim;
mod define;
mod held;
mod inspect;
pub(crate) mod spec;

pub use held::PoolGuard;
pub use inspect::{SlotInfo, SlotState};
pub use spec::{MAX_POOL_SLOTS, MAX_SLOT_ID_LEN};

use crate::client::{validate, Client};
use crate::error::{Error, ErrorKind, Result};
use crate::sync::mutex::{LockOptions, Mutex};
use board::Keys;
use spec::{check_slots, Spec};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The most slots one acquire may take (each is a few conditions of one Txn, and etcd allows
/// 128 operations per Txn by default).
pub const MAX_POOL_COUNT: usize = 30;

/// A pool's definition, and the lease its holdings live on.
#[derive(Debug, Clone)]
pub struct PoolOptions {
    /// The slot ids (1 to [`MAX_POOL_SLOTS`], each 1 to [`MAX_SLOT_ID_LEN`] bytes without `/`
    /// or a newline, no duplicates). Every participant must give the same.
    pub slots: Vec<String>,
    /// The TTL of the lease the slots are held on (kept alive while held).
    pub ttl_secs: i64,
    /// How long a slot whose holder died rests before it is handed out again (whole seconds,
    /// rounded up, at least etcd's minimum lease TTL of about 2 s unless zero; zero: at once).
    pub reuse_delay: Duration,
}

impl PoolOptions {
    /// A pool of these slots, TTL 10 s, no reuse delay.
    pub fn named<S: Into<String>>(slots: impl IntoIterator<Item = S>) -> PoolOptions {
        PoolOptions { slots: slots.into_iter().map(Into::into).collect(), ttl_secs: 10, reuse_delay: Duration::ZERO }
    }
    /// A pool of `n` slots named `0` to `n - 1`.
    pub fn size(n: usize) -> PoolOptions {
        PoolOptions::named((0..n).map(|i| i.to_string()))
    }
    /// The same, with [`PoolOptions::ttl_secs`] set: how long the slots stay held after their
    /// holder stops keeping its lease alive (a crash, a network partition).
    pub fn ttl(mut self, ttl_secs: i64) -> PoolOptions {
        self.ttl_secs = ttl_secs;
        self
    }
    /// The same, with [`PoolOptions::reuse_delay`] set: a rest for a slot whose holder died,
    /// for work that may outlive its holder's lease (a process still writing after a pause).
    pub fn reuse_delay(mut self, delay: Duration) -> PoolOptions {
        self.reuse_delay = delay;
        self
    }
}

/// How one acquire waits.
#[derive(Debug, Clone)]
pub struct PoolAcquire {
    /// Slots to take at once (1 to the pool's size, at most [`MAX_POOL_COUNT`]).
    pub count: usize,
    /// With an owner, an acquire while this client holds slots acquired with the same owner
    /// returns that holding instead of taking more (a retried call gets what it already has).
    /// Stored in the slot keys, for `inspect` to show.
    pub owner: Option<String>,
    /// `None` waits forever; `Some(ZERO)` tries once (`WouldBlock`); else `LockTimeout`.
    pub timeout: Option<Duration>,
    /// Cancels the wait (`Cancelled`), leaving nothing.
    pub cancel: Option<CancellationToken>,
}

impl Default for PoolAcquire {
    fn default() -> Self {
        PoolAcquire { count: 1, owner: None, timeout: None, cancel: None }
    }
}

/// A handle on one pool. Sends nothing until used.
#[derive(Debug, Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    client: Client,
    keys: Keys,
    spec: Spec,
    ttl_secs: i64,
    defined: AtomicBool,
    /// Made by [`Client::join_pool`]: uses the stored definition, whatever it is.
    join: bool,
    /// The pool's size as last read (slots may have been added since this handle was made).
    size: AtomicU32,
}

/// Holdings by (pool, owner), per client: what an acquire with an owner returns again.
#[derive(Debug, Default)]
pub(crate) struct Owners(std::sync::Mutex<HashMap<(Vec<u8>, String), Weak<held::Held>>>);

impl Client {
    /// The pool `name`. Checks the options; sends nothing. The first acquire stores the
    /// definition if the pool has none, and fails with `InvalidArgument` if it has another.
    pub fn pool(&self, name: impl Into<Vec<u8>>, opts: PoolOptions) -> Result<Pool> {
        let name = name.into();
        check_pool(&name, &opts)?;
        let spec = Spec { slots: opts.slots, reuse_delay: opts.reuse_delay };
        let size = AtomicU32::new(spec.slots.len() as u32);
        Ok(Pool { inner: Arc::new(Inner { client: self.clone(), keys: Keys::new(name), spec, ttl_secs: opts.ttl_secs, defined: AtomicBool::new(false), join: false, size }) })
    }

    /// The pool `name` as it is defined in etcd (by another participant): its first acquire
    /// fails with `InvalidArgument` if it is not defined. Sends nothing.
    pub fn join_pool(&self, name: impl Into<Vec<u8>>, ttl_secs: i64) -> Result<Pool> {
        let name = name.into();
        validate::lock_name(&name)?;
        validate::ttl(ttl_secs)?;
        let spec = Spec { slots: Vec::new(), reuse_delay: Duration::ZERO };
        Ok(Pool { inner: Arc::new(Inner { client: self.clone(), keys: Keys::new(name), spec, ttl_secs, defined: AtomicBool::new(false), join: true, size: AtomicU32::new(MAX_POOL_COUNT as u32) }) })
    }
}

/// Checks a pool's name and options as [`Client::pool`] does.
pub fn check_pool(name: &[u8], opts: &PoolOptions) -> Result<()> {
    validate::lock_name(name)?;
    validate::ttl(opts.ttl_secs)?;
    check_slots(&opts.slots, 1)?;
    if !opts.reuse_delay.is_zero() {
        crate::sync::expiring::ttl_of(opts.reuse_delay)?;
    }
    Ok(())
}

impl Pool {
    /// The pool's name: the prefix its slots, queue and definition keys are under.
    pub fn name(&self) -> &[u8] {
        self.inner.keys.name()
    }

    /// Waits for `count` slots.
    pub async fn acquire(&self, count: usize) -> Result<PoolGuard> {
        self.acquire_with(PoolAcquire { count, ..Default::default() }).await
    }

    /// Waits for slots within `opts`. On any failure nothing is left: no queue key, no slot.
    pub async fn acquire_with(&self, opts: PoolAcquire) -> Result<PoolGuard> {
        use tracing::Instrument;
        let name = String::from_utf8_lossy(self.name()).into_owned();
        let span = crate::sync::spans::group_acquire(&name);
        let r = self.acquire_untraced(opts).instrument(span.clone()).await;
        crate::sync::spans::waited(&span, &r, "acquired", |g| Some(g.fencing_token()));
        if let Ok(held) = &r {
            if !span.is_disabled() && held.inner.hold.get().is_none() {
                let slots = held.slots().join(",");
                span.record("etcdlock.slots", slots.as_str());
                let hold = crate::sync::spans::group_hold(&name, Some(&slots), held.fencing_token(), &span);
                let _ = held.inner.hold.set(crate::sync::spans::LeaseHold::start(hold, held.lost()));
            }
        }
        r
    }

    async fn acquire_untraced(&self, opts: PoolAcquire) -> Result<PoolGuard> {
        let p = &self.inner;
        if opts.count == 0 || opts.count > MAX_POOL_COUNT.min(p.spec.slots.len().max(p.size.load(Ordering::Relaxed) as usize)) {
            return Err(Error::invalid(format!(
                "count must be 1 to the pool's {} slots (at most {MAX_POOL_COUNT}), got {}",
                p.spec.slots.len(),
                opts.count
            )));
        }
        if let Some(o) = &opts.owner {
            validate::check_lock_value(o.as_bytes())?;
            if let Some(held) = self.owned(o) {
                return Ok(held);
            }
        }
        // A try (zero timeout) bounds nothing but the wait for slots: not the lease's grant, not
        // the turn (which the lock's own try handles).
        let try_once = opts.timeout == Some(Duration::ZERO);
        let deadline = opts.timeout.filter(|t| !t.is_zero()).map(|t| Instant::now() + t);
        if !p.defined.load(Ordering::Acquire) {
            let size = if p.join { define::stored(&p.client, &p.keys).await?.slots.len() } else { define::ensure(&p.client, &p.keys, &p.spec).await.map(|_| p.spec.slots.len())? };
            p.size.store(size as u32, Ordering::Relaxed);
            p.defined.store(true, Ordering::Release);
            if opts.count > size {
                return Err(Error::invalid(format!("count must be 1 to the pool's {size} slots, got {}", opts.count)));
            }
        }
        let owner = opts.owner.clone().unwrap_or_default();
        // The slots live on the client's shared lease for the pool's TTL; this use keeps it
        // from being revoked as idle while they are held.
        let session = crate::sync::PerClient::of(&p.client).sessions.get(p.ttl_secs);
        let (lease, lease_use, _) = session.take(&p.client, deadline).await?;
        // Requests take slots one at a time, in the order etcd committed them: the request
        // that holds the admission lock waits for its slots, the rest wait behind it.
        let admission = Mutex::with_lease(&lease, p.keys.queue())?;
        let lock_opts = LockOptions { timeout: opts.timeout, cancel: opts.cancel.clone(), value: owner.clone().into_bytes() };
        // The admission lock is the pool's own: no acquire or hold spans of its (the pool's are
        // around this call).
        let guard = admission.lock_traced(lock_opts, crate::sync::spans::Traced::Quiet).await.map_err(|e| match e.kind() {
            ErrorKind::LockTimeout => Error::new(ErrorKind::LockTimeout, format!("timed out waiting for {} slot(s) of pool {:?}", opts.count, String::from_utf8_lossy(self.name()))),
            _ => e,
        })?;
        let token = guard.fencing_token();
        let value = format!("{token};{owner}").into_bytes();
        let slots_deadline = if try_once { Some(Instant::now()) } else { deadline };
        match claim::take(&p.client, &p.keys, &guard, opts.count, &value, slots_deadline, opts.cancel.as_ref()).await {
            Ok(slots) => {
                let held = Arc::new(held::Held {
                    lease,
                    lease_use: std::sync::Mutex::new(Some(lease_use)),
                    keys: p.keys.clone(),
                    slots,
                    token,
                    owner: opts.owner.clone(),
                    released: Default::default(),
                    since: std::time::Instant::now(),
                    hold: Default::default(),
                });
                if let Some(o) = &opts.owner {
                    let owners = &crate::sync::PerClient::of(&p.client).pool_owners;
                    owners.0.lock().unwrap_or_else(|e| e.into_inner()).insert((self.name().to_vec(), o.clone()), Arc::downgrade(&held));
                }
                Ok(PoolGuard { inner: held })
            }
            Err(e) => {
                if e.is_unreachable() {
                    held::undo_by_value(&p.client, &p.keys, value);
                }
                let _ = guard.release().await;
                drop(lease_use);
                Err(match e.kind() {
                    ErrorKind::LockTimeout if opts.timeout == Some(Duration::ZERO) => Error::new(ErrorKind::WouldBlock, format!("no {} slot(s) of pool {:?} free now", opts.count, String::from_utf8_lossy(self.name()))),
                    _ => e,
                })
            }
        }
    }

    /// Adds slots (ids not in the pool yet); returns the pool's slots after. Waiting requests
    /// see them at once.
    pub async fn add_slots<S: Into<String>>(&self, ids: impl IntoIterator<Item = S>) -> Result<Vec<String>> {
        self.change(ids.into_iter().map(Into::into).collect(), true).await
    }

    /// Removes slots; returns the pool's slots after. A held slot goes when its holder releases
    /// it (it is no longer handed out meanwhile).
    pub async fn remove_slots<S: Into<String>>(&self, ids: impl IntoIterator<Item = S>) -> Result<Vec<String>> {
        self.change(ids.into_iter().map(Into::into).collect(), false).await
    }

    async fn change(&self, ids: Vec<String>, add: bool) -> Result<Vec<String>> {
        let slots = define::change(&self.inner.client, &self.inner.keys, &ids, add).await?;
        self.inner.size.store(slots.len() as u32, Ordering::Relaxed);
        Ok(slots)
    }

    fn owned(&self, owner: &str) -> Option<PoolGuard> {
        let owners = &crate::sync::PerClient::of(&self.inner.client).pool_owners;
        let mut map = owners.0.lock().unwrap_or_else(|e| e.into_inner());
        let key = (self.name().to_vec(), owner.to_string());
        match map.get(&key).and_then(Weak::upgrade) {
            Some(held) if held.is_held() => Some(PoolGuard { inner: held }),
            _ => {
                map.remove(&key);
                None
            }
        }
    }
}
