//! Leases: grant (kept alive in the background), accessors, the lost callback, revoke, free.

use crate::boundary::{self, entry, invalid};
use crate::callback::LostWatcher;
use crate::client::ClientHandle;
use etcdlock::Lease;
use jni::objects::{JClass, JObject};
use jni::sys::{jboolean, jlong, jstring};
use jni::JNIEnv;

pub(crate) struct LeaseHandle {
    pub(crate) lease: Lease,
    watcher: LostWatcher,
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_leaseGrant<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, client: jlong, ttl_s: jlong) -> jlong {
    entry(&mut env, 0, |_| {
        let client = boundary::handle::<ClientHandle>(client, "client")?.client.clone();
        let lease = boundary::block(async move { client.lease(ttl_s).await })?;
        Ok(boundary::into_handle(LeaseHandle { lease, watcher: LostWatcher::default() }))
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_leaseId<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| Ok(boundary::handle::<LeaseHandle>(h, "lease")?.lease.id()))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_leaseTtl<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| Ok(boundary::handle::<LeaseHandle>(h, "lease")?.lease.ttl()))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_leaseIsAlive<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jboolean {
    entry(&mut env, 0, |_| Ok(boundary::handle::<LeaseHandle>(h, "lease")?.lease.is_alive() as jboolean))
}

/// Why the lease was lost ("expired", "revoked", "key_deleted", "closed"), or null.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_leaseLostReason<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| match boundary::handle::<LeaseHandle>(h, "lease")?.lease.lost_reason() {
        None => Ok(std::ptr::null_mut()),
        Some(r) => Ok(env.new_string(r.as_str())?.into_raw()),
    })
}

/// Calls `sink.lost(reason)` (on a runtime thread) once the lease is lost.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_leaseOnLost<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, sink: JObject<'l>) {
    entry(&mut env, (), |env| {
        let lease = boundary::handle::<LeaseHandle>(h, "lease")?;
        if sink.is_null() {
            return Err(invalid("sink must not be null"));
        }
        lease.watcher.arm(lease.lease.lost(), env.new_global_ref(&sink)?);
        Ok(())
    })
}

/// Revokes the lease, deleting the keys attached to it. Idempotent.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_leaseRevoke<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let lease = boundary::handle::<LeaseHandle>(h, "lease")?.lease.clone();
        boundary::block(async move { lease.revoke().await })
    })
}

/// Revokes (unless its client is closed) and frees the lease.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_leaseFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let Some(handle) = boundary::take_handle::<LeaseHandle>(h) else { return Ok(()) };
        handle.watcher.disarm();
        if boundary::may_block() && !handle.lease.client().is_closed() {
            let lease = handle.lease.clone();
            let _ = etcdlock::runtime::block_on(async move { lease.revoke().await });
        }
        Ok(())
    })
}
