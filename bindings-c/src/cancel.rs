//! Cancel tokens for blocking calls.

use crate::ffi;
use etcdlock::CancellationToken;

/// A one-shot cancel token: trigger it (from any thread) to make the blocking calls it was
/// passed to fail with ETCDLOCK_E_CANCELLED. Once triggered it stays triggered.
pub struct etcdlock_cancel {
    pub(crate) token: CancellationToken,
}

/// A new, untriggered token (free it with etcdlock_cancel_free). NULL only if out of memory.
#[no_mangle]
pub extern "C" fn etcdlock_cancel_new() -> *mut etcdlock_cancel {
    ffi::value(std::ptr::null_mut(), || Ok(ffi::into_raw(etcdlock_cancel { token: CancellationToken::new() })))
}

/// Triggers the token: every call waiting with it fails with ETCDLOCK_E_CANCELLED, after
/// cleaning up (a cancelled acquire leaves no queue key). Idempotent; NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cancel_trigger(cancel: *const etcdlock_cancel) {
    ffi::void(|| {
        // SAFETY: NULL or a live token.
        if let Some(c) = unsafe { cancel.as_ref() } {
            c.token.cancel();
        }
    })
}

/// Whether the token was triggered (false for NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cancel_is_triggered(cancel: *const etcdlock_cancel) -> bool {
    ffi::value(false, || Ok(unsafe { ffi::arg(cancel, "cancel") }?.token.is_cancelled()))
}

/// Frees the token. It must not be in use by a blocking call. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cancel_free(cancel: *mut etcdlock_cancel) {
    ffi::void(|| drop(unsafe { ffi::from_raw(cancel) }))
}
