//! Locks: the acquire (started on the runtime, its outcome delivered to a Java sink, cancelled
//! by a token), the held lock's accessors, the fenced write, release and free.

use crate::acquirer::Acquirer;
use crate::boundary::{self, entry, invalid};
use crate::callback::{self, LostWatcher};
use crate::client::ClientHandle;
use etcdlock::{CancellationToken, Client, Error, ErrorKind, LockGuard, LockOptions};
use jni::objects::{JByteArray, JClass, JObject, JString, JValue};
use jni::sys::{jboolean, jbyteArray, jint, jlong, jstring};
use jni::JNIEnv;
use std::sync::Arc;

pub(crate) struct GuardHandle {
    guard: Arc<LockGuard>,
    client: Client,
    watcher: LostWatcher,
}

/// Starts acquiring the lock `name` of `kind` (0 mutex, 1 `count` of a semaphore's `permits`,
/// 2 read, 3 write, 4 an election's leadership; lease TTL `ttl_s`, wait `timeout_ms`: -1
/// forever, 0 try once) and returns at once a cancel token handle (free it with cancelFree). The outcome goes
/// to `sink.done(long guard, String kind, String message)` exactly once, on a runtime thread:
/// a guard handle and two nulls, or 0 and the error. Bad arguments throw here (nothing sent, no
/// `done`). Cancelling fails the wait with CANCELLED and removes the queue key; an acquire that
/// succeeds after the cancel releases the lock and is CANCELLED too (core's rule).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_io_etcdlock_Native_lockAcquire<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    client: jlong,
    name: JString<'l>,
    ttl_s: jlong,
    timeout_ms: jlong,
    value: JByteArray<'l>,
    kind: jint,
    permits: jlong,
    count: jint,
    sink: JObject<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let c = boundary::handle::<ClientHandle>(client, "client")?;
        let name = boundary::string(env, &name, "name")?;
        let timeout = boundary::wait(timeout_ms)?;
        let value = boundary::bytes(env, &value)?;
        if ttl_s <= 0 {
            return Err(invalid(format!("ttl must be a positive number of seconds, got {ttl_s}")));
        }
        etcdlock::check_lock_value(&value)?;
        if sink.is_null() {
            return Err(invalid("sink must not be null"));
        }
        // Checks the name, the TTL's upper bound, the permits and that the client is open;
        // sends nothing.
        let acquirer = Acquirer::new(&c.client, name, ttl_s, kind, permits, count)?;
        let sink = env.new_global_ref(&sink)?;
        let token = CancellationToken::new();
        let opts = LockOptions { timeout, cancel: Some(token.clone()), value };
        let client = c.client.clone();
        etcdlock::runtime::linger::spawn_call(async move { acquirer.lock_with(opts).await }, move |outcome| {
            let (guard, error) = match outcome {
                Ok(g) => (boundary::into_handle(GuardHandle { guard: Arc::new(g), client, watcher: LostWatcher::default() }), None),
                Err(e) => (0, Some(e)),
            };
            let delivered = callback::call(|env| {
                let (kind, message) = match &error {
                    None => (JObject::null(), JObject::null()),
                    Some(e) => (env.new_string(e.kind().code())?.into(), env.new_string(e.message())?.into()),
                };
                env.call_method(&sink, "done", "(JLjava/lang/String;Ljava/lang/String;)V", &[JValue::Long(guard), JValue::Object(&kind), JValue::Object(&message)])?;
                Ok(())
            });
            if !delivered {
                // Nobody owns it: dropping the guard deletes its key in the background.
                drop(boundary::take_handle::<GuardHandle>(guard));
            }
        });
        Ok(boundary::into_handle(token))
    })
}

/// Checks what `lockAcquire` would (name, TTL, permits and count, an open client) without sending
/// anything.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockCheck<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    client: jlong,
    name: JString<'l>,
    ttl_s: jlong,
    kind: jint,
    permits: jlong,
    count: jint,
) {
    entry(&mut env, (), |env| {
        let c = boundary::handle::<ClientHandle>(client, "client")?;
        let name = boundary::string(env, &name, "name")?;
        if ttl_s <= 0 {
            return Err(invalid(format!("ttl must be a positive number of seconds, got {ttl_s}")));
        }
        Acquirer::new(&c.client, name, ttl_s, kind, permits, count)?;
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_cancel<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        boundary::handle::<CancellationToken>(h, "acquire")?.cancel();
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_cancelFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        drop(boundary::take_handle::<CancellationToken>(h));
        Ok(())
    })
}

fn guard<'a>(h: jlong) -> boundary::JResult<&'a GuardHandle> {
    boundary::handle::<GuardHandle>(h, "lock guard")
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardFencingToken<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| Ok(guard(h)?.guard.fencing_token()))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardLeaseId<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| Ok(guard(h)?.guard.lease_id()))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardIsHeld<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jboolean {
    entry(&mut env, 0, |_| Ok(guard(h)?.guard.is_held() as jboolean))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardIsReleased<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jboolean {
    entry(&mut env, 0, |_| Ok(guard(h)?.guard.is_released() as jboolean))
}

/// The queue key in etcd, `<name>/<lease hex>[-n]`.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardKey<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| Ok(env.byte_array_from_slice(guard(h)?.guard.key())?.into_raw()))
}

/// Why the lock was lost, or null.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardLostReason<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| match guard(h)?.guard.lost_reason() {
        None => Ok(std::ptr::null_mut()),
        Some(r) => Ok(env.new_string(r.as_str())?.into_raw()),
    })
}

/// One call's view of the hold (core `Health`), as an `io.etcdlock.Health`.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardHealth<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jni::sys::jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let health = guard(h)?.guard.health();
        crate::health::to_java(env, health)
    })
}

/// The acquisition's fence in its string form (`etcdlock-fence.v1.q.<cluster hex>.<token>.<name
/// hex>`; the first fence of a client reads the cluster's ID). NOT_HELD once released.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardFence<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let g = guard(h)?.guard.clone();
        if g.is_released() {
            return Err(Error::new(ErrorKind::NotHeld, "the lock was released: a fence is for a holding acquisition").into());
        }
        let fence = boundary::block(async move { g.fence().await })?;
        Ok(env.new_string(fence.to_string())?.into_raw())
    })
}

/// Whether the acquisition the fence (its string form) names still holds, now: one linearizable
/// read. False for another etcd cluster's fence; a malformed one is INVALID_ARGUMENT.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_clientCheckFence<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, client: jlong, fence: JString<'l>) -> jboolean {
    entry(&mut env, 0, |env| {
        let c = boundary::handle::<ClientHandle>(client, "client")?.client.clone();
        let fence = etcdlock::Fence::parse(&boundary::string(env, &fence, "fence")?)?;
        Ok(boundary::block(async move { c.check_fence(&fence).await })? as jboolean)
    })
}

/// Writes `value` at `key` only while the lock is held (checked by etcd in the same
/// transaction); NOT_HELD otherwise, nothing written. The revision written.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardPut<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    key: JByteArray<'l>,
    value: JByteArray<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let g = guard(h)?.guard.clone();
        let (key, value) = (boundary::bytes(env, &key)?, boundary::bytes(env, &value)?);
        boundary::block(async move { g.put(&key, &value).await })
    })
}

/// Replaces the value in the guard's queue key (an election's proclamation) only while held:
/// NOT_HELD otherwise, nothing written. The revision written.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardSetValue<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, value: JByteArray<'l>) -> jlong {
    entry(&mut env, 0, |env| {
        let g = guard(h)?.guard.clone();
        let value = boundary::bytes(env, &value)?;
        boundary::block(async move { g.set_value(&value).await })
    })
}

/// Calls `sink.lost(reason)` (on a runtime thread) once the lock is lost, not when released.
/// NOT_HELD once released.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardOnLost<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, sink: JObject<'l>) {
    entry(&mut env, (), |env| {
        let g = guard(h)?;
        if sink.is_null() {
            return Err(invalid("sink must not be null"));
        }
        if g.guard.is_released() && g.guard.lost_reason().is_none() {
            return Err(Error::new(ErrorKind::NotHeld, "the lock was released").into());
        }
        g.watcher.arm(g.guard.lost(), env.new_global_ref(&sink)?);
        Ok(())
    })
}

/// Releases the lock (a fenced delete: never a later holder's key). NOT_HELD if it was already
/// released or lost. Disarms the lost callback.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardRelease<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let g = guard(h)?;
        g.watcher.disarm();
        let held = g.guard.clone();
        boundary::block(async move { held.release().await })
    })
}

/// Starts releasing the lock as `guardRelease` does (fenced delete, lost callback disarmed here)
/// and returns at once; the outcome goes to `sink.done(String kind, String message)` exactly once,
/// on a runtime thread (two nulls, or the error): the same path as `lockAcquire`'s outcome
/// (`spawn_call`: CLOSED if the runtime shuts down first, INTERNAL if it panicked). A freed
/// guard or a null sink throws here (nothing sent, no `done`). The task holds its own reference
/// to the lock, so freeing the handle meanwhile does not end it.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardReleaseAsync<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, sink: JObject<'l>) {
    entry(&mut env, (), |env| {
        let g = guard(h)?;
        if sink.is_null() {
            return Err(invalid("sink must not be null"));
        }
        let sink = env.new_global_ref(&sink)?;
        g.watcher.disarm();
        let held = g.guard.clone();
        etcdlock::runtime::linger::spawn_call(async move { held.release().await }, move |outcome| {
            callback::call(|env| {
                let (kind, message) = match &outcome {
                    Ok(()) => (JObject::null(), JObject::null()),
                    Err(e) => (env.new_string(e.kind().code())?.into(), env.new_string(e.message())?.into()),
                };
                env.call_method(&sink, "done", "(Ljava/lang/String;Ljava/lang/String;)V", &[JValue::Object(&kind), JValue::Object(&message)])?;
                Ok(())
            });
        });
        Ok(())
    })
}

/// Frees the guard, releasing the lock first if still held (a guard nobody released).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_guardFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let Some(g) = boundary::take_handle::<GuardHandle>(h) else { return Ok(()) };
        g.watcher.disarm();
        if g.guard.is_held() && boundary::may_block() && !g.client.is_closed() {
            let held = g.guard.clone();
            let _ = etcdlock::runtime::block_on(async move { held.release().await });
        }
        Ok(())
    })
}
