//! Lock sets: several lock names taken together, all or none, with one fencing token. A set
//! handle (open, acquire with timeout and cancel, an `_async` acquire, free); the holding is in
//! `lockset_held.rs`. Conversions only: the set is the core's `LockSet`.

use crate::cancel::etcdlock_cancel;
use crate::client::etcdlock_client;
use crate::ffi::{self, invalid};
use crate::lock_async::Callbacks;
use crate::lockset_held::etcdlock_lock_set_held;
use crate::status::ETCDLOCK_OK;
use etcdlock::{Client, ErrorKind, LockOptions, LockSet, SetMember};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

/// The most names a lock set may have (its enqueue is one etcd Txn of a compare and a put per
/// name, and etcd refuses more than 128 of either).
pub const ETCDLOCK_MAX_LOCK_SET: usize = 64;

/// A lock set member's mode: alone, as etcdlock_lock_acquire takes a name (0, so that a
/// zero-initialised member is exclusive).
pub const ETCDLOCK_SET_EXCLUSIVE: c_int = 0;
/// A lock set member's mode: a read-write lock's read (shared with other readers), as
/// etcdlock_rwlock_read.
pub const ETCDLOCK_SET_READ: c_int = 1;
/// A lock set member's mode: a read-write lock's write, as etcdlock_rwlock_write.
pub const ETCDLOCK_SET_WRITE: c_int = 2;
/// A lock set member's mode: one of `permits` permits of a semaphore, as
/// etcdlock_semaphore_acquire.
pub const ETCDLOCK_SET_PERMIT: c_int = 3;

/// One name of a lock set and how the set holds it (etcdlock_lock_set_open).
///
///     etcdlock_set_member members[] = {
///         {.name = "cfg", .mode = ETCDLOCK_SET_READ},
///         {.name = "jobs/a"},                  // mode 0: ETCDLOCK_SET_EXCLUSIVE
///         {.name = "gpus", .mode = ETCDLOCK_SET_PERMIT, .permits = 4},
///     };
#[repr(C)]
pub struct etcdlock_set_member {
    /// The lock name, NUL-terminated, not ending in '/'.
    pub name: *const c_char,
    /// ETCDLOCK_SET_EXCLUSIVE, _READ, _WRITE or _PERMIT.
    pub mode: c_int,
    /// ETCDLOCK_SET_PERMIT: the semaphore's number of permits (1 to ETCDLOCK_MAX_PERMITS, the
    /// same for every participant); 0 for the other modes.
    pub permits: u32,
}

/// A handle on a lock set (etcdlock_lock_set_open). Any number of threads may acquire it at
/// once, each getting its own holding; it must not be freed while another thread is inside a
/// call on it. Its holdings outlive it.
pub struct etcdlock_lock_set {
    set: Arc<LockSet>,
    client: Client,
    callbacks: Arc<Callbacks>,
}

/// Called once with the outcome of etcdlock_lock_set_acquire_async: `status` ETCDLOCK_OK and the
/// holding (the callee owns it: etcdlock_lock_set_held_free), or an error status and NULL (the
/// message is in etcdlock_last_error on this thread, during the call). Runs on a library thread
/// under the rules of etcdlock_lock_cb: return quickly; blocking calls made from it return
/// ETCDLOCK_E_WRONG_THREAD.
pub type etcdlock_lock_set_held_cb = Option<unsafe extern "C" fn(user_data: *mut c_void, status: c_int, held: *mut etcdlock_lock_set_held)>;

/// Makes a handle on the lock set `members` (`n_members` of them, 1 to ETCDLOCK_MAX_LOCK_SET,
/// no name twice, none under another's queue: not both "a" and "a/b"), taken together on the
/// client's lease of `ttl_s` seconds (the one its locks of that TTL share). Sends nothing.
///
/// An acquire puts a key in every member's queue in one etcd transaction, so the keys share one
/// create revision: the set's fencing token. Each key then waits only for older keys, by its
/// own queue's rule, so sets naming the same names in any order never deadlock (also beside
/// etcdctl lock and lone locks of those names), and the set holds every name or none.
///
/// No members, more than ETCDLOCK_MAX_LOCK_SET, a bad or repeated name, a name under another's
/// queue, an unknown mode, permits out of bounds (or not 0 for a mode other than PERMIT), or
/// `ttl_s` <= 0 is ETCDLOCK_E_INVALID_ARGUMENT; a closed client is ETCDLOCK_E_CLOSED. On
/// success writes the handle to `*out` (free it with etcdlock_lock_set_free).
///
///     etcdlock_set_member accounts[] = {{.name = "acct/1"}, {.name = "acct/2"}};
///     etcdlock_lock_set *set = NULL;
///     etcdlock_lock_set_open(client, accounts, 2, 10, &set);
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_open(
    client: *mut etcdlock_client,
    members: *const etcdlock_set_member,
    n_members: usize,
    ttl_s: i64,
    out: *mut *mut etcdlock_lock_set,
) -> c_int {
    // The header's limit is the core's.
    const _: () = assert!(ETCDLOCK_MAX_LOCK_SET == etcdlock::MAX_LOCK_SET);
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let members = unsafe { members_of(members, n_members) }?;
        if ttl_s <= 0 {
            return Err(invalid(format!("ttl_s must be a positive number of seconds, got {ttl_s}")));
        }
        closed(&c.client)?;
        let set = c.client.lock_set(members, ttl_s)?;
        unsafe { *out = ffi::into_raw(etcdlock_lock_set { set: Arc::new(set), client: c.client.clone(), callbacks: c.callbacks.clone() }) };
        Ok(())
    })
}

/// `n` members at `p` (NULL only with 0), converted; the core checks the rest.
unsafe fn members_of(p: *const etcdlock_set_member, n: usize) -> ffi::FfiResult<Vec<SetMember>> {
    if n == 0 || n > ETCDLOCK_MAX_LOCK_SET {
        return Err(invalid(format!("a lock set has 1 to {ETCDLOCK_MAX_LOCK_SET} names, got {n}")));
    }
    if p.is_null() {
        return Err(invalid("members is NULL with a non-zero count"));
    }
    // SAFETY: the caller gives `n` readable members at `p`.
    let raw = unsafe { std::slice::from_raw_parts(p, n) };
    raw.iter()
        .enumerate()
        .map(|(i, m)| {
            let name = unsafe { ffi::cstr(m.name, &format!("members[{i}].name")) }?.to_vec();
            if m.mode != ETCDLOCK_SET_PERMIT && m.permits != 0 {
                return Err(invalid(format!("members[{i}].permits must be 0 unless its mode is ETCDLOCK_SET_PERMIT, got {}", m.permits)));
            }
            Ok(match m.mode {
                ETCDLOCK_SET_EXCLUSIVE => SetMember::exclusive(name),
                ETCDLOCK_SET_READ => SetMember::read(name),
                ETCDLOCK_SET_WRITE => SetMember::write(name),
                ETCDLOCK_SET_PERMIT => SetMember::permit(name, m.permits),
                other => return Err(invalid(format!("members[{i}].mode must be an ETCDLOCK_SET_* mode, got {other}"))),
            })
        })
        .collect()
}

/// Takes every member of the set, and writes the holding to `*out`.
///
/// `timeout_ms` (one limit for the whole set): 0 tries once (ETCDLOCK_E_WOULD_BLOCK unless
/// every member can be held at once), ETCDLOCK_WAIT_FOREVER waits without limit, otherwise
/// ETCDLOCK_E_LOCK_TIMEOUT when it passes. `cancel` (nullable): etcdlock_cancel_trigger makes
/// the wait fail with ETCDLOCK_E_CANCELLED. On every failure no member's key is left in any
/// queue when this returns, and no member was ever held alone.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_acquire(
    set: *mut etcdlock_lock_set,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    out: *mut *mut etcdlock_lock_set_held,
) -> c_int {
    ffi::status(|| {
        let s = unsafe { ffi::arg(set, "set") }?;
        let out = ffi::out(out, "out")?;
        let opts = unsafe { options(timeout_ms, cancel) }?;
        closed(&s.client)?;
        let ls = s.set.clone();
        let guard = ffi::block(async move { ls.lock_with(opts).await })?;
        unsafe { *out = ffi::into_raw(etcdlock_lock_set_held::new(guard, s.client.clone())) };
        Ok(())
    })
}

/// Starts etcdlock_lock_set_acquire (same arguments and semantics) without blocking, under the
/// rules of etcdlock_lock_acquire_async: returns ETCDLOCK_OK at once and calls `cb` exactly once
/// later with the holding or the failure (also ETCDLOCK_E_CLOSED when the client is freed or
/// etcdlock_shutdown runs first, and before etcdlock_client_free returns). A triggered `cancel`
/// makes it ETCDLOCK_E_CANCELLED, leaving no key. Bad arguments return their status here, and
/// then `cb` is never called. `cb` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_acquire_async(
    set: *mut etcdlock_lock_set,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    cb: etcdlock_lock_set_held_cb,
    user_data: *mut c_void,
) -> c_int {
    ffi::status(|| {
        let s = unsafe { ffi::arg(set, "set") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        let opts = unsafe { options(timeout_ms, cancel) }?;
        let (ls, client) = (s.set.clone(), s.client.clone());
        crate::lock_async::spawn(&s.callbacks, user_data, async move { ls.lock_with(opts).await }, move |user_data, outcome| {
            let (status, held) = match outcome {
                Ok(guard) => (ETCDLOCK_OK, ffi::into_raw(etcdlock_lock_set_held::new(guard, client))),
                Err(f) => (crate::lock_async::failed(&f), std::ptr::null_mut()),
            };
            // SAFETY: the caller registered a valid function for this user_data.
            unsafe { cb(user_data, status, held) };
        });
        Ok(())
    })
}

/// CLOSED for a closed client, before anything would start the runtime again (after
/// etcdlock_shutdown).
pub(crate) fn closed(client: &Client) -> ffi::FfiResult {
    if client.is_closed() {
        return Err(etcdlock::Error::new(ErrorKind::Closed, "the client is closed").into());
    }
    Ok(())
}

/// How an acquire waits, checked.
unsafe fn options(timeout_ms: i64, cancel: *const etcdlock_cancel) -> ffi::FfiResult<LockOptions> {
    let timeout = ffi::wait(timeout_ms)?;
    // SAFETY: NULL means no token; otherwise a live token from etcdlock_cancel_new.
    let cancel = unsafe { cancel.as_ref() }.map(|t| t.token.clone());
    Ok(LockOptions { timeout, cancel, ..Default::default() })
}

/// The number of members of the set. 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_len(set: *const etcdlock_lock_set) -> usize {
    ffi::value(0, || Ok(unsafe { ffi::arg(set, "set") }?.set.names().len()))
}

/// Frees the set handle (its holdings live on: they are handles of their own). No other thread
/// may be inside a call on it. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_free(set: *mut etcdlock_lock_set) {
    ffi::void(|| drop(unsafe { ffi::from_raw(set) }))
}
