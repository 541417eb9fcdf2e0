//! The core's spans (`etcdlock::spans`), as an application's tracing subscriber sees them: a
//! subscriber that keeps every span of target `etcdlock` with its fields, what it follows from,
//! and whether it closed. Each test in a process of its own (`alone!`): the subscriber is
//! process-wide, set once there.
use crate::common::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};

#[derive(Debug, Clone, Default)]
pub(crate) struct SpanSeen {
    pub(crate) id: u64,
    pub(crate) name: &'static str,
    fields: HashMap<String, String>,
    pub(crate) follows: Vec<u64>,
    pub(crate) closed: bool,
}

impl SpanSeen {
    pub(crate) fn get(&self, field: &str) -> Option<&str> {
        self.fields.get(field).map(String::as_str)
    }
}

#[derive(Default)]
pub(crate) struct Spans {
    next: AtomicU64,
    /// By id; ids are never reused here, so a closed span stays readable.
    pub(crate) all: Mutex<HashMap<u64, SpanSeen>>,
    /// Clones per span id (`clone_span` up, `try_close` down), to know when one closes.
    refs: Mutex<HashMap<u64, usize>>,
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.to_string());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
}

struct Recorder(Arc<Spans>);

impl tracing::Subscriber for Recorder {
    fn enabled(&self, meta: &tracing::Metadata<'_>) -> bool {
        meta.target() == "etcdlock" && meta.is_span()
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.0.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut seen = SpanSeen { id, name: attrs.metadata().name(), ..Default::default() };
        attrs.record(&mut Fields(&mut seen.fields));
        self.0.all.lock().unwrap().insert(id, seen);
        self.0.refs.lock().unwrap().insert(id, 1);
        Id::from_u64(id)
    }
    fn record(&self, id: &Id, values: &Record<'_>) {
        if let Some(s) = self.0.all.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut s.fields));
        }
    }
    fn record_follows_from(&self, id: &Id, follows: &Id) {
        if let Some(s) = self.0.all.lock().unwrap().get_mut(&id.into_u64()) {
            s.follows.push(follows.into_u64());
        }
    }
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
    fn clone_span(&self, id: &Id) -> Id {
        *self.0.refs.lock().unwrap().entry(id.into_u64()).or_default() += 1;
        id.clone()
    }
    fn try_close(&self, id: Id) -> bool {
        let mut refs = self.0.refs.lock().unwrap();
        let n = refs.entry(id.into_u64()).or_default();
        *n = n.saturating_sub(1);
        if *n > 0 {
            return false;
        }
        if let Some(s) = self.0.all.lock().unwrap().get_mut(&id.into_u64()) {
            s.closed = true;
        }
        true
    }
}

pub(crate) fn spans() -> Arc<Spans> {
    static SEEN: OnceLock<Arc<Spans>> = OnceLock::new();
    SEEN.get_or_init(|| {
        let seen = Arc::new(Spans::default());
        tracing::subscriber::set_global_default(Recorder(seen.clone())).expect("the only subscriber");
        seen
    })
    .clone()
}

/// The spans called `name` whose `etcdlock.name` is `of`, oldest first.
pub(crate) fn named(seen: &Spans, name: &str, of: &str) -> Vec<SpanSeen> {
    let mut v: Vec<SpanSeen> = seen.all.lock().unwrap().values().filter(|s| s.name == name && s.get("etcdlock.name") == Some(of)).cloned().collect();
    v.sort_by_key(|s| s.id);
    v
}

/// The one span called `name` for `of`, once it closed (spans end on the caller's side, but a
/// hold may end on a runtime thread: waits at most 5 s).
pub(crate) async fn closed(seen: &Spans, name: &str, of: &str) -> SpanSeen {
    let ended = eventually(Duration::from_secs(5), || async { named(seen, name, of).iter().any(|s| s.closed) }).await;
    let all = named(seen, name, of);
    assert!(ended, "no closed {name} span for {of}: {all:?}");
    assert_eq!(all.len(), 1, "{all:?}");
    all[0].clone()
}

// covers: TRACE-SPANS-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acquire_hold_and_release_are_spans_with_the_name_token_and_outcome() {
    crate::alone!(acquire_hold_and_release_are_spans_with_the_name_token_and_outcome);
    let seen = spans();
    let client = client().await;
    let name = prefix("spans") + "held";
    let guard = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let token = guard.fencing_token().to_string();

    let acquire = closed(&seen, etcdlock::spans::ACQUIRE, &name).await;
    assert_eq!((acquire.get("etcdlock.outcome"), acquire.get("etcdlock.fencing_token")), (Some("acquired"), Some(token.as_str())));
    let hold = named(&seen, etcdlock::spans::HOLD, &name);
    assert_eq!(hold.len(), 1, "{hold:?}");
    assert!(!hold[0].closed, "a hold span is open while the lock is held: {hold:?}");
    assert_eq!(hold[0].follows, vec![acquire.id], "the hold follows from its acquire");

    guard.release().await.unwrap();
    let hold = closed(&seen, etcdlock::spans::HOLD, &name).await;
    assert_eq!((hold.get("etcdlock.outcome"), hold.get("etcdlock.fencing_token")), (Some("released"), Some(token.as_str())));
    let release = closed(&seen, etcdlock::spans::RELEASE, &name).await;
    assert_eq!((release.get("etcdlock.outcome"), release.get("etcdlock.fencing_token")), (Some("released"), Some(token.as_str())));
    assert_eq!(release.get("etcdlock.error_kind"), None);

    // A guard dropped without release ends its hold too.
    let dropped = client.mutex(name.clone() + "-dropped", 10).unwrap().lock().await.unwrap();
    drop(dropped);
    let hold = closed(&seen, etcdlock::spans::HOLD, &(name.clone() + "-dropped")).await;
    assert_eq!(hold.get("etcdlock.outcome"), Some("dropped"));
    client.close().await;
}

// covers: TRACE-SPANS-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_acquire_is_a_span_with_its_error_kind_and_no_hold() {
    crate::alone!(a_timed_out_acquire_is_a_span_with_its_error_kind_and_no_hold);
    let seen = spans();
    let (a, b) = (client().await, client().await);
    let name = prefix("spans") + "busy";
    let held = a.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let opts = etcdlock::LockOptions { timeout: Some(Duration::from_millis(300)), ..Default::default() };
    let err = b.mutex(name.clone(), 10).unwrap().lock_with(opts).await.unwrap_err();
    assert_eq!(err.kind(), etcdlock::ErrorKind::LockTimeout);

    let acquires = named(&seen, etcdlock::spans::ACQUIRE, &name);
    assert_eq!(acquires.len(), 2, "{acquires:?}");
    let waited = &acquires[1];
    assert!(waited.closed, "{waited:?}");
    assert_eq!((waited.get("etcdlock.outcome"), waited.get("etcdlock.error_kind")), (Some("timeout"), Some("LOCK_TIMEOUT")));
    assert_eq!(waited.get("etcdlock.fencing_token"), None);
    assert_eq!(named(&seen, etcdlock::spans::HOLD, &name).len(), 1, "only the holder's hold");
    held.release().await.unwrap();
    a.close().await;
    b.close().await;
}

// covers: TRACE-SPANS-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_hold_ends_its_span_as_lost_with_the_reason() {
    crate::alone!(a_lost_hold_ends_its_span_as_lost_with_the_reason);
    let seen = spans();
    let client = client().await;
    let name = prefix("spans") + "lost";
    let guard = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let lost = guard.lost();
    // An operator revokes the holder's lease.
    raw(&shared().endpoints()).await.lease_revoke(guard.lease_id()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), lost.wait()).await.expect("lost within 5 s");

    let hold = closed(&seen, etcdlock::spans::HOLD, &name).await;
    assert_eq!(hold.get("etcdlock.outcome"), Some("lost"), "{hold:?}");
    assert_eq!(hold.get("etcdlock.error_kind"), Some("LOCK_LOST"));
    assert!(matches!(hold.get("etcdlock.lost_reason"), Some("revoked" | "key_deleted")), "{hold:?}");
    // The release after the loss fails, and does not end the hold again.
    let err = guard.release().await.unwrap_err();
    assert_eq!(err.kind(), etcdlock::ErrorKind::NotHeld);
    let release = closed(&seen, etcdlock::spans::RELEASE, &name).await;
    assert_eq!((release.get("etcdlock.outcome"), release.get("etcdlock.error_kind")), (Some("error"), Some("NOT_HELD")));
    assert_eq!(closed(&seen, etcdlock::spans::HOLD, &name).await.get("etcdlock.outcome"), Some("lost"));
    client.close().await;
}

// covers: TRACE-SPANS-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn campaign_leadership_task_claim_ack_and_registration_are_spans() {
    crate::alone!(campaign_leadership_task_claim_ack_and_registration_are_spans);
    let seen = spans();
    let client = client().await;
    let base = prefix("spans");

    let election = base.clone() + "election";
    let leading = client.election(election.clone(), 10).unwrap().campaign("me").await.unwrap();
    let token = leading.fencing_token().to_string();
    let campaign = closed(&seen, etcdlock::spans::CAMPAIGN, &election).await;
    assert_eq!((campaign.get("etcdlock.outcome"), campaign.get("etcdlock.fencing_token")), (Some("acquired"), Some(token.as_str())));
    assert!(named(&seen, etcdlock::spans::ACQUIRE, &election).is_empty(), "a campaign is no acquire span too");
    leading.resign().await.unwrap();
    let lead = closed(&seen, etcdlock::spans::LEAD, &election).await;
    assert_eq!((lead.get("etcdlock.outcome"), lead.get("etcdlock.fencing_token")), (Some("released"), Some(token.as_str())));

    let queue_name = base.clone() + "queue";
    let queue = client.queue(queue_name.clone(), etcdlock::QueueOptions::default()).unwrap();
    let id = queue.put(b"job", etcdlock::TaskOptions::default()).await.unwrap();
    let task = queue.claim(etcdlock::ClaimOptions::default()).await.unwrap();
    let token = task.fencing_token().to_string();
    let claim = closed(&seen, etcdlock::spans::TASK_CLAIM, &queue_name).await;
    assert_eq!((claim.get("etcdlock.outcome"), claim.get("etcdlock.fencing_token"), claim.get("etcdlock.task_id")), (Some("acquired"), Some(token.as_str()), Some(id.as_str())));
    task.ack().await.unwrap();
    let ack = closed(&seen, etcdlock::spans::TASK_ACK, &queue_name).await;
    assert_eq!((ack.get("etcdlock.outcome"), ack.get("etcdlock.task_id")), (Some("acked"), Some(id.as_str())));
    // The claim's own locks are the library's: no acquire or hold spans of theirs.
    let all = seen.all.lock().unwrap().values().filter(|s| s.get("etcdlock.name").is_some_and(|n| n.starts_with(&queue_name))).map(|s| s.name).collect::<Vec<_>>();
    assert!(all.iter().all(|n| n.starts_with("etcdlock.task.")), "{all:?}");

    let service = base + "svc";
    let reg = client.register(&service, "node-1", b"10.0.0.7:1".to_vec(), 10).await.unwrap();
    let register = closed(&seen, etcdlock::spans::REGISTER, &(service.clone() + "/node-1")).await;
    assert_eq!(register.get("etcdlock.outcome"), Some("registered"));
    reg.close().await.unwrap();
    let taken = client.register(&service, "node-1", b"x".to_vec(), 10).await.unwrap();
    let err = client.register(&service, "node-1", b"y".to_vec(), 10).await.unwrap_err();
    let failed = named(&seen, etcdlock::spans::REGISTER, &(service.clone() + "/node-1"));
    assert_eq!(failed.len(), 3, "{failed:?}");
    assert_eq!((failed[2].get("etcdlock.outcome"), failed[2].get("etcdlock.error_kind")), (Some("error"), Some(err.kind().code())));
    taken.close().await.unwrap();
    client.close().await;
}
