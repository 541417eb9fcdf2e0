//! Pools of named slots: a pool handle (open or join, an acquire started on the runtime whose
//! outcome goes to a Java sink and which a token cancels, slots added and removed, the slots as
//! etcd has them) and a holding (its slots and tokens, fenced writes, the lost callback,
//! release, free). Translation only.

use crate::boundary::{self, entry, invalid, JResult};
use crate::callback::{self, LostWatcher};
use crate::client::ClientHandle;
use etcdlock::{CancellationToken, Client, Error, ErrorKind, Pool, PoolAcquire, PoolGuard, PoolOptions, SlotState};
use jni::objects::{JByteArray, JClass, JObject, JObjectArray, JString, JValue};
use jni::sys::{jboolean, jint, jlong, jlongArray, jobjectArray, jstring};
use jni::JNIEnv;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

pub(crate) struct PoolHandle {
    pool: Pool,
    client: Client,
}

pub(crate) struct HeldHandle {
    guard: PoolGuard,
    client: Client,
    watcher: LostWatcher,
    /// This holding among the handles on it (see [`HANDLES`]).
    key: HandleKey,
}

fn pool<'a>(h: jlong) -> JResult<&'a PoolHandle> {
    boundary::handle::<PoolHandle>(h, "pool")
}

fn held<'a>(h: jlong) -> JResult<&'a HeldHandle> {
    boundary::handle::<HeldHandle>(h, "pool holding")
}

/// The handles on one holding (an acquire with the owner of a live holding hands out another
/// handle on it): the holding is released by the free of its last handle.
type HandleKey = (Vec<u8>, i64, i64);
static HANDLES: Mutex<BTreeMap<HandleKey, usize>> = Mutex::new(BTreeMap::new());

impl HeldHandle {
    fn new(guard: PoolGuard, pool: &[u8], client: Client) -> HeldHandle {
        let key = (pool.to_vec(), guard.lease_id(), guard.fencing_token());
        *HANDLES.lock().unwrap_or_else(|e| e.into_inner()).entry(key.clone()).or_default() += 1;
        HeldHandle { guard, client, watcher: LostWatcher::default(), key }
    }

    /// Counts this handle out; true if it was the holding's last.
    fn last_handle(&self) -> bool {
        let mut handles = HANDLES.lock().unwrap_or_else(|e| e.into_inner());
        let n = handles.get_mut(&self.key).map_or(0, |n| {
            *n -= 1;
            *n
        });
        if n == 0 {
            handles.remove(&self.key);
        }
        n == 0
    }
}

/// A String[] argument (no null element); null is empty.
pub(crate) fn strings(env: &mut JNIEnv, a: &JObjectArray, what: &str) -> JResult<Vec<String>> {
    if a.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(a)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let s = JString::from(env.get_object_array_element(a, i)?);
        out.push(boundary::string(env, &s, what)?);
    }
    Ok(out)
}

pub(crate) fn string_array<'l>(env: &mut JNIEnv<'l>, list: &[impl AsRef<str>]) -> JResult<JObjectArray<'l>> {
    let array = env.new_object_array(list.len() as i32, "java/lang/String", JObject::null())?;
    for (i, s) in list.iter().enumerate() {
        let s = env.new_string(s.as_ref())?;
        env.set_object_array_element(&array, i as i32, &s)?;
        env.delete_local_ref(s)?;
    }
    Ok(array)
}

/// The pool `name` of the slots `slots` (null: `size` slots named "0" to "size - 1"), holdings
/// on leases of `ttl_s`, a dead holder's slot resting `reuse_delay_ms`. Checks what the core
/// checks; sends nothing.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolOpen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    client: jlong,
    name: JString<'l>,
    slots: JObjectArray<'l>,
    size: jint,
    ttl_s: jlong,
    reuse_delay_ms: jlong,
) -> jlong {
    entry(&mut env, 0, |env| {
        let c = boundary::handle::<ClientHandle>(client, "client")?;
        let name = boundary::string(env, &name, "name")?;
        let opts = if slots.is_null() {
            // (Checked here: the core would first make that many names.)
            match usize::try_from(size) {
                Ok(n) if (1..=etcdlock::MAX_POOL_SLOTS).contains(&n) => PoolOptions::size(n),
                _ => return Err(invalid(format!("a pool has 1 to {} slots, got {size}", etcdlock::MAX_POOL_SLOTS))),
            }
        } else {
            PoolOptions::named(strings(env, &slots, "a slot id")?)
        };
        let reuse_delay = u64::try_from(reuse_delay_ms).map_err(|_| invalid(format!("reuse delay must not be negative, got {reuse_delay_ms} ms")))?;
        let pool = c.client.pool(name, opts.ttl(ttl_s).reuse_delay(Duration::from_millis(reuse_delay)))?;
        Ok(boundary::into_handle(PoolHandle { pool, client: c.client.clone() }))
    })
}

/// The pool `name` as another participant defined it (its acquires fail with INVALID_ARGUMENT
/// if nobody did). Sends nothing.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolJoin<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, client: jlong, name: JString<'l>, ttl_s: jlong) -> jlong {
    entry(&mut env, 0, |env| {
        let c = boundary::handle::<ClientHandle>(client, "client")?;
        let name = boundary::string(env, &name, "name")?;
        let pool = c.client.join_pool(name, ttl_s)?;
        Ok(boundary::into_handle(PoolHandle { pool, client: c.client.clone() }))
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        drop(boundary::take_handle::<PoolHandle>(h));
        Ok(())
    })
}

/// Starts acquiring `count` slots (`owner` nullable; wait `timeout_ms`: -1 forever, 0 try once)
/// and returns at once a cancel token handle (free it with cancelFree). The outcome goes to
/// `sink.done(long held, String kind, String message)` exactly once, on a runtime thread: a
/// holding handle and two nulls, or 0 and the error. Bad arguments throw here (nothing sent, no
/// `done`); a count out of the pool's bounds (its size is etcd's) comes as the outcome.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolAcquire<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    count: jint,
    owner: JString<'l>,
    timeout_ms: jlong,
    sink: JObject<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let p = pool(h)?;
        let count = usize::try_from(count).map_err(|_| invalid(format!("count must be at least 1, got {count}")))?;
        let owner = boundary::opt_string(env, &owner)?;
        if let Some(o) = &owner {
            etcdlock::check_lock_value(o.as_bytes())?;
        }
        let timeout = boundary::wait(timeout_ms)?;
        if sink.is_null() {
            return Err(invalid("sink must not be null"));
        }
        if p.client.is_closed() {
            return Err(Error::new(ErrorKind::Closed, "the client is closed").into());
        }
        let sink = env.new_global_ref(&sink)?;
        let token = CancellationToken::new();
        let opts = PoolAcquire { count, owner, timeout, cancel: Some(token.clone()) };
        let (tp, client, name) = (p.pool.clone(), p.client.clone(), p.pool.name().to_vec());
        etcdlock::runtime::linger::spawn_call(async move { tp.acquire_with(opts).await }, move |outcome| {
            let (handle, error) = match outcome {
                Ok(g) => (boundary::into_handle(HeldHandle::new(g, &name, client)), None),
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
                // Nobody owns it: the free of its last handle gives the slots back.
                free_held(handle);
            }
        });
        Ok(boundary::into_handle(token))
    })
}

/// Adds (`add`) or removes slots; the pool's slots after.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolChange<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, ids: JObjectArray<'l>, add: jboolean) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let p = pool(h)?.pool.clone();
        let ids = strings(env, &ids, "a slot id")?;
        let after = boundary::block(async move { if add != 0 { p.add_slots(ids).await } else { p.remove_slots(ids).await } })?;
        Ok(string_array(env, &after)?.into_raw())
    })
}

/// The slots of the pool `name` as `SlotInfo`s in its order, or null if no pool is defined there.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolInspect<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, client: jlong, name: JString<'l>) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let client = boundary::handle::<ClientHandle>(client, "client")?.client.clone();
        let name = boundary::string(env, &name, "name")?;
        etcdlock::check_lock_name(name.as_bytes())?;
        let Some(slots) = boundary::block(async move { client.inspect_pool(name).await })? else { return Ok(std::ptr::null_mut()) };
        let array = env.new_object_array(slots.len() as i32, "io/etcdlock/SlotInfo", JObject::null())?;
        for (i, s) in slots.iter().enumerate() {
            env.with_local_frame(8, |env| -> JResult<()> {
                // The states by ordinal of io.etcdlock.SlotInfo.State; -1: no lease, or gone.
                let (state, token, lease, ttl, acquisition, owner) = match &s.state {
                    SlotState::Free => (0, 0, 0, None, 0, ""),
                    SlotState::Held { token, lease, ttl, acquisition, owner } => (1, *token, *lease, *ttl, *acquisition, owner.as_str()),
                    SlotState::Resting { lease, ttl } => (2, 0, *lease, *ttl, 0, ""),
                    SlotState::Dead => (3, 0, 0, None, 0, ""),
                };
                let (id, owner) = (env.new_string(&s.id)?, env.new_string(owner)?);
                let e = env
                    .call_static_method(
                        "io/etcdlock/SlotInfo",
                        "of",
                        "(Ljava/lang/String;IJJJJLjava/lang/String;)Lio/etcdlock/SlotInfo;",
                        &[
                            JValue::Object(&id),
                            JValue::Int(state),
                            JValue::Long(token),
                            JValue::Long(lease),
                            JValue::Long(ttl.unwrap_or(-1)),
                            JValue::Long(acquisition),
                            JValue::Object(&owner),
                        ],
                    )?
                    .l()?;
                env.set_object_array_element(&array, i as i32, e)?;
                Ok(())
            })?;
        }
        Ok(array.into_raw())
    })
}

/// The slot ids held, in the pool's order.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldSlots<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let ids: Vec<&str> = held(h)?.guard.slots();
        Ok(string_array(env, &ids)?.into_raw())
    })
}

/// Each held slot's fencing token, in the order of poolHeldSlots.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldTokens<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let tokens: Vec<i64> = held(h)?.guard.tokens().iter().map(|(_, t)| *t).collect();
        let array = env.new_long_array(tokens.len() as i32)?;
        env.set_long_array_region(&array, 0, &tokens)?;
        Ok(array.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldFencingToken<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| Ok(held(h)?.guard.fencing_token()))
}

/// The owner it was acquired with, or null.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldOwner<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| match held(h)?.guard.owner() {
        None => Ok(std::ptr::null_mut()),
        Some(o) => Ok(env.new_string(o)?.into_raw()),
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldLeaseId<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| Ok(held(h)?.guard.lease_id()))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldIsHeld<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jboolean {
    entry(&mut env, 0, |_| Ok(held(h)?.guard.is_held() as jboolean))
}

/// Why the holding was lost, or null.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldLostReason<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| match held(h)?.guard.lost_reason() {
        None => Ok(std::ptr::null_mut()),
        Some(r) => Ok(env.new_string(r.as_str())?.into_raw()),
    })
}

/// One call's view of the hold (core `Health`), as an `io.etcdlock.Health`.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldHealth<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jni::sys::jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let health = held(h)?.guard.health();
        crate::health::to_java(env, health)
    })
}

/// Calls `sink.lost(reason)` (on a runtime thread) once the holding is lost, not when it is
/// released. NOT_HELD once it was.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldOnLost<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, sink: JObject<'l>) {
    entry(&mut env, (), |env| {
        let hd = held(h)?;
        if sink.is_null() {
            return Err(invalid("sink must not be null"));
        }
        if !hd.guard.is_held() && hd.guard.lost_reason().is_none() {
            return Err(Error::new(ErrorKind::NotHeld, "the slots were released").into());
        }
        hd.watcher.arm(hd.guard.lost(), env.new_global_ref(&sink)?);
        Ok(())
    })
}

/// Applies the puts (`keys[i]` = `values[i]`) and deletes in one Txn, only while every slot is
/// held (NOT_HELD otherwise, nothing written): its revision.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldTxn<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    put_keys: JObjectArray<'l>,
    put_values: JObjectArray<'l>,
    delete_keys: JObjectArray<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let (keys, values, deletes) = (byte_arrays(env, &put_keys)?, byte_arrays(env, &put_values)?, byte_arrays(env, &delete_keys)?);
        if keys.len() != values.len() {
            return Err(invalid("as many put keys as values"));
        }
        let ops: Vec<etcdlock::Op> = keys.into_iter().zip(values).map(|(k, v)| etcdlock::Op::put(k, v)).chain(deletes.into_iter().map(etcdlock::Op::delete)).collect();
        let g = held(h)?.guard.clone();
        boundary::block(async move { g.txn(&ops).await })
    })
}

/// A byte[][] argument; null is empty.
pub(crate) fn byte_arrays(env: &mut JNIEnv, a: &JObjectArray) -> JResult<Vec<Vec<u8>>> {
    if a.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(a)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let b = JByteArray::from(env.get_object_array_element(a, i)?);
        out.push(boundary::bytes(env, &b)?);
    }
    Ok(out)
}

/// The fence of slot `slot` in its string form (its key `<pool>/slot/<id>` at the slot's token);
/// INVALID_ARGUMENT for a slot the holding does not hold. As the core's, also after the release
/// (it then no longer checks).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldFence<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, slot: JString<'l>) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let slot = boundary::string(env, &slot, "slot")?;
        let g = held(h)?.guard.clone();
        let fence = boundary::block(async move { g.fence(&slot).await })?;
        Ok(env.new_string(fence.to_string())?.into_raw())
    })
}

/// Gives every slot back at once (fenced). Disarms the lost callback.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldRelease<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let hd = held(h)?;
        hd.watcher.disarm();
        let g = hd.guard.clone();
        boundary::block(async move { g.release().await })
    })
}

/// Frees the holding handle; the last handle on a holding still held releases it first.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_poolHeldFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        free_held(h);
        Ok(())
    })
}

fn free_held(h: jlong) {
    let Some(hd) = boundary::take_handle::<HeldHandle>(h) else { return };
    hd.watcher.disarm();
    // Released or lost: nothing to give back (the last clone dropped gives back the keys of a
    // lost holding still its own, in the background).
    if hd.last_handle() && hd.guard.is_held() && boundary::may_block() && !hd.client.is_closed() {
        let g = hd.guard.clone();
        let _ = etcdlock::runtime::block_on(async move { g.release().await });
    }
}
