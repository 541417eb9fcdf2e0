//! Prefix caches (the core's `Cache`) for the Java `Cache`: open (loads), reads of the copy,
//! waits for a revision (blocking and async), close. Its events are read through `follow.rs`
//! (`Stream::Cache`), as an observer's and a discovery's are. Loading, following and resyncing
//! are the core's.

use crate::boundary::{self, entry, invalid, JResult};
use crate::callback;
use crate::client::ClientHandle;
use crate::follow::{self, Stream};
use etcdlock::{Cache, CacheEvent, CacheEventKind, CacheEvents, CancellationToken, Client, Error, ErrorKind, KeyValue};
use jni::objects::{JByteArray, JClass, JObject, JValue};
use jni::sys::{jboolean, jint, jlong, jobject};
use jni::JNIEnv;
use std::sync::RwLock;
use std::time::Duration;

pub(crate) struct CacheHandle {
    /// Taken out by close: the copy stops following etcd once nothing else holds it.
    cache: RwLock<Option<Cache>>,
    client: Client,
    /// Cancelled by close: a wait in progress ends with CLOSED.
    closed: CancellationToken,
}

fn closed_error(what: &str) -> Error {
    Error::new(ErrorKind::Closed, format!("{what} is closed"))
}

impl CacheHandle {
    fn current(&self) -> Option<Cache> {
        self.cache.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The copy, unless the cache or its client is closed.
    fn live(&self) -> JResult<Cache> {
        if self.client.is_closed() {
            return Err(closed_error("the client").into());
        }
        Ok(self.current().ok_or_else(|| closed_error("the cache"))?)
    }

    /// Waits for the copy to reach `revision` within `timeout`; CLOSED once closed (the core's
    /// wait ends so when its client closes; this handle's close, which may leave the copy to
    /// another holder, ends it too).
    fn wait_for(&self, revision: i64, timeout: Duration) -> JResult<impl std::future::Future<Output = etcdlock::Result<()>> + Send + 'static> {
        let (cache, closed) = (self.live()?, self.closed.clone());
        Ok(async move {
            tokio::select! {
                biased;
                _ = closed.cancelled() => Err(closed_error("the cache")),
                r = cache.wait_for(revision, timeout) => r,
            }
        })
    }
}

/// A cache's events: `None` once the cache stopped (closed), CLOSED once its client closed, as
/// a `Watch` of a closed client fails (the core hands out the events received before first).
pub(crate) struct Events {
    events: CacheEvents,
    client: Client,
}

impl Events {
    pub(crate) async fn next(&mut self) -> etcdlock::Result<Option<CacheEvent>> {
        match self.events.next().await {
            None if self.client.is_closed() => Err(closed_error("the client")),
            ev => Ok(ev),
        }
    }
}

/// Loads every key under `prefix` at one revision and follows etcd from there. Blocks until
/// loaded.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_cacheOpen<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, client: jlong, prefix: JByteArray<'l>) -> jlong {
    entry(&mut env, 0, |env| {
        let client = boundary::handle::<ClientHandle>(client, "client")?.client.clone();
        let prefix = boundary::bytes(env, &prefix)?;
        if client.is_closed() {
            return Err(closed_error("the client").into());
        }
        let c = client.clone();
        let cache = boundary::block(async move { c.cache(prefix).await })?;
        Ok(boundary::into_handle(CacheHandle { cache: RwLock::new(Some(cache)), client, closed: CancellationToken::new() }))
    })
}

fn kv_object<'l>(env: &mut JNIEnv<'l>, kv: &KeyValue) -> JResult<JObject<'l>> {
    let key = env.byte_array_from_slice(&kv.key)?;
    let value = env.byte_array_from_slice(&kv.value)?;
    let args = [JValue::Object(&key), JValue::Object(&value), JValue::Long(kv.create_revision), JValue::Long(kv.mod_revision), JValue::Long(kv.version), JValue::Long(kv.lease)];
    Ok(env.call_static_method("io/etcdlock/KeyValue", "of", "([B[BJJJJ)Lio/etcdlock/KeyValue;", &args)?.l()?)
}

/// The copy's `key` as a `KeyValue`, or null when it has none.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_cacheGet<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, key: JByteArray<'l>) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let c = boundary::handle::<CacheHandle>(h, "cache")?;
        let key = boundary::bytes(env, &key)?;
        match c.live()?.get(&key) {
            Some(kv) => Ok(kv_object(env, &kv)?.into_raw()),
            None => Ok(std::ptr::null_mut()),
        }
    })
}

/// The whole copy and its revision, read together, as a `CacheSnapshot`.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_cacheSnapshot<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let (map, revision) = boundary::handle::<CacheHandle>(h, "cache")?.live()?.snapshot();
        let array = env.new_object_array(map.len() as i32, "io/etcdlock/KeyValue", JObject::null())?;
        for (i, kv) in map.values().enumerate() {
            env.with_local_frame(8, |env| -> JResult<()> {
                let o = kv_object(env, kv)?;
                env.set_object_array_element(&array, i as i32, o)?;
                Ok(())
            })?;
        }
        let args = [JValue::Long(revision), JValue::Object(&array)];
        Ok(env.call_static_method("io/etcdlock/CacheSnapshot", "of", "(J[Lio/etcdlock/KeyValue;)Lio/etcdlock/CacheSnapshot;", &args)?.l()?.into_raw())
    })
}

/// The copy's revision and size (a closed cache throws CLOSED; a closed client's copy answers).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_cacheRevision<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, size: jboolean) -> jlong {
    entry(&mut env, 0, |_| {
        let cache = boundary::handle::<CacheHandle>(h, "cache")?.current().ok_or_else(|| closed_error("the cache"))?;
        Ok(if size != 0 { cache.len() as jlong } else { cache.revision() })
    })
}

/// Waits until the copy is at `revision` or later: true, or false when `timeout_ms` passed first.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_cacheWaitFor<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, revision: jlong, timeout_ms: jlong) -> jboolean {
    entry(&mut env, 0, |_| {
        let wait = boundary::handle::<CacheHandle>(h, "cache")?.wait_for(revision, millis(timeout_ms)?)?;
        match boundary::block(wait) {
            Ok(()) => Ok(1),
            Err(boundary::Failure::Core(e)) if e.kind() == ErrorKind::Timeout => Ok(0),
            Err(f) => Err(f),
        }
    })
}

/// `cacheWaitFor` without blocking: `sink.done(kind, message)` once on a runtime thread (two
/// nulls when reached, "TIMEOUT" when the timeout passed first). Bad arguments and a closed
/// cache throw here (no `done`).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_cacheWaitForAsync<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, revision: jlong, timeout_ms: jlong, sink: JObject<'l>) {
    entry(&mut env, (), |env| {
        let wait = boundary::handle::<CacheHandle>(h, "cache")?.wait_for(revision, millis(timeout_ms)?)?;
        if sink.is_null() {
            return Err(invalid("sink must not be null"));
        }
        let sink = env.new_global_ref(&sink)?;
        etcdlock::runtime::linger::spawn_call(wait, move |outcome| {
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

fn millis(timeout_ms: i64) -> JResult<Duration> {
    // -1 (none): longer than any wait anyone makes; the core's wait takes a Duration.
    Ok(boundary::wait(timeout_ms)?.unwrap_or(Duration::from_secs(100 * 365 * 86_400)))
}

/// A stream of the copy's changes from now on, read by `followNext` (freed by `followFree`).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_cacheEvents<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| {
        let c = boundary::handle::<CacheHandle>(h, "cache")?;
        let events = Events { events: c.live()?.events(), client: c.client.clone() };
        Ok(follow::open(Stream::Cache(events)))
    })
}

/// A core event as a `CacheEvent` (`followNext`'s item for a cache's stream).
pub(crate) fn event_object<'l>(env: &mut JNIEnv<'l>, ev: CacheEvent) -> JResult<JObject<'l>> {
    let kind: jint = match ev.kind {
        CacheEventKind::Put => 0,
        CacheEventKind::Delete => 1,
        CacheEventKind::Resynced => 2,
    };
    let key = env.byte_array_from_slice(&ev.key)?;
    let value = env.byte_array_from_slice(&ev.value)?;
    let prev: JObject = match &ev.prev_value {
        Some(v) => env.byte_array_from_slice(v)?.into(),
        None => JObject::null(),
    };
    let args = [JValue::Int(kind), JValue::Object(&key), JValue::Object(&value), JValue::Object(&prev), JValue::Long(ev.revision)];
    Ok(env.call_static_method("io/etcdlock/CacheEvent", "of", "(I[B[B[BJ)Lio/etcdlock/CacheEvent;", &args)?.l()?)
}

/// Stops following: a wait in progress ends with CLOSED, the streams end. Idempotent.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_cacheClose<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let c = boundary::handle::<CacheHandle>(h, "cache")?;
        c.closed.cancel();
        c.cache.write().unwrap_or_else(|e| e.into_inner()).take();
        Ok(())
    })
}

/// Frees the handle (closing it first).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_cacheFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        if let Some(c) = boundary::take_handle::<CacheHandle>(h) {
            c.closed.cancel();
        }
        Ok(())
    })
}
