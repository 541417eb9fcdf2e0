//! Leader election, interoperable with etcd's Go `concurrency.Election` and `etcdctl elect`: a
//! campaign is an acquire whose held lock is the leadership (fencing token, fenced writes, lost
//! callbacks; etcdlock_election_resign or etcdlock_lock_release steps down), and observers
//! follow the leader.

use crate::cancel::etcdlock_cancel;
use crate::client::etcdlock_client;
use crate::ffi::{self, invalid};
use crate::follow::Followed;
use crate::lock::{etcdlock_lock, Acquirer};
use crate::lock_async::etcdlock_lock_cb;
use etcdlock::{Leader, Observer};
use std::os::raw::{c_char, c_int, c_void};

/// Reading the leader or observing needs no lease, but an election handle takes a TTL: any
/// valid one does.
const READ_TTL_S: i64 = 60;

/// An election's leader as etcd has it (the candidate with the lowest create revision).
/// Pointers are valid until etcdlock_leader_free.
#[repr(C)]
pub struct etcdlock_leader {
    /// The proposal: the campaign's value or the last proclamation (`value_len` bytes, not
    /// NUL-terminated; may be empty).
    pub value: *const u8,
    /// The length of `value` in bytes.
    pub value_len: usize,
    /// The leader's key, `<name>/<lease hex>` (`key_len` bytes, not NUL-terminated).
    pub key: *const u8,
    /// The length of `key` in bytes.
    pub key_len: usize,
    /// The key's create revision: the leader's fencing token, greater than every earlier
    /// leader's (etcdlock_lock_fencing_token of its leadership).
    pub revision: i64,
    /// The lease the key is bound to.
    pub lease: i64,
}

/// What etcdlock_election_leader and etcdlock_observer_next hand out: the C view first, then
/// the storage it points into.
#[repr(C)]
struct OwnedLeader {
    view: etcdlock_leader,
    data: Leader,
}

fn leader_out(leader: Option<Leader>) -> *mut etcdlock_leader {
    let Some(data) = leader else { return std::ptr::null_mut() };
    let view = etcdlock_leader {
        value: data.value.as_ptr(),
        value_len: data.value.len(),
        key: data.key.as_ptr(),
        key_len: data.key.len(),
        revision: data.revision,
        lease: data.lease,
    };
    // Moving the Vecs into the box keeps their heap buffers where the view points.
    Box::into_raw(Box::new(OwnedLeader { view, data })).cast::<etcdlock_leader>()
}

/// Campaigns in the election `name` (a NUL-terminated string, not ending in '/') proposing
/// `value` (`value_len` bytes, at most 4096; NULL with length 0 for an empty one), with a
/// lease of `ttl_s` seconds kept alive in the background, and waits to lead. On success writes
/// the leadership to `*out` as a held lock: its fencing token, fenced writes (etcdlock_put with
/// it as `if_held`), etcdlock_lock_is_held, etcdlock_lock_on_lost, and etcdlock_election_resign
/// (or etcdlock_lock_release) to step down; etcdlock_lock_free resigns if still leading.
///
/// Candidates lead in arrival order. `timeout_ms` and `cancel` are etcdlock_lock_acquire's: 0
/// tries once (ETCDLOCK_E_WOULD_BLOCK when another leads or campaigns), otherwise
/// ETCDLOCK_E_LOCK_TIMEOUT when it passes, ETCDLOCK_E_CANCELLED, and ETCDLOCK_E_LOCK_LOST as
/// soon as this candidate's lease or key is gone while it waits. On every failure the
/// candidate's key is deleted before this returns.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_election_campaign(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    value: *const u8,
    value_len: usize,
    out: *mut *mut etcdlock_lock,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let (acquirer, opts) = unsafe { campaign_request(c, (name, ttl_s, timeout_ms, cancel), value, value_len) }?;
        unsafe { crate::lock::acquire(c, acquirer, opts, out) }
    })
}

/// Starts etcdlock_election_campaign (same arguments and semantics) without blocking, under
/// the rules of etcdlock_lock_acquire_async: ETCDLOCK_OK at once and `cb` called exactly once
/// later with the leadership or the failure; bad arguments return their status here and `cb`
/// is never called. `cb` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_election_campaign_async(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    value: *const u8,
    value_len: usize,
    cb: etcdlock_lock_cb,
    user_data: *mut c_void,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        let (acquirer, opts) = unsafe { campaign_request(c, (name, ttl_s, timeout_ms, cancel), value, value_len) }?;
        crate::lock_async::start_acquire(c, acquirer, opts, cb, user_data);
        Ok(())
    })
}

unsafe fn campaign_request(
    c: &etcdlock_client,
    (name, ttl_s, timeout_ms, cancel): (*const c_char, i64, i64, *const etcdlock_cancel),
    value: *const u8,
    value_len: usize,
) -> ffi::FfiResult<(Acquirer, etcdlock::LockOptions)> {
    let value = unsafe { crate::lock::lock_value(value, value_len) }?;
    let (name, mut opts) = unsafe { crate::lock::wait_args(name, ttl_s, timeout_ms, cancel) }?;
    opts.value = value;
    Ok((Acquirer::Election(c.client.election(name, ttl_s)?), opts))
}

/// Replaces the leader's value (what etcdlock_election_leader, observers and `etcdctl elect
/// -l` see) with `value` (at most 4096 bytes; NULL with length 0 for an empty one), only while
/// `leadership` (from etcdlock_election_campaign) still leads: checked by etcd atomically with
/// the write, ETCDLOCK_E_NOT_HELD with nothing written otherwise (resigned, lost, or its key
/// deleted). On success writes the write's revision to `*revision` if it is not NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_election_proclaim(
    leadership: *mut etcdlock_lock,
    value: *const u8,
    value_len: usize,
    revision: *mut i64,
) -> c_int {
    ffi::status(|| {
        let lock = unsafe { ffi::arg(leadership, "leadership") }?;
        let value = unsafe { ffi::bytes(value, value_len, "value") }?.to_vec();
        let guard = lock.guard();
        let rev = ffi::block(async move { guard.set_value(&value).await })?;
        // SAFETY: NULL or a writable int64_t.
        if let Some(r) = unsafe { revision.as_mut() } {
            *r = rev;
        }
        Ok(())
    })
}

/// Steps down: deletes the leader's key if it is still this one's, so the next candidate
/// leads (etcdlock_lock_release on the leadership). ETCDLOCK_E_NOT_HELD if it already resigned
/// or lost. Free the handle after.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_election_resign(leadership: *mut etcdlock_lock) -> c_int {
    if leadership.is_null() {
        return ffi::status(|| Err(invalid("leadership must not be NULL")));
    }
    unsafe { crate::lock::etcdlock_lock_release(leadership) }
}

/// Reads the leader of the election `name` (whoever campaigns: this library, `etcdctl elect`,
/// Go's concurrency.Election) and writes it to `*out` (free it with etcdlock_leader_free), or
/// NULL when nobody campaigns (and returns ETCDLOCK_OK). Changes nothing. A bad name is
/// ETCDLOCK_E_INVALID_ARGUMENT before anything is sent.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_election_leader(client: *mut etcdlock_client, name: *const c_char, out: *mut *mut etcdlock_leader) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let name = unsafe { ffi::cstr(name, "name") }?.to_vec();
        let election = c.client.election(name, READ_TTL_S)?;
        let leader = ffi::block(async move { election.leader().await })?;
        unsafe { *out = leader_out(leader) };
        Ok(())
    })
}

/// Frees what etcdlock_election_leader or etcdlock_observer_next wrote. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_leader_free(leader: *mut etcdlock_leader) {
    ffi::void(|| {
        if !leader.is_null() {
            // SAFETY: from leader_out, where it is the first field of a boxed OwnedLeader.
            drop(unsafe { Box::from_raw(leader.cast::<OwnedLeader>()) });
        }
    })
}

/// Follows an election's leader: the current one first, then each change, one per
/// etcdlock_observer_next. One thread at a time should call next (concurrent calls queue up);
/// etcdlock_observer_close may be called from any thread.
pub struct etcdlock_observer(Followed<Observer>);

/// Observes the election `name` and writes the observer to `*out` (free it with
/// etcdlock_observer_free). Sends nothing until the first etcdlock_observer_next. A bad name
/// is ETCDLOCK_E_INVALID_ARGUMENT and a closed client ETCDLOCK_E_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_election_observe(client: *mut etcdlock_client, name: *const c_char, out: *mut *mut etcdlock_observer) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let name = unsafe { ffi::cstr(name, "name") }?.to_vec();
        let observer = c.client.election(name, READ_TTL_S)?.observe();
        let handle = etcdlock_observer(Followed::new(observer, "the observer"));
        unsafe { *out = ffi::into_raw(handle) };
        Ok(())
    })
}

/// Waits up to `timeout_ms` (0 = only what has arrived, ETCDLOCK_WAIT_FOREVER) for the next
/// leader state: the first call gives the current one, each later call the next change (a new
/// leader, a proclamation, or no leader). Writes the leader to `*out` (free it with
/// etcdlock_leader_free), or NULL for "no leader", and returns ETCDLOCK_OK. Changes that come
/// faster than they are read may be merged into the latest state, which is never skipped.
/// ETCDLOCK_E_TIMEOUT when nothing changed in time (the observer goes on; nothing is lost);
/// ETCDLOCK_E_CLOSED once the client or the observer (etcdlock_observer_close) is closed.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_observer_next(observer: *mut etcdlock_observer, timeout_ms: i64, out: *mut *mut etcdlock_leader) -> c_int {
    ffi::status(|| {
        let o = unsafe { ffi::arg(observer, "observer") }?;
        let out = ffi::out(out, "out")?;
        let leader = o.0.next(ffi::wait(timeout_ms)?)?;
        unsafe { *out = leader_out(leader) };
        Ok(())
    })
}

/// Ends the observer: a etcdlock_observer_next waiting on another thread returns
/// ETCDLOCK_E_CLOSED, and so does every later one. Idempotent; NULL is a no-op. Free it after.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_observer_close(observer: *mut etcdlock_observer) {
    ffi::void(|| {
        // SAFETY: NULL or a live observer.
        if let Some(o) = unsafe { observer.as_ref() } {
            o.0.close();
        }
    })
}

/// Stops the observer and frees it. No other thread may be inside a call on it. NULL is a
/// no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_observer_free(observer: *mut etcdlock_observer) {
    ffi::void(|| drop(unsafe { ffi::from_raw(observer) }))
}
