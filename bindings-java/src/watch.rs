//! Watches: opened (confirmed by etcd) by one blocking call, then read in batches by the Java
//! `Watch` (its iterator and its `Flow.Publisher` both read through `watchNext`). Resuming
//! without gaps, and failing with COMPACTED, is the core's `Watch`.

use crate::boundary::{self, entry, JResult};
use crate::client::ClientHandle;
use etcdlock::{CancellationToken, EventType, Watch, WatchEvent, WatchOptions};
use jni::objects::{JByteArray, JClass, JObject, JValue};
use jni::sys::{jboolean, jlong, jobjectArray};
use jni::JNIEnv;
use std::sync::Arc;
use std::time::Duration;

/// Events already received are handed over together, up to this many per call.
const MAX_BATCH: usize = 256;

pub(crate) struct WatchHandle {
    /// One reader at a time (the Java side serialises them too); `close` takes it last.
    watch: Arc<tokio::sync::Mutex<Watch>>,
    /// Cancelled by close: a read in progress returns "ended" at once.
    closed: CancellationToken,
}

/// Opens a watch of `key` (every key under it with `prefix`) from `start_revision` (0: from
/// now), and returns once etcd confirmed it. Bad arguments throw before anything is sent.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_watchOpen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    client: jlong,
    key: JByteArray<'l>,
    prefix: jboolean,
    start_revision: jlong,
    prev_kv: jboolean,
) -> jlong {
    entry(&mut env, 0, |env| {
        let client = boundary::handle::<ClientHandle>(client, "client")?.client.clone();
        let key = boundary::bytes(env, &key)?;
        let opts = WatchOptions { prefix: prefix != 0, start_revision: (start_revision != 0).then_some(start_revision), prev_kv: prev_kv != 0 };
        opts.check(&key)?;
        let watch = boundary::block(async move { client.watch(key, opts).await })?;
        Ok(boundary::into_handle(WatchHandle { watch: Arc::new(tokio::sync::Mutex::new(watch)), closed: CancellationToken::new() }))
    })
}

enum Next {
    Events(Vec<WatchEvent>),
    TimedOut,
    Ended,
}

/// The next events (at least one) as a `WatchEvent[]`; an empty array when `timeout_ms` (-1:
/// none) passed first; null once the watch ended (closed). A core error (COMPACTED, CLOSED...)
/// is thrown, after which the watch has ended.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_watchNext<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, timeout_ms: jlong) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let w = boundary::handle::<WatchHandle>(h, "watch")?;
        let timeout = boundary::wait(timeout_ms)?;
        let (watch, closed) = (w.watch.clone(), w.closed.clone());
        let next = boundary::block(async move {
            let read = async {
                // next_batch is cancel-safe: a timed-out read loses no event.
                let mut w = watch.lock().await;
                match w.next_batch(MAX_BATCH).await {
                    Some(Ok(batch)) => Ok(Next::Events(batch)),
                    Some(Err(e)) => Err(e),
                    None => Ok(Next::Ended),
                }
            };
            tokio::select! {
                biased;
                _ = closed.cancelled() => Ok(Next::Ended),
                r = within(timeout, read) => r,
            }
        })?;
        match next {
            Next::Ended => Ok(std::ptr::null_mut()),
            Next::TimedOut => Ok(events(env, Vec::new())?),
            Next::Events(batch) => Ok(events(env, batch)?),
        }
    })
}

async fn within(timeout: Option<Duration>, read: impl std::future::Future<Output = etcdlock::Result<Next>>) -> etcdlock::Result<Next> {
    match timeout {
        None => read.await,
        Some(d) => tokio::time::timeout(d, read).await.unwrap_or(Ok(Next::TimedOut)),
    }
}

fn events(env: &mut JNIEnv, batch: Vec<WatchEvent>) -> JResult<jobjectArray> {
    let array = env.new_object_array(batch.len() as i32, "io/etcdlock/WatchEvent", JObject::null())?;
    for (i, e) in batch.into_iter().enumerate() {
        env.with_local_frame(8, |env| -> JResult<()> {
            let key = env.byte_array_from_slice(&e.kv.key)?;
            let value = env.byte_array_from_slice(&e.kv.value)?;
            let prev: JObject = match &e.prev_kv {
                Some(kv) => env.byte_array_from_slice(&kv.value)?.into(),
                None => JObject::null(),
            };
            let ev = env
                .call_static_method(
                    "io/etcdlock/WatchEvent",
                    "of",
                    "(Z[B[BJJJJ[B)Lio/etcdlock/WatchEvent;",
                    &[
                        JValue::Bool((e.event_type == EventType::Delete) as jboolean),
                        JValue::Object(&key),
                        JValue::Object(&value),
                        JValue::Long(e.revision()),
                        JValue::Long(e.kv.create_revision),
                        JValue::Long(e.kv.version),
                        JValue::Long(e.kv.lease),
                        JValue::Object(&prev),
                    ],
                )?
                .l()?;
            env.set_object_array_element(&array, i as i32, ev)?;
            Ok(())
        })?;
    }
    Ok(array.into_raw())
}

/// Ends the watch: a read in progress returns "ended", and the core watch is cancelled on the
/// server. Idempotent.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_watchClose<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let w = boundary::handle::<WatchHandle>(h, "watch")?;
        w.closed.cancel();
        let watch = w.watch.clone();
        etcdlock::runtime::spawn(async move { watch.lock().await.close() });
        Ok(())
    })
}

/// Frees the handle (the core watch goes with the last reference).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_watchFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        if let Some(w) = boundary::take_handle::<WatchHandle>(h) {
            w.closed.cancel();
        }
        Ok(())
    })
}
