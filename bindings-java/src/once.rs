//! Once-per-period jobs: the period's slot a caller won (a handle) or 0, its fenced writes, done
//! or released.
//! Translation only.

use crate::boundary::{self, entry, invalid, JResult};
use crate::callback::LostWatcher;
use crate::client::ClientHandle;
use etcdlock::{Client, Error, ErrorKind, OnceOptions, OnceSlot};
use jni::objects::{JByteArray, JClass, JObject, JString};
use jni::sys::{jboolean, jint, jlong, jstring};
use jni::JNIEnv;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

pub(crate) struct SlotHandle {
    slot: Arc<OnceSlot>,
    client: Client,
    watcher: LostWatcher,
}

fn slot<'a>(h: jlong) -> JResult<&'a SlotHandle> {
    boundary::handle::<SlotHandle>(h, "once slot")
}

/// Claims the period's slot of job `name` (period `every_ms`, claim TTL `ttl_s`, done marks kept
/// `keep_periods` periods; the trigger time `at_ms` after the epoch if `has_at`, else now): a
/// slot handle if this caller won it, 0 if the period's job is done or runs elsewhere.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_io_etcdlock_Native_onceClaim<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    client: jlong,
    name: JString<'l>,
    every_ms: jlong,
    ttl_s: jlong,
    has_at: jboolean,
    at_ms: jlong,
    keep_periods: jint,
) -> jlong {
    entry(&mut env, 0, |env| {
        let c = boundary::handle::<ClientHandle>(client, "client")?;
        let name = boundary::string(env, &name, "name")?;
        let every = u64::try_from(every_ms).map_err(|_| invalid(format!("a period must be at least 1 s, got {every_ms} ms")))?;
        let keep_periods = u32::try_from(keep_periods).map_err(|_| invalid(format!("done marks must be kept at least 2 periods, got {keep_periods}")))?;
        let at = match (has_at != 0, at_ms) {
            (false, _) => None,
            (true, ms) if ms >= 0 => Some(UNIX_EPOCH + Duration::from_millis(ms as u64)),
            // Before 1970: the core names it.
            (true, ms) => Some(UNIX_EPOCH.checked_sub(Duration::from_millis(ms.unsigned_abs())).ok_or_else(|| invalid("a trigger time before 1970"))?),
        };
        let every = Duration::from_millis(every);
        if every.checked_mul(keep_periods).is_none() {
            return Err(invalid(format!("a period of {every_ms} ms kept {keep_periods} periods is beyond any lease's TTL")));
        }
        let opts = OnceOptions { every, ttl_secs: ttl_s, at, keep_periods };
        etcdlock::check_once(name.as_bytes(), &opts)?;
        let client = c.client.clone();
        let won = boundary::block(async move { client.once(name, opts).await })?;
        Ok(won.map_or(0, |s| boundary::into_handle(SlotHandle { slot: Arc::new(s), client: c.client.clone(), watcher: LostWatcher::default() })))
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_slotIndex<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| Ok(slot(h)?.slot.slot()))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_slotFencingToken<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| Ok(slot(h)?.slot.fencing_token()))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_slotIsHeld<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jboolean {
    entry(&mut env, 0, |_| Ok(slot(h)?.slot.is_held() as jboolean))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_slotLostReason<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| match slot(h)?.slot.lost_reason() {
        None => Ok(std::ptr::null_mut()),
        Some(r) => Ok(env.new_string(r.as_str())?.into_raw()),
    })
}

/// One call's view of the hold (core `Health`), as an `io.etcdlock.Health`.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_slotHealth<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jni::sys::jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let health = slot(h)?.slot.health();
        crate::health::to_java(env, health)
    })
}

/// Calls `sink.lost(reason)` once the claim is lost while the job runs. NOT_HELD once the slot
/// was done or released.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_slotOnLost<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, sink: JObject<'l>) {
    entry(&mut env, (), |env| {
        let s = slot(h)?;
        if sink.is_null() {
            return Err(invalid("sink must not be null"));
        }
        if !s.slot.is_held() && s.slot.lost_reason().is_none() {
            return Err(Error::new(ErrorKind::NotHeld, "the slot was done or released").into());
        }
        s.watcher.arm(s.slot.lost(), env.new_global_ref(&sink)?);
        Ok(())
    })
}

/// Writes `value` at `key` only while the claim holds (NOT_HELD otherwise, nothing written; a key
/// under the job's own `<name>/` is INVALID_ARGUMENT). The revision written.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_slotPut<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, key: JByteArray<'l>, value: JByteArray<'l>) -> jlong {
    entry(&mut env, 0, |env| {
        let s = slot(h)?.slot.clone();
        let (key, value) = (boundary::bytes(env, &key)?, boundary::bytes(env, &value)?);
        boundary::block(async move { s.put(&key, &value).await })
    })
}

/// Deletes `key` only while the claim holds. The revision of the delete.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_slotDelete<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, key: JByteArray<'l>) -> jlong {
    entry(&mut env, 0, |env| {
        let s = slot(h)?.slot.clone();
        let key = boundary::bytes(env, &key)?;
        boundary::block(async move { s.delete(&key).await })
    })
}

/// Marks the period's job done and ends the claim (fenced). Disarms the lost callback.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_slotDone<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let s = slot(h)?;
        s.watcher.disarm();
        let held = s.slot.clone();
        boundary::block(async move { held.done().await })
    })
}

/// Ends the claim without marking the job done. Disarms the lost callback.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_slotRelease<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let s = slot(h)?;
        s.watcher.disarm();
        let held = s.slot.clone();
        boundary::block(async move { held.release().await })
    })
}

/// Frees the slot, releasing it first if neither done nor released (a slot nobody closed).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_slotFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let Some(s) = boundary::take_handle::<SlotHandle>(h) else { return Ok(()) };
        s.watcher.disarm();
        if s.slot.is_held() && boundary::may_block() && !s.client.is_closed() {
            let held = s.slot.clone();
            let _ = etcdlock::runtime::block_on(async move { held.release().await });
        }
        Ok(())
    })
}
