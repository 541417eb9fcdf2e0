//! A lock set handle in the style of the lock handle (`lock.rs`): one object, any number of
//! threads or tasks acquiring it, at most one holding acquisition at a time, which `release()`
//! releases from whichever thread. Translation only: the set (one Txn puts every member's key,
//! each waits by its own rule, fenced writes, one-Txn release) is the core's `LockSet`.

use crate::bridge::Bridge;
use crate::client::ClientInner;
use crate::errors::IntoPy;
use crate::lease::NativeLease;
use crate::op::{value, Op, Undo};
use etcdlock::{runtime, CancellationToken, Client, Error, ErrorKind, LockOptions, LockSet, LockSetGuard, Op as TxnOp, Result, SetMember};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::OnceCell;

/// A member as the Python wrapper passes it: `(name, mode, permits)`, `mode` one of
/// `"exclusive"`, `"read"`, `"write"`, `"permit"` (`permits` only for the last).
pub type MemberArg<'py> = (Bound<'py, PyBytes>, String, u32);

fn member((name, mode, permits): MemberArg<'_>) -> Result<SetMember> {
    let name = name.as_bytes().to_vec();
    Ok(match mode.as_str() {
        "exclusive" => SetMember::exclusive(name),
        "read" => SetMember::read(name),
        "write" => SetMember::write(name),
        "permit" => SetMember::permit(name, permits),
        other => return Err(Error::new(ErrorKind::InvalidArgument, format!("a lock set member is exclusive, read, write or permit, not {other:?}"))),
    })
}

fn make(client: &Client, members: &[SetMember], ttl: i64) -> Result<Arc<LockSet>> {
    client.lock_set(members.iter().cloned(), ttl).map(Arc::new)
}

struct Shared {
    client: Arc<ClientInner>,
    members: Vec<SetMember>,
    ttl: i64,
    /// Stored in every member's queue key (LockOptions::value).
    value: Vec<u8>,
    set: OnceCell<Arc<LockSet>>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    held: Option<Held>,
    /// The latest acquisition, held or not (for `keys`, `lease_id` and `lost_reason`).
    last: Option<Arc<LockSetGuard>>,
}

/// The holding acquisition, and the token that stops its lost-callback watcher.
struct Held {
    guard: Arc<LockSetGuard>,
    stop: CancellationToken,
}

impl Drop for Held {
    fn drop(&mut self) {
        // Released or replaced: its watcher must not report the set's end as a loss.
        self.stop.cancel();
    }
}

impl Shared {
    async fn set(&self) -> Result<Arc<LockSet>> {
        let client = self.client.get().await?;
        let set = self.set.get_or_try_init(|| async { make(&client, &self.members, self.ttl) }).await?;
        Ok(set.clone())
    }

    fn set_held(&self, guard: Arc<LockSetGuard>) {
        let mut st = self.state.lock().unwrap();
        st.last = Some(guard.clone());
        st.held = Some(Held { guard, stop: CancellationToken::new() });
    }

    /// Takes the holding acquisition out if it is `guard` (or any, when None).
    fn take_held(&self, guard: Option<&Arc<LockSetGuard>>) -> Option<Held> {
        let mut st = self.state.lock().unwrap();
        match (&st.held, guard) {
            (Some(h), Some(g)) if !Arc::ptr_eq(&h.guard, g) => None,
            _ => st.held.take(),
        }
    }
}

#[pyclass(frozen, name = "LockSet", module = "etcdlock._native")]
pub struct NativeLockSet {
    shared: Arc<Shared>,
}

impl NativeLockSet {
    /// Checks the members, TTL and value at once, as the core does: all of it if the client is
    /// connected, else the names, TTL and value now and the rest (how many, none twice or under
    /// another) on first use.
    pub fn new(client: Arc<ClientInner>, members: Vec<MemberArg<'_>>, ttl: i64, value: Vec<u8>) -> Result<Self> {
        let members = members.into_iter().map(member).collect::<Result<Vec<_>>>()?;
        etcdlock::check_ttl(ttl)?;
        etcdlock::check_lock_value(&value)?;
        for m in &members {
            etcdlock::check_lock_name(&m.name)?;
        }
        let set = match client.connected() {
            Some(c) => OnceCell::new_with(Some(make(c, &members, ttl)?)),
            None => OnceCell::new(),
        };
        Ok(NativeLockSet { shared: Arc::new(Shared { client, members, ttl, value, set, state: Default::default() }) })
    }

    fn check(&self) -> Result<()> {
        runtime::check_pid(self.shared.client.pid)
    }

    fn held_guard(&self) -> Result<Option<Arc<LockSetGuard>>> {
        self.check()?;
        Ok(self.shared.state.lock().unwrap().held.as_ref().map(|h| h.guard.clone()))
    }

    fn last<T>(&self, f: impl FnOnce(&LockSetGuard) -> T) -> PyResult<Option<T>> {
        self.check().py()?;
        Ok(self.shared.state.lock().unwrap().last.as_deref().map(f))
    }
}

#[pymethods]
impl NativeLockSet {
    /// Takes every member. `timeout`: None waits forever, 0 tries once. Resolves to True, or
    /// False when it timed out or (try once) a member was busy; no key is left either way.
    #[pyo3(signature = (timeout=None))]
    fn acquire(&self, timeout: Option<f64>) -> PyResult<Op> {
        self.check().py()?;
        let timeout = timeout.map(Duration::try_from_secs_f64).transpose().map_err(|_| {
            pyo3::exceptions::PyValueError::new_err("timeout must be a non-negative number of seconds")
        })?;
        let (shared, cancel) = (self.shared.clone(), CancellationToken::new());
        // The acquisition this op made, for undoing it if the caller gave up meanwhile.
        let made: Arc<Mutex<Option<Arc<LockSetGuard>>>> = Default::default();
        let fut = {
            let (shared, cancel, made) = (shared.clone(), cancel.clone(), made.clone());
            async move {
                let set = shared.set().await?;
                let opts = LockOptions { timeout, cancel: Some(cancel), value: shared.value.clone() };
                match set.lock_with(opts).await {
                    Ok(guard) => {
                        let guard = Arc::new(guard);
                        *made.lock().unwrap() = Some(guard.clone());
                        shared.set_held(guard);
                        value(true)
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => value(false),
                    Err(e) if e.kind() == ErrorKind::LockTimeout && timeout.is_some() => value(false),
                    Err(e) => Err(e),
                }
            }
        };
        let undo: Undo = Box::new(move || {
            Box::pin(async move {
                let guard = made.lock().unwrap().take();
                if let Some(g) = guard {
                    drop(shared.take_held(Some(&g)));
                    let _ = g.release().await;
                }
            })
        });
        Ok(Op::cancellable(fut, cancel, Some(undo)))
    }

    /// Releases every member in one Txn. `NotHeld` if nothing holds, or a member was lost (the
    /// keys left are deleted either way).
    fn release(&self) -> Op {
        if let Err(e) = self.check() {
            return Op::fail(e);
        }
        let Some(held) = self.shared.take_held(None) else {
            return Op::fail(Error::new(ErrorKind::NotHeld, "the lock set is not held"));
        };
        Op::new(async move {
            let r = held.guard.release().await;
            drop(held); // after release: a loss it discovers still reaches on_lost callbacks
            r?;
            value(())
        })
    }

    /// Writes `value` at `key` (on `lease` if given) only while every member is held (fenced).
    #[pyo3(signature = (key, value, lease=None))]
    fn put(&self, key: &[u8], value: &[u8], lease: Option<&NativeLease>) -> Op {
        let guard = match self.held_guard() {
            Ok(Some(g)) => g,
            Ok(None) => return Op::fail(Error::new(ErrorKind::NotHeld, "if_held: the lock set is not held")),
            Err(e) => return Op::fail(e),
        };
        let op = TxnOp::Put { key: key.to_vec(), value: value.to_vec(), lease: lease.map_or(0, |l| l.lease.id()) };
        Op::new(async move { crate::op::value(guard.txn(&[op]).await?) })
    }

    /// Cheap local check: an acquisition holds every member, not released, none known lost.
    fn is_held(&self) -> PyResult<bool> {
        Ok(self.held_guard().py()?.is_some_and(|g| g.is_held()))
    }

    /// The holding acquisition's token (every member key's create revision), or None.
    fn fencing_token(&self) -> PyResult<Option<i64>> {
        Ok(self.held_guard().py()?.filter(|g| g.is_held()).map(|g| g.fencing_token()))
    }

    /// Member `name`'s fence at the set's token, as `(kind, name, token, cluster)`; `NotHeld`
    /// if nothing holds (released or lost), as `Lock.fence`; `InvalidArgument` for a name that
    /// is not a member.
    fn fence(&self, name: &[u8]) -> Op {
        let guard = match self.held_guard() {
            Ok(Some(g)) if g.is_held() => g,
            Ok(_) => return Op::fail(Error::new(ErrorKind::NotHeld, "the lock set is not held: a fence is for a holding acquisition")),
            Err(e) => return Op::fail(e),
        };
        let name = name.to_vec();
        Op::new(async move { crate::lock::fence_value(guard.fence(&name).await?) })
    }

    /// The latest acquisition's queue keys, one per member in the set's order, or None.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Option<Vec<Bound<'py, PyBytes>>>> {
        self.last(|g| g.members().iter().map(|m| PyBytes::new(py, m.key())).collect())
    }

    /// The ID of the latest acquisition's lease, or None before the first.
    fn lease_id(&self) -> PyResult<Option<i64>> {
        self.last(LockSetGuard::lease_id)
    }

    /// The latest acquisition's health (see `etcdlock.Health`); idle before the first.
    fn health(&self) -> PyResult<crate::lock::HealthTuple> {
        let h = self.last(LockSetGuard::health)?.unwrap_or_else(|| {
            let names: Vec<&[u8]> = self.shared.members.iter().map(|m| m.name.as_slice()).collect();
            etcdlock::Health::idle(&names.join(&b","[..]))
        });
        Ok(crate::lock::health_tuple(h))
    }

    /// Why the latest acquisition was lost (its first member lost), or None.
    fn lost_reason(&self) -> PyResult<Option<&'static str>> {
        Ok(self.last(|g| g.lost_reason().map(|r| r.as_str()))?.flatten())
    }

    /// Reports on `bridge` under `id` when the holding acquisition is lost: the reason, or
    /// None once it ended otherwise (released, replaced). False when nothing is held.
    fn watch_lost(&self, bridge: &Bridge, id: u64) -> PyResult<bool> {
        self.check().py()?;
        let st = self.shared.state.lock().unwrap();
        let Some(held) = st.held.as_ref() else { return Ok(false) };
        crate::lock::spawn_lost_watcher(held.guard.lost(), held.stop.clone(), bridge, id);
        Ok(true)
    }
}
