//! A held lock set (etcdlock_lock_set_acquire): its token, names and keys, writes fenced by
//! every member, a member's fence, the lost callback, release (one Txn) and free. Conversions
//! only: the holding is the core's `LockSetGuard`.

use crate::callback::{self, etcdlock_lost_cb, Slot};
use crate::ffi::{self, invalid};
use crate::lockset::closed;
use crate::tasks::etcdlock_op;
use etcdlock::{Client, Error, ErrorKind, LockSetGuard};
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

/// Every member of a lock set, held together (etcdlock_lock_set_acquire), until
/// etcdlock_lock_set_held_release or etcdlock_lock_set_held_free, or until a member is lost. Its
/// accessors may be called from any thread; it must not be freed while another thread uses it.
pub struct etcdlock_lock_set_held {
    guard: Arc<LockSetGuard>,
    /// The member names, NUL-terminated (read through `name_ptrs`).
    _names: Vec<CString>,
    name_ptrs: Vec<*const c_char>,
    client: Client,
    lost: Arc<Slot>,
}

impl etcdlock_lock_set_held {
    pub(crate) fn new(guard: LockSetGuard, client: Client) -> etcdlock_lock_set_held {
        // Names came from C strings: they hold no NUL (one would be cut there).
        let names: Vec<CString> = guard.names().iter().map(|n| CString::new(n.split(|b| *b == 0).next().unwrap_or_default()).unwrap_or_default()).collect();
        let name_ptrs = names.iter().map(|s| s.as_ptr()).collect();
        etcdlock_lock_set_held { guard: Arc::new(guard), _names: names, name_ptrs, client, lost: Slot::new() }
    }
}

unsafe fn held<'a>(p: *const etcdlock_lock_set_held) -> ffi::FfiResult<&'a etcdlock_lock_set_held> {
    unsafe { ffi::arg(p, "held") }
}

/// The set's fencing token: the create revision every member's key shares, larger than every
/// earlier holder's token of each member name. 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_fencing_token(held: *const etcdlock_lock_set_held) -> i64 {
    ffi::value(0, || Ok(unsafe { self::held(held) }?.guard.fencing_token()))
}

/// The member names in the order the set was given them: `*n` NUL-terminated strings (`n` may
/// be NULL), valid until the holding is freed. NULL for a NULL holding.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_names(held: *const etcdlock_lock_set_held, n: *mut usize) -> *const *const c_char {
    ffi::value(std::ptr::null(), || {
        let h = unsafe { self::held(held) }?;
        if let Some(n) = unsafe { n.as_mut() } {
            *n = h.name_ptrs.len();
        }
        Ok(h.name_ptrs.as_ptr())
    })
}

/// Member `index`'s queue key in etcd (`<name>/<lease hex>[-n]`, created at the set's token),
/// `*len` bytes, not NUL-terminated; valid until the holding is freed. NULL for a NULL holding
/// or an index past the last member (`len` may be NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_key(held: *const etcdlock_lock_set_held, index: usize, len: *mut usize) -> *const u8 {
    ffi::value(std::ptr::null(), || {
        let h = unsafe { self::held(held) }?;
        let Some(m) = h.guard.members().get(index) else {
            return Err(invalid(format!("index {index} is past the set's {} members", h.guard.members().len())));
        };
        if let Some(len) = unsafe { len.as_mut() } {
            *len = m.key().len();
        }
        Ok(m.key().as_ptr())
    })
}

/// The ID of the lease every member's key is on (shared by the client's locks of the same
/// TTL). 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_lease_id(held: *const etcdlock_lock_set_held) -> i64 {
    ffi::value(0, || Ok(unsafe { self::held(held) }?.guard.lease_id()))
}

/// Cheap local check: not released, and no member known lost. false for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_is_held(held: *const etcdlock_lock_set_held) -> bool {
    ffi::value(false, || Ok(unsafe { self::held(held) }?.guard.is_held()))
}

/// Fills `*out` with the set's health (held, lost or released; `ok` while held and not in
/// doubt), as etcdlock_lock_health. ETCDLOCK_E_INVALID_ARGUMENT for a NULL handle or `out`.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_health(held: *const etcdlock_lock_set_held, out: *mut crate::health::etcdlock_health) -> c_int {
    crate::health::fill(out, || Ok(unsafe { self::held(held) }?.guard.health()))
}

/// Why the set was lost (the first member lost: an ETCDLOCK_LOST_* reason), or 0 if it was not
/// (or NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_lost_reason(held: *const etcdlock_lock_set_held) -> c_int {
    ffi::value(0, || Ok(unsafe { self::held(held) }?.guard.lost_reason().map_or(0, callback::reason_code)))
}

/// Registers `cb`, called once with `user_data` and an ETCDLOCK_LOST_* reason when any member is
/// lost (not when the set is released), under the rules of etcdlock_lock_on_lost. No call
/// happens after etcdlock_lock_set_held_release or etcdlock_lock_set_held_free has returned.
/// ETCDLOCK_E_NOT_HELD once the set was released.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_on_lost(held: *mut etcdlock_lock_set_held, cb: etcdlock_lost_cb, user_data: *mut c_void) -> c_int {
    ffi::status(|| {
        let h = unsafe { self::held(held) }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        // Released, lost or not (a released set's members may see their own keys' deletes).
        if h.guard.is_released() {
            return Err(Error::new(ErrorKind::NotHeld, "the lock set was released").into());
        }
        h.lost.arm(cb, user_data, h.guard.lost());
        Ok(())
    })
}

/// Writes `value` at `key` only while every member is held, checked by etcd atomically with the
/// write (ETCDLOCK_E_NOT_HELD otherwise, nothing written; the members found gone are lost, and
/// so is the set). A key under a member's queue `<name>/` is ETCDLOCK_E_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_put(held: *mut etcdlock_lock_set_held, key: *const u8, key_len: usize, value: *const u8, value_len: usize) -> c_int {
    ffi::status(|| {
        let h = unsafe { self::held(held) }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        let value = unsafe { ffi::bytes(value, value_len, "value") }?.to_vec();
        closed(&h.client)?;
        let guard = h.guard.clone();
        ffi::block(async move { guard.put(&key, &value).await.map(drop) })
    })
}

/// Deletes `key` only while every member is held (ETCDLOCK_E_NOT_HELD otherwise, nothing
/// deleted). A key under a member's queue `<name>/` is ETCDLOCK_E_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_delete(held: *mut etcdlock_lock_set_held, key: *const u8, key_len: usize) -> c_int {
    ffi::status(|| {
        let h = unsafe { self::held(held) }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        closed(&h.client)?;
        let guard = h.guard.clone();
        ffi::block(async move { guard.delete(&key).await.map(drop) })
    })
}

/// Applies `n_ops` writes (`ops`, 1 to 127 of them) in one transaction, only while every member
/// is held (ETCDLOCK_E_NOT_HELD otherwise, nothing written). `revision` (nullable): on success,
/// the transaction's etcd revision. No ops, a key under a member's queue, an empty key or an
/// unknown kind is ETCDLOCK_E_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_txn(held: *mut etcdlock_lock_set_held, ops: *const etcdlock_op, n_ops: usize, revision: *mut i64) -> c_int {
    ffi::status(|| {
        let h = unsafe { self::held(held) }?;
        let list = unsafe { crate::tasks::ops_of(ops, n_ops) }?;
        closed(&h.client)?;
        let guard = h.guard.clone();
        let rev = ffi::block(async move { guard.txn(&list).await })?;
        if let Some(out) = unsafe { revision.as_mut() } {
            *out = rev;
        }
        Ok(())
    })
}

/// Writes member `name`'s fence (its queue key at the set's token, for a database or another
/// service to check with etcdlock_check_fence) to `*out` in its string form
/// (`etcdlock-fence.v1.q.<cluster hex>.<token>.<name hex>`, NUL-terminated; free it with
/// etcdlock_string_free). Reads the cluster's ID on the client's first fence.
/// ETCDLOCK_E_NOT_HELD once the set was released or lost; ETCDLOCK_E_INVALID_ARGUMENT for a name
/// that is not a member.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_fence(held: *const etcdlock_lock_set_held, name: *const c_char, out: *mut *mut c_char) -> c_int {
    ffi::status(|| {
        let h = unsafe { self::held(held) }?;
        let name = unsafe { ffi::cstr(name, "name") }?.to_vec();
        let out = ffi::out(out, "out")?;
        if !h.guard.is_held() {
            return Err(Error::new(ErrorKind::NotHeld, "the lock set is not held: a fence is for a holding acquisition").into());
        }
        closed(&h.client)?;
        let guard = h.guard.clone();
        let fence = ffi::block(async move { guard.fence(&name).await })?;
        unsafe { crate::fence::write_fence(fence, out) }
    })
}

/// Releases every member in one transaction (each key deleted only if it is still this set's),
/// so the set is never released in part. ETCDLOCK_E_NOT_HELD if it was already released or a
/// member was lost (every key still the set's is deleted either way). Disarms the lost callback.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_release(held: *mut etcdlock_lock_set_held) -> c_int {
    ffi::status(|| {
        let h = unsafe { self::held(held) }?;
        let guard = h.guard.clone();
        let r = closed(&h.client).and_then(|()| ffi::block(async move { guard.release().await }));
        if !matches!(&r, Err(f) if f.status == crate::status::ETCDLOCK_E_WRONG_THREAD) {
            h.lost.disarm();
        }
        r
    })
}

/// Frees the holding, releasing it first if still held (in the background when called from a
/// library thread, or when a member was lost: the keys still the set's are deleted). No lost
/// callback runs after this returns. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_set_held_free(held: *mut etcdlock_lock_set_held) {
    ffi::void(|| {
        let Some(h) = (unsafe { ffi::from_raw(held) }) else { return };
        h.lost.disarm();
        if h.guard.is_held() && ffi::may_block() && !h.client.is_closed() {
            let guard = h.guard.clone();
            let _ = ffi::block(async move { guard.release().await });
        }
        // Otherwise dropping the guard deletes each member's key still its own, in the background.
    })
}
