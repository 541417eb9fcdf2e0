//! An election's observer, a service's discovery and a cache's events, read one item per
//! `followNext` by the Java `ElectionObserver` / `Discovery` / `CacheEvents` (their iterator and
//! `Flow.Publisher` both read through it). The core's `Follow::next` is cancel-safe: a read cut off by the timeout or a close loses
//! nothing. Following, merging and resuming are the core's.

use crate::boundary::{self, entry, JResult};
use crate::client::ClientHandle;
use crate::registry::instances_object;
use etcdlock::{CancellationToken, Discovery, Follow, Instances, Leader, Observer};
use jni::objects::{JClass, JObject, JString, JValue};
use jni::sys::{jlong, jobject};
use jni::JNIEnv;
use std::sync::Arc;
use std::time::Duration;

/// Reading the leader or observing needs no lease, but an election handle takes a TTL: any
/// valid one does.
pub(crate) const READ_TTL_S: i64 = 60;

pub(crate) enum Stream {
    Observer(Observer),
    Discovery(Discovery),
    Cache(crate::cache::Events),
}

pub(crate) enum Item {
    Leader(Option<Leader>),
    Instances(Instances),
    /// None once the cache stopped: the stream has ended.
    CacheEvent(Option<etcdlock::CacheEvent>),
}

impl Stream {
    async fn next(&mut self) -> etcdlock::Result<Item> {
        match self {
            Stream::Observer(o) => Follow::next(o).await.map(Item::Leader),
            Stream::Discovery(d) => Follow::next(d).await.map(Item::Instances),
            Stream::Cache(c) => c.next().await.map(Item::CacheEvent),
        }
    }
}

pub(crate) struct FollowHandle {
    /// One reader at a time (the Java side serialises them too).
    stream: Arc<tokio::sync::Mutex<Stream>>,
    /// Cancelled by close: a read in progress returns "ended" at once.
    closed: CancellationToken,
}

/// A handle for `followNext` / `followClose` / `followFree` reading `stream`.
pub(crate) fn open(stream: Stream) -> i64 {
    boundary::into_handle(FollowHandle { stream: Arc::new(tokio::sync::Mutex::new(stream)), closed: CancellationToken::new() })
}

/// Opens an observer of election `name` (kind 0) or a discovery of service `name` (kind 1).
/// Sends nothing until the first `followNext`. Bad names throw here.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_followOpen<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, client: jlong, name: JString<'l>, kind: jlong) -> jlong {
    entry(&mut env, 0, |env| {
        let client = boundary::handle::<ClientHandle>(client, "client")?.client.clone();
        let name = boundary::string(env, &name, "name")?;
        if client.is_closed() {
            return Err(etcdlock::Error::new(etcdlock::ErrorKind::Closed, "the client is closed").into());
        }
        let stream = match kind {
            0 => Stream::Observer(client.election(name, READ_TTL_S)?.observe()),
            _ => Stream::Discovery(client.discover(name)?),
        };
        Ok(open(stream))
    })
}

enum Next {
    Item(Item),
    TimedOut,
    Ended,
}

/// The next state: an `Optional<Leader>` (observer), `Instances` (discovery) or a `CacheEvent`
/// (a cache's events; null once the cache was closed); `timedOut`
/// itself when `timeout_ms` (-1: none) passed first; null once closed. A core error (CLOSED
/// when the client closed...) is thrown, after which the stream has ended.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_followNext<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, timeout_ms: jlong, timed_out: JObject<'l>) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let f = boundary::handle::<FollowHandle>(h, "stream")?;
        let timeout = boundary::wait(timeout_ms)?;
        let (stream, closed) = (f.stream.clone(), f.closed.clone());
        let next = boundary::block(async move {
            let read = async {
                let mut s = stream.lock().await;
                s.next().await.map(Next::Item)
            };
            tokio::select! {
                biased;
                _ = closed.cancelled() => Ok(Next::Ended),
                r = within(timeout, read) => r,
            }
        })?;
        match next {
            Next::Ended => Ok(std::ptr::null_mut()),
            Next::TimedOut => Ok(env.new_local_ref(&timed_out)?.into_raw()),
            Next::Item(Item::Leader(l)) => Ok(leader_object(env, l)?.into_raw()),
            Next::Item(Item::Instances(set)) => Ok(instances_object(env, &set)?.into_raw()),
            Next::Item(Item::CacheEvent(None)) => Ok(std::ptr::null_mut()),
            Next::Item(Item::CacheEvent(Some(ev))) => Ok(crate::cache::event_object(env, ev)?.into_raw()),
        }
    })
}

async fn within(timeout: Option<Duration>, read: impl std::future::Future<Output = etcdlock::Result<Next>>) -> etcdlock::Result<Next> {
    match timeout {
        None => read.await,
        Some(d) => tokio::time::timeout(d, read).await.unwrap_or(Ok(Next::TimedOut)),
    }
}

/// `Leader.of(...)` as an `Optional<Leader>`: empty for no leader.
pub(crate) fn leader_object<'l>(env: &mut JNIEnv<'l>, leader: Option<Leader>) -> JResult<JObject<'l>> {
    let Some(l) = leader else {
        return Ok(env.call_static_method("io/etcdlock/Leader", "none", "()Ljava/util/Optional;", &[])?.l()?);
    };
    let value = env.byte_array_from_slice(&l.value)?;
    let key = env.byte_array_from_slice(&l.key)?;
    let args = [JValue::Object(&value), JValue::Object(&key), JValue::Long(l.revision), JValue::Long(l.lease)];
    Ok(env.call_static_method("io/etcdlock/Leader", "of", "([B[BJJ)Ljava/util/Optional;", &args)?.l()?)
}

/// Ends the stream: a read in progress returns "ended". Idempotent.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_followClose<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        boundary::handle::<FollowHandle>(h, "stream")?.closed.cancel();
        Ok(())
    })
}

/// Frees the handle (the core stream, and its watch, go with the last reference).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_followFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        if let Some(f) = boundary::take_handle::<FollowHandle>(h) {
            f.closed.cancel();
        }
        Ok(())
    })
}

/// The current leader of election `name` as an `Optional<Leader>` (one read).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_electionLeader<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, client: jlong, name: JString<'l>) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let client = boundary::handle::<ClientHandle>(client, "client")?.client.clone();
        let name = boundary::string(env, &name, "name")?;
        let election = client.election(name, READ_TTL_S)?;
        let leader = boundary::block(async move { election.leader().await })?;
        Ok(leader_object(env, leader)?.into_raw())
    })
}
