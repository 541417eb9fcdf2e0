//! Following etcd: one watch of the prefix from the copy's revision + 1, each revision's events
//! applied together; a compaction is met by reading the prefix again (`resync`).

use super::{load, CacheEvent, CacheEventKind, Inner};
use crate::client::kv::KeyValue;
use crate::client::Client;
use crate::error::ErrorKind;
use crate::transport::backoff::Backoff;
use crate::watch::event::EventType;
use crate::watch::hub::{Msg, Spec, WatchEvent};
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

pub(super) fn start(client: Client, inner: Weak<Inner>, from: i64) {
    let Some(strong) = inner.upgrade() else { return };
    let (prefix, stop) = (strong.prefix.clone(), strong.stop.clone());
    drop(strong);
    crate::runtime::spawn(async move {
        // However the task ends (the client closed, the last handle dropped, the watch failed),
        // waits on the copy end with it (`Cache::wait_for`, `CacheEvents::next`).
        let _stopped = stop.clone().drop_guard();
        let mut revision = from;
        let mut backoff = Backoff::default();
        loop {
            let spec = Spec { key: prefix.clone(), prefix: true, start_revision: revision + 1, prev_kv: false, only_deletes: false };
            let mut sub = client.inner.hub.subscribe(spec);
            loop {
                let msg = tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = client.inner.closed.cancelled() => return,
                    m = sub.rx.recv() => m,
                };
                let Some(inner) = inner.upgrade() else { return };
                match msg {
                    Some(Msg::Created { .. }) => backoff.reset(),
                    Some(Msg::Events(events)) => revision = apply(&inner, events, revision),
                    Some(Msg::Progress { revision: r }) if r > revision => {
                        revision = r;
                        inner.state.write().unwrap_or_else(|e| e.into_inner()).revision = r;
                        inner.revision.send_replace(r);
                    }
                    Some(Msg::Progress { .. }) => {}
                    Some(Msg::Failed(e)) if e.kind() == ErrorKind::Compacted => {
                        match load::load(&client, &prefix).await {
                            Ok((map, at)) => revision = resync(&inner, map, at),
                            Err(e) => tracing::warn!(target: "etcdlock", error = %e, "cache: reading the prefix again failed; retrying"),
                        }
                        break;
                    }
                    Some(Msg::Failed(e)) => {
                        tracing::warn!(target: "etcdlock", error = %e, "cache: the watch ended; the copy no longer follows etcd");
                        return;
                    }
                    None => break,
                }
            }
            // Resume from the copy's revision + 1, after a pause if it keeps breaking.
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = client.inner.closed.cancelled() => return,
                _ = tokio::time::sleep(backoff.next_delay()) => {}
            }
        }
    });
}

/// Applies `events` (in revision order), one revision at a time: the copy changes, then that
/// revision's events go out, then the revision is published. Returns the copy's revision.
fn apply(inner: &Arc<Inner>, events: Vec<WatchEvent>, mut at: i64) -> i64 {
    let mut i = 0;
    while i < events.len() {
        let rev = events[i].revision();
        let end = events[i..].iter().position(|e| e.revision() != rev).map_or(events.len(), |n| i + n);
        if rev <= at {
            i = end; // never applied twice
            continue;
        }
        let mut out = Vec::with_capacity(end - i);
        {
            let mut s = inner.state.write().unwrap_or_else(|e| e.into_inner());
            for e in &events[i..end] {
                let key = e.kv.key.clone();
                let (kind, prev) = match e.event_type {
                    EventType::Put => (CacheEventKind::Put, s.map.insert(key.clone(), e.kv.clone())),
                    EventType::Delete => (CacheEventKind::Delete, s.map.remove(&key)),
                };
                let value = if kind == CacheEventKind::Put { e.kv.value.clone() } else { Vec::new() };
                out.push(CacheEvent { kind, key, value, prev_value: prev.map(|kv| kv.value), revision: rev });
            }
            s.revision = rev;
        }
        for ev in out {
            let _ = inner.events.send(ev);
        }
        inner.revision.send_replace(rev);
        at = rev;
        i = end;
    }
    at
}

/// Replaces the copy with `map` read at `at`, delivering the differences as events (a key whose
/// create revision changed was deleted and created again: a delete, then a put) and a
/// `Resynced` marker. Returns `at`.
fn resync(inner: &Arc<Inner>, map: BTreeMap<Vec<u8>, KeyValue>, at: i64) -> i64 {
    let mut out = Vec::new();
    {
        let mut s = inner.state.write().unwrap_or_else(|e| e.into_inner());
        let ev = |kind, key: &[u8], value: Vec<u8>, prev: Option<Vec<u8>>| CacheEvent { kind, key: key.to_vec(), value, prev_value: prev, revision: at };
        for (key, old) in &s.map {
            match map.get(key) {
                None => out.push(ev(CacheEventKind::Delete, key, Vec::new(), Some(old.value.clone()))),
                Some(new) if new.create_revision != old.create_revision => {
                    out.push(ev(CacheEventKind::Delete, key, Vec::new(), Some(old.value.clone())));
                    out.push(ev(CacheEventKind::Put, key, new.value.clone(), None));
                }
                Some(new) if new.mod_revision != old.mod_revision => out.push(ev(CacheEventKind::Put, key, new.value.clone(), Some(old.value.clone()))),
                Some(_) => {}
            }
        }
        for (key, new) in map.iter().filter(|(k, _)| !s.map.contains_key(*k)) {
            out.push(ev(CacheEventKind::Put, key, new.value.clone(), None));
        }
        out.push(ev(CacheEventKind::Resynced, b"", Vec::new(), None));
        s.map = map;
        s.revision = at;
    }
    tracing::info!(target: "etcdlock", revision = at, changes = out.len() - 1, "cache: read the prefix again after a compaction");
    for e in out {
        let _ = inner.events.send(e);
    }
    inner.revision.send_replace(at);
    at
}
