//! The task queue: a queue handle (put, a claim started on the runtime whose outcome goes to a
//! Java sink and which a token cancels, the counts, the dead letters) and a claimed task
//! (accessors, fenced writes, ack, nack, the lost callback, free). Translation only.

use crate::boundary::{self, entry, invalid, JResult};
use crate::callback::{self, LostWatcher};
use crate::client::ClientHandle;
use etcdlock::{CancellationToken, ClaimOptions, Client, Error, ErrorKind, QueueOptions, Task, TaskOptions, TaskQueue};
use jni::objects::{JByteArray, JClass, JObject, JObjectArray, JString, JValue};
use jni::sys::{jboolean, jbyteArray, jint, jlong, jlongArray, jobjectArray, jstring};
use jni::JNIEnv;
use std::sync::Arc;
use std::time::Duration;

pub(crate) struct QueueHandle {
    queue: TaskQueue,
    client: Client,
    /// Stored in every claim's key (QueueOptions.worker).
    worker: Vec<u8>,
}

pub(crate) struct TaskHandle {
    task: Arc<Task>,
    client: Client,
    watcher: LostWatcher,
}

fn queue<'a>(h: jlong) -> JResult<&'a QueueHandle> {
    boundary::handle::<QueueHandle>(h, "task queue")
}

fn task<'a>(h: jlong) -> JResult<&'a TaskHandle> {
    boundary::handle::<TaskHandle>(h, "task")
}

/// A delay in milliseconds from Java: 0 none; negative refused.
fn delay(ms: jlong) -> JResult<Option<Duration>> {
    match ms {
        0 => Ok(None),
        d if d > 0 => Ok(Some(Duration::from_millis(d as u64))),
        d => Err(invalid(format!("delay must not be negative, got {d} ms"))),
    }
}

/// The task queue `name` (claims on leases of `ttl_s`, `max_attempts` deliveries, claims ended
/// `max_processing_ms` after they were made (-1: no limit), `worker` in every claim key). Checks
/// everything the core checks before a claim; sends nothing.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_queueOpen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    client: jlong,
    name: JString<'l>,
    ttl_s: jlong,
    max_attempts: jint,
    max_processing_ms: jlong,
    worker: JByteArray<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let c = boundary::handle::<ClientHandle>(client, "client")?;
        let name = boundary::string(env, &name, "name")?;
        let worker = boundary::bytes(env, &worker)?;
        etcdlock::check_lock_value(&worker)?;
        let max_attempts = u32::try_from(max_attempts).map_err(|_| invalid(format!("max attempts must be at least 1, got {max_attempts}")))?;
        // -1 from QueueOptions without maxProcessing; the core refuses 0.
        let max_processing = match max_processing_ms {
            -1 => None,
            ms if ms >= 0 => Some(Duration::from_millis(ms as u64)),
            ms => return Err(invalid(format!("max processing must not be negative, got {ms} ms"))),
        };
        let queue = c.client.queue(name, QueueOptions { ttl_secs: ttl_s, max_attempts, max_processing })?;
        Ok(boundary::into_handle(QueueHandle { queue, client: c.client.clone(), worker }))
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_queueFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        drop(boundary::take_handle::<QueueHandle>(h));
        Ok(())
    })
}

/// Puts an item (`id` null: a random one); its id.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_queuePut<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    payload: JByteArray<'l>,
    id: JString<'l>,
    priority: jint,
    delay_ms: jlong,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let q = queue(h)?.queue.clone();
        let payload = boundary::bytes(env, &payload)?;
        let id = boundary::opt_string(env, &id)?;
        let delay = delay(delay_ms)?;
        let id = boundary::block(async move { q.put(&payload, TaskOptions { id, priority, delay }).await })?;
        Ok(env.new_string(id)?.into_raw())
    })
}

/// Starts claiming the next item (wait `timeout_ms`: -1 forever, 0 try once) and returns at once
/// a cancel token handle (free it with cancelFree). The outcome goes to
/// `sink.done(long task, String kind, String message)` exactly once, on a runtime thread: a task
/// handle and two nulls, or 0 and the error. Bad arguments throw here (nothing sent, no `done`).
/// Cancelling fails the wait with CANCELLED, leaving nothing behind.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_queueClaim<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, timeout_ms: jlong, sink: JObject<'l>) -> jlong {
    entry(&mut env, 0, |env| {
        let q = queue(h)?;
        let timeout = boundary::wait(timeout_ms)?;
        if sink.is_null() {
            return Err(invalid("sink must not be null"));
        }
        if q.client.is_closed() {
            return Err(Error::new(ErrorKind::Closed, "the client is closed").into());
        }
        let sink = env.new_global_ref(&sink)?;
        let token = CancellationToken::new();
        let opts = ClaimOptions { timeout, cancel: Some(token.clone()), worker: q.worker.clone() };
        let (tq, client) = (q.queue.clone(), q.client.clone());
        etcdlock::runtime::linger::spawn_call(async move { tq.claim(opts).await }, move |outcome| {
            let (handle, error) = match outcome {
                Ok(t) => (boundary::into_handle(TaskHandle { task: Arc::new(t), client, watcher: LostWatcher::default() }), None),
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
                // Nobody owns it: dropping the task gives it back in the background.
                drop(boundary::take_handle::<TaskHandle>(handle));
            }
        });
        Ok(boundary::into_handle(token))
    })
}

/// The counts: `[pending, delayed, claimed, dead, revision, priority, count, priority, count...]`
/// (pending by priority, the highest first).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_queueStats<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let q = queue(h)?.queue.clone();
        let s = boundary::block(async move { q.stats().await })?;
        let mut out = vec![s.pending as i64, s.delayed as i64, s.claimed as i64, s.dead as i64, s.revision];
        for (&priority, &count) in s.pending_by_priority.iter().rev() {
            out.extend([i64::from(priority), count as i64]);
        }
        let array = env.new_long_array(out.len() as i32)?;
        env.set_long_array_region(&array, 0, &out)?;
        Ok(array.into_raw())
    })
}

/// The dead letters as `DeadTask`s, in id order.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_queueDead<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let q = queue(h)?.queue.clone();
        let dead = boundary::block(async move { q.dead().await })?;
        let array = env.new_object_array(dead.len() as i32, "io/etcdlock/DeadTask", JObject::null())?;
        for (i, d) in dead.iter().enumerate() {
            env.with_local_frame(8, |env| -> JResult<()> {
                let id = env.new_string(&d.id)?;
                let payload = env.byte_array_from_slice(&d.payload)?;
                let e = env
                    .call_static_method(
                        "io/etcdlock/DeadTask",
                        "of",
                        "(Ljava/lang/String;[BII)Lio/etcdlock/DeadTask;",
                        &[JValue::Object(&id), JValue::Object(&payload), JValue::Int(d.attempts as i32), JValue::Int(d.priority)],
                    )?
                    .l()?;
                env.set_object_array_element(&array, i as i32, e)?;
                Ok(())
            })?;
        }
        Ok(array.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_queueRequeueDead<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, id: JString<'l>) -> jboolean {
    entry(&mut env, 0, |env| {
        let q = queue(h)?.queue.clone();
        let id = boundary::string(env, &id, "id")?;
        Ok(boundary::block(async move { q.requeue_dead(&id).await })? as jboolean)
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_queueDeleteDead<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, id: JString<'l>) -> jboolean {
    entry(&mut env, 0, |env| {
        let q = queue(h)?.queue.clone();
        let id = boundary::string(env, &id, "id")?;
        Ok(boundary::block(async move { q.delete_dead(&id).await })? as jboolean)
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskId<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| Ok(env.new_string(task(h)?.task.id())?.into_raw()))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskPayload<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| Ok(env.byte_array_from_slice(task(h)?.task.payload())?.into_raw()))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskPriority<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jint {
    entry(&mut env, 0, |_| Ok(task(h)?.task.priority()))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskAttempts<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jint {
    entry(&mut env, 0, |_| Ok(task(h)?.task.attempts() as jint))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskFencingToken<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| Ok(task(h)?.task.fencing_token()))
}

/// The claim's fence in its string form (a queue-kind fence on the claim's lock,
/// `<queue>/claim/<slot>`; the first fence of a client reads the cluster's ID). NOT_HELD once the
/// claim ended (acked, nacked) or was lost, as Python's and Node's `fence()`.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskFence<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let t = task(h)?.task.clone();
        if !t.is_held() {
            return Err(Error::new(ErrorKind::NotHeld, "the task's claim ended or was lost: a fence is for a holding claim").into());
        }
        let fence = boundary::block(async move { t.fence().await })?;
        Ok(env.new_string(fence.to_string())?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskIsHeld<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jboolean {
    entry(&mut env, 0, |_| Ok(task(h)?.task.is_held() as jboolean))
}

/// Why the claim was lost, or null.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskLostReason<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| match task(h)?.task.lost_reason() {
        None => Ok(std::ptr::null_mut()),
        Some(r) => Ok(env.new_string(r.as_str())?.into_raw()),
    })
}

/// One call's view of the hold (core `Health`), as an `io.etcdlock.Health`.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskHealth<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jni::sys::jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let health = task(h)?.task.health();
        crate::health::to_java(env, health)
    })
}

/// Calls `sink.lost(reason)` (on a runtime thread) once the claim is lost, not when the task is
/// acked or nacked. NOT_HELD once it was.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskOnLost<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, sink: JObject<'l>) {
    entry(&mut env, (), |env| {
        let t = task(h)?;
        if sink.is_null() {
            return Err(invalid("sink must not be null"));
        }
        if !t.task.is_held() && t.task.lost_reason().is_none() {
            return Err(Error::new(ErrorKind::NotHeld, "the task was acked or nacked").into());
        }
        t.watcher.arm(t.task.lost(), env.new_global_ref(&sink)?);
        Ok(())
    })
}

/// Writes `value` at `key` only while the claim holds (NOT_HELD otherwise, nothing written).
/// The revision written.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskPut<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, key: JByteArray<'l>, value: JByteArray<'l>) -> jlong {
    entry(&mut env, 0, |env| {
        let t = task(h)?.task.clone();
        let (key, value) = (boundary::bytes(env, &key)?, boundary::bytes(env, &value)?);
        boundary::block(async move { t.put(&key, &value).await })
    })
}

/// Deletes `key` only while the claim holds. The revision of the delete.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskDelete<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, key: JByteArray<'l>) -> jlong {
    entry(&mut env, 0, |env| {
        let t = task(h)?.task.clone();
        let key = boundary::bytes(env, &key)?;
        boundary::block(async move { t.delete(&key).await })
    })
}

/// Acks (deletes the item and its claim, fenced), with the caller's puts (`keys[i]` =
/// `values[i]`) and deletes in the same Txn: the revision. Disarms the lost callback.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskAck<'l>(
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
        let t = task(h)?;
        t.watcher.disarm();
        let held = t.task.clone();
        boundary::block(async move { held.ack_with(&ops).await })
    })
}

/// A byte[][] argument; null is empty.
fn byte_arrays(env: &mut JNIEnv, a: &JObjectArray) -> JResult<Vec<Vec<u8>>> {
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

/// Gives the item back, not claimable before `delay_ms` (0: at once). Disarms the lost callback.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskNack<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, delay_ms: jlong) {
    entry(&mut env, (), |_| {
        let t = task(h)?;
        let d = delay(delay_ms)?.unwrap_or(Duration::ZERO);
        t.watcher.disarm();
        let held = t.task.clone();
        boundary::block(async move { held.nack_after(d).await })
    })
}

/// Frees the task, giving it back first if neither acked nor nacked (a task nobody closed).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_taskFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let Some(t) = boundary::take_handle::<TaskHandle>(h) else { return Ok(()) };
        t.watcher.disarm();
        if t.task.is_held() && boundary::may_block() && !t.client.is_closed() {
            let held = t.task.clone();
            let _ = etcdlock::runtime::block_on(async move { held.nack().await });
        }
        Ok(())
    })
}
