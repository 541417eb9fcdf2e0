//! Lock sets: a set handle (open, an acquire started on the runtime whose outcome goes to a Java
//! sink and which a token cancels) and a holding (its token, names and keys, writes fenced by
//! every member, a member's fence, the lost callback, release, free). Translation only: the set
//! is the core's `LockSet`.

use crate::boundary::{self, entry, invalid, JResult};
use crate::callback::{self, LostWatcher};
use crate::client::ClientHandle;
use etcdlock::{CancellationToken, Client, Error, ErrorKind, LockOptions, LockSet, LockSetGuard, SetMember};
use jni::objects::{JByteArray, JClass, JIntArray, JObject, JObjectArray, JString, JValue};
use jni::sys::{jboolean, jlong, jobjectArray, jstring};
use jni::JNIEnv;
use std::sync::Arc;

pub(crate) struct SetHandle {
    set: Arc<LockSet>,
    client: Client,
}

pub(crate) struct HeldSet {
    guard: Arc<LockSetGuard>,
    client: Client,
    watcher: LostWatcher,
}

fn held<'a>(h: jlong) -> JResult<&'a HeldSet> {
    boundary::handle::<HeldSet>(h, "lock set holding")
}

/// The lock set of `names[i]` held in `modes[i]` (the ordinals of `io.etcdlock.SetMember.Mode`:
/// 0 exclusive, 1 read, 2 write, 3 one of `permits[i]` permits), keys on the client's lease of
/// `ttl_s`. Checks what the core checks; sends nothing.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetOpen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    client: jlong,
    names: JObjectArray<'l>,
    modes: JIntArray<'l>,
    permits: JIntArray<'l>,
    ttl_s: jlong,
) -> jlong {
    entry(&mut env, 0, |env| {
        let c = boundary::handle::<ClientHandle>(client, "client")?;
        let names = crate::pool::strings(env, &names, "a member's name")?;
        let (modes, permits) = (ints(env, &modes)?, ints(env, &permits)?);
        if modes.len() != names.len() || permits.len() != names.len() {
            return Err(invalid("as many modes and permits as names"));
        }
        let members = names
            .into_iter()
            .zip(modes.into_iter().zip(permits))
            .map(|(name, (mode, n))| match mode {
                0 => Ok(SetMember::exclusive(name)),
                1 => Ok(SetMember::read(name)),
                2 => Ok(SetMember::write(name)),
                3 => u32::try_from(n).map(|n| SetMember::permit(name, n)).map_err(|_| invalid(format!("permits must be 1 to {}, got {n}", etcdlock::MAX_PERMITS))),
                m => Err(invalid(format!("no lock set mode {m}"))),
            })
            .collect::<JResult<Vec<_>>>()?;
        if ttl_s <= 0 {
            return Err(invalid(format!("ttl must be a positive number of seconds, got {ttl_s}")));
        }
        if c.client.is_closed() {
            return Err(Error::new(ErrorKind::Closed, "the client is closed").into());
        }
        let set = c.client.lock_set(members, ttl_s)?;
        Ok(boundary::into_handle(SetHandle { set: Arc::new(set), client: c.client.clone() }))
    })
}

fn ints(env: &mut JNIEnv, a: &JIntArray) -> JResult<Vec<i32>> {
    if a.is_null() {
        return Ok(Vec::new());
    }
    let mut out = vec![0; env.get_array_length(a)? as usize];
    env.get_int_array_region(a, 0, &mut out)?;
    Ok(out)
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        drop(boundary::take_handle::<SetHandle>(h));
        Ok(())
    })
}

/// Starts taking every member (wait `timeout_ms`: -1 forever, 0 try once; `value` stored in each
/// member's key) and returns at once a cancel token handle (free it with cancelFree). The outcome
/// goes to `sink.done(long held, String kind, String message)` exactly once, on a runtime thread:
/// a holding handle and two nulls, or 0 and the error; on a failure no key is left in any queue.
/// Bad arguments throw here (nothing sent, no `done`).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetAcquire<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    timeout_ms: jlong,
    value: JByteArray<'l>,
    sink: JObject<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let s = boundary::handle::<SetHandle>(h, "lock set")?;
        let timeout = boundary::wait(timeout_ms)?;
        let value = boundary::bytes(env, &value)?;
        etcdlock::check_lock_value(&value)?;
        if sink.is_null() {
            return Err(invalid("sink must not be null"));
        }
        if s.client.is_closed() {
            return Err(Error::new(ErrorKind::Closed, "the client is closed").into());
        }
        let sink = env.new_global_ref(&sink)?;
        let token = CancellationToken::new();
        let opts = LockOptions { timeout, cancel: Some(token.clone()), value };
        let (set, client) = (s.set.clone(), s.client.clone());
        etcdlock::runtime::linger::spawn_call(async move { set.lock_with(opts).await }, move |outcome| {
            let (handle, error) = match outcome {
                Ok(g) => (boundary::into_handle(HeldSet { guard: Arc::new(g), client, watcher: LostWatcher::default() }), None),
                Err(e) => (0, Some(e)),
            };
            let delivered = callback::call(|env| {
                let (kind, message) = match &error {
                    None => (JObject::null(), JObject::null()),
                    Some(e) => (env.new_string(e.kind().code())?.into(), env.new_string(e.message())?.into()),
                };
                env.call_method(&sink, "done", "(JLjava/lang/String;Ljava/lang/String;)V", &[JValue::Long(handle), JValue::Object(&kind), JValue::Object(&message)])?;
                Ok(())
            });
            if !delivered {
                // Nobody owns it: the free releases it.
                free_held(handle);
            }
        });
        Ok(boundary::into_handle(token))
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetHeldFencingToken<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| Ok(held(h)?.guard.fencing_token()))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetHeldLeaseId<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| Ok(held(h)?.guard.lease_id()))
}

/// The member names (`keys` false) or their queue keys (`keys` true), in the set's order.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetHeldNames<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, keys: jboolean) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let g = &held(h)?.guard;
        let list: Vec<String> = g.members().iter().map(|m| String::from_utf8_lossy(if keys != 0 { m.key() } else { m.name() }).into_owned()).collect();
        Ok(crate::pool::string_array(env, &list)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetHeldIsHeld<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jboolean {
    entry(&mut env, 0, |_| Ok(held(h)?.guard.is_held() as jboolean))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetHeldIsReleased<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jboolean {
    entry(&mut env, 0, |_| Ok(held(h)?.guard.is_released() as jboolean))
}

/// Why the set was lost (its first member lost), or null.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetHeldLostReason<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| match held(h)?.guard.lost_reason() {
        None => Ok(std::ptr::null_mut()),
        Some(r) => Ok(env.new_string(r.as_str())?.into_raw()),
    })
}

/// One call's view of the hold (core `Health`), as an `io.etcdlock.Health`.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetHeldHealth<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jni::sys::jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let health = held(h)?.guard.health();
        crate::health::to_java(env, health)
    })
}

/// Calls `sink.lost(reason)` (on a runtime thread) once any member is lost, not when the set is
/// released. NOT_HELD once it was.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetHeldOnLost<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, sink: JObject<'l>) {
    entry(&mut env, (), |env| {
        let hd = held(h)?;
        if sink.is_null() {
            return Err(invalid("sink must not be null"));
        }
        // Released, lost or not (a released set's members may see their own keys' deletes).
        if hd.guard.is_released() {
            return Err(Error::new(ErrorKind::NotHeld, "the lock set was released").into());
        }
        hd.watcher.arm(hd.guard.lost(), env.new_global_ref(&sink)?);
        Ok(())
    })
}

/// Applies the puts (`keys[i]` = `values[i]`) and deletes in one Txn, only while every member is
/// held (NOT_HELD otherwise, nothing written): its revision.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetHeldTxn<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    put_keys: JObjectArray<'l>,
    put_values: JObjectArray<'l>,
    delete_keys: JObjectArray<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let (keys, values) = (crate::pool::byte_arrays(env, &put_keys)?, crate::pool::byte_arrays(env, &put_values)?);
        let deletes = crate::pool::byte_arrays(env, &delete_keys)?;
        if keys.len() != values.len() {
            return Err(invalid("as many put keys as values"));
        }
        let ops: Vec<etcdlock::Op> = keys.into_iter().zip(values).map(|(k, v)| etcdlock::Op::put(k, v)).chain(deletes.into_iter().map(etcdlock::Op::delete)).collect();
        let g = held(h)?.guard.clone();
        boundary::block(async move { g.txn(&ops).await })
    })
}

/// Member `name`'s fence in its string form (its queue key at the set's token). NOT_HELD once the
/// set was released or lost; INVALID_ARGUMENT for a name not in the set.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetHeldFence<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, name: JString<'l>) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let name = boundary::string(env, &name, "name")?;
        let g = held(h)?.guard.clone();
        if !g.is_held() {
            return Err(Error::new(ErrorKind::NotHeld, "the lock set is not held: a fence is for a holding acquisition").into());
        }
        let fence = boundary::block(async move { g.fence(name.as_bytes()).await })?;
        Ok(env.new_string(fence.to_string())?.into_raw())
    })
}

/// Releases every member in one Txn. NOT_HELD if already released or a member was lost (the keys
/// left are deleted either way). Disarms the lost callback.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetHeldRelease<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let hd = held(h)?;
        hd.watcher.disarm();
        let g = hd.guard.clone();
        boundary::block(async move { g.release().await })
    })
}

/// Frees the holding, releasing it first if still held.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_lockSetHeldFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        free_held(h);
        Ok(())
    })
}

fn free_held(h: jlong) {
    let Some(hd) = boundary::take_handle::<HeldSet>(h) else { return };
    hd.watcher.disarm();
    if hd.guard.is_held() && boundary::may_block() && !hd.client.is_closed() {
        let g = hd.guard.clone();
        let _ = etcdlock::runtime::block_on(async move { g.release().await });
    }
    // Otherwise dropping the guard deletes each member's key still its own, in the background.
}
