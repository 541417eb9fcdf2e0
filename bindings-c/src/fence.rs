//! Fences: an acquisition's name, token and etcd cluster in a string a database or another
//! service can check (`etcdlock_check_fence`). A lock's, a task claim's, a pool slot's and a lock
//! set member's.
//! Conversions only: `Fence` and `check_fence` are the core's.

use crate::client::etcdlock_client;
use crate::ffi::{self, invalid};
use crate::lock::etcdlock_lock;
use crate::pool::etcdlock_pool_held;
use crate::tasks::etcdlock_task;
use etcdlock::{Error, ErrorKind, Fence};
use std::ffi::CString;
use std::os::raw::{c_char, c_int};

/// Writes `fence`'s string form to `*out` (checked non-NULL) as a string for etcdlock_string_free.
pub(crate) unsafe fn write_fence(fence: Fence, out: *mut *mut c_char) -> ffi::FfiResult {
    // ASCII: a prefix, hex and decimal digits.
    let s = CString::new(fence.to_string()).map_err(|_| invalid("a fence holds a NUL"))?;
    // SAFETY: checked non-NULL by the caller.
    unsafe { *out = s.into_raw() };
    Ok(())
}

/// Writes the lock's fence (its queue key's name and token and the etcd cluster's ID) to `*out`
/// in its string form (`etcdlock-fence.v1.q.<cluster hex>.<token>.<name hex>`, NUL-terminated,
/// short enough for a request header; free it with etcdlock_string_free), for a database or
/// another service to check with etcdlock_check_fence (any binding's, or `etcdlock fence
/// check`). Reads the cluster's ID on the client's first fence. ETCDLOCK_E_NOT_HELD once the
/// lock was released or lost.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_fence(lock: *const etcdlock_lock, out: *mut *mut c_char) -> c_int {
    ffi::status(|| {
        let lock = unsafe { ffi::arg(lock, "lock") }?;
        let out = ffi::out(out, "out")?;
        let guard = lock.guard();
        if !guard.is_held() {
            return Err(Error::new(ErrorKind::NotHeld, "the lock is not held: a fence is for a holding acquisition").into());
        }
        let fence = ffi::block(async move { guard.fence().await })?;
        unsafe { write_fence(fence, out) }
    })
}

/// Writes the task's claim's fence to `*out` in its string form
/// (`etcdlock-fence.v1.q.<cluster hex>.<token>.<name hex>`, as etcdlock_lock_fence's; free it
/// with etcdlock_string_free): the claim's lock `<queue>/claim/<item's slot>` at the claim's
/// token (etcdlock_task_fencing_token), so every later claim of the item has a larger one and a
/// database's mark refuses this claim's late write once a later claim wrote. For a database or
/// another service to check with etcdlock_check_fence. ETCDLOCK_E_NOT_HELD once the task was
/// acked, nacked or its claim lost.
///
///     char *fence = NULL;
///     if (etcdlock_task_fence(task, &fence) == ETCDLOCK_OK) { ... }   // the database checks it
///     etcdlock_string_free(fence);
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_fence(task: *const etcdlock_task, out: *mut *mut c_char) -> c_int {
    ffi::status(|| {
        let t = unsafe { ffi::arg(task, "task") }?;
        let out = ffi::out(out, "out")?;
        // The core gives an ended claim's fence too; as a lock's, none once it no longer holds.
        if !t.task.is_held() {
            return Err(Error::new(ErrorKind::NotHeld, "the task was acked, nacked or its claim lost: a fence is for a holding claim").into());
        }
        let task = t.task.clone();
        let fence = ffi::block(async move { task.fence().await })?;
        unsafe { write_fence(fence, out) }
    })
}

/// Writes the fence of slot `slot` (a NUL-terminated id this holding holds: its key
/// `<pool>/slot/<id>` at the slot's token) to `*out` in its string form
/// (`etcdlock-fence.v1.k.<cluster hex>.<token>.<key hex>`; free it with etcdlock_string_free).
/// A slot the holding does not hold is ETCDLOCK_E_INVALID_ARGUMENT. As the core's, also after
/// the release (the fence then no longer checks).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_fence(held: *const etcdlock_pool_held, slot: *const c_char, out: *mut *mut c_char) -> c_int {
    ffi::status(|| {
        let h = unsafe { ffi::arg(held, "held") }?;
        let slot = unsafe { ffi::utf8(slot, "slot") }?.to_string();
        let out = ffi::out(out, "out")?;
        let guard = h.guard().clone();
        let fence = ffi::block(async move { guard.fence(&slot).await })?;
        unsafe { write_fence(fence, out) }
    })
}

/// Whether the acquisition `fence` (a fence's NUL-terminated string form, from any binding)
/// names still holds, now: one linearizable read, written to `*holds`. false for another etcd
/// cluster's fence. Advisory: it may stop holding right after (a database checking the token
/// inside its own transaction is what refuses a late write). A malformed fence is
/// ETCDLOCK_E_INVALID_ARGUMENT.
///
///     bool holds = false;
///     if (etcdlock_check_fence(client, header_value, &holds) == ETCDLOCK_OK && holds) { ... }
#[no_mangle]
pub unsafe extern "C" fn etcdlock_check_fence(client: *mut etcdlock_client, fence: *const c_char, holds: *mut bool) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let fence = Fence::parse(unsafe { ffi::utf8(fence, "fence") }?)?;
        let Some(holds) = (unsafe { holds.as_mut() }) else { return Err(invalid("holds must not be NULL")) };
        let client = c.client.clone();
        *holds = ffi::block(async move { client.check_fence(&fence).await })?;
        Ok(())
    })
}
