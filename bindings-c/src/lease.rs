//! Leases: grant (kept alive in the background), accessors, lost callback, revoke, free.

use crate::callback::{self, etcdlock_lost_cb, Slot};
use crate::client::etcdlock_client;
use crate::ffi::{self, invalid};
use etcdlock::Lease;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

/// A lease kept alive in the background until revoked, freed, or its client is freed.
pub struct etcdlock_lease {
    pub(crate) lease: Lease,
    lost: Arc<Slot>,
}

/// Grants a lease of `ttl_s` seconds (the server may raise it to its minimum) and keeps it
/// alive in the background. On success writes it to `*out`.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lease_grant(client: *mut etcdlock_client, ttl_s: i64, out: *mut *mut etcdlock_lease) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let client = c.client.clone();
        let lease = ffi::block(async move { client.lease(ttl_s).await })?;
        unsafe { *out = ffi::into_raw(etcdlock_lease { lease, lost: Slot::new() }) };
        Ok(())
    })
}

/// The lease ID (what `etcdctl lease` shows, in hex). 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lease_id(lease: *const etcdlock_lease) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(lease, "lease") }?.lease.id()))
}

/// The TTL the server granted, in seconds. 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lease_ttl(lease: *const etcdlock_lease) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(lease, "lease") }?.lease.ttl()))
}

/// Cheap local check: not revoked or lost, and the conservative local deadline has not
/// passed. false for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lease_is_alive(lease: *const etcdlock_lease) -> bool {
    ffi::value(false, || Ok(unsafe { ffi::arg(lease, "lease") }?.lease.is_alive()))
}

/// Milliseconds left before the lease's local deadline (0 once lost or for NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lease_remaining_ms(lease: *const etcdlock_lease) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(lease, "lease") }?.lease.remaining().as_millis() as i64))
}

/// Why the lease was lost (an ETCDLOCK_LOST_* reason), or 0 if it was not (or NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lease_lost_reason(lease: *const etcdlock_lease) -> c_int {
    ffi::value(0, || Ok(unsafe { ffi::arg(lease, "lease") }?.lease.lost_reason().map_or(0, callback::reason_code)))
}

/// Registers `cb`, called once with `user_data` and an ETCDLOCK_LOST_* reason when the lease
/// is lost (revoked, expired, or its client closed), on a library thread. A second
/// registration replaces the first. No call happens after etcdlock_lease_free returns.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lease_on_lost(lease: *mut etcdlock_lease, cb: etcdlock_lost_cb, user_data: *mut c_void) -> c_int {
    ffi::status(|| {
        let lease = unsafe { ffi::arg(lease, "lease") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        lease.lost.arm(cb, user_data, lease.lease.lost());
        Ok(())
    })
}

/// Revokes the lease, deleting every key attached to it. Idempotent.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lease_revoke(lease: *mut etcdlock_lease) -> c_int {
    ffi::status(|| {
        let lease = unsafe { ffi::arg(lease, "lease") }?.lease.clone();
        ffi::block(async move { lease.revoke().await })
    })
}

/// Revokes the lease (waiting for it, unless called from a library thread) and frees it. No
/// lost callback runs after this returns. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lease_free(lease: *mut etcdlock_lease) {
    ffi::void(|| {
        let Some(handle) = (unsafe { ffi::from_raw(lease) }) else { return };
        handle.lost.disarm();
        if ffi::may_block() && !handle.lease.client().is_closed() {
            let lease = handle.lease.clone();
            let _ = etcdlock::runtime::block_on(async move { lease.revoke().await });
        }
        // Otherwise dropping the last handle revokes it in the background.
    })
}
