//! The events the core emits (target `etcdlock`), as an application's tracing subscriber sees
//! them. Each test in a process of its own (`alone!`): the subscriber is process-wide (the
//! library's runtime threads emit too), set once there.
use crate::common::*;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tracing::field::{Field, Visit};

#[derive(Debug, Clone)]
struct Seen {
    level: tracing::Level,
    fields: Vec<(String, String)>,
}

impl Seen {
    fn get(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// Keeps every event of target `etcdlock`, with its fields as text.
struct Recorder(Arc<Mutex<Vec<Seen>>>);

struct Fields(Vec<(String, String)>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().into(), value.into()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().into(), format!("{value:?}")));
    }
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, meta: &tracing::Metadata<'_>) -> bool {
        meta.target() == "etcdlock"
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields(Vec::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push(Seen { level: *event.metadata().level(), fields: fields.0 });
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

fn events() -> Arc<Mutex<Vec<Seen>>> {
    static SEEN: OnceLock<Arc<Mutex<Vec<Seen>>>> = OnceLock::new();
    SEEN.get_or_init(|| {
        let seen = Arc::new(Mutex::new(Vec::new()));
        tracing::subscriber::set_global_default(Recorder(seen.clone())).expect("the only subscriber");
        seen
    })
    .clone()
}

/// The first event with `message` whose `lock` field is `lock`.
fn find(seen: &Mutex<Vec<Seen>>, message: &str, lock: &str) -> Option<Seen> {
    seen.lock().unwrap().iter().find(|e| e.get("message") == Some(message) && e.get("lock") == Some(lock)).cloned()
}

// covers: OBS-EVENT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_lock_is_a_warn_event_with_its_name_token_and_reason() {
    crate::alone!(a_lost_lock_is_a_warn_event_with_its_name_token_and_reason);
    let seen = events();
    let client = client().await;
    let name = prefix("events") + "lost";
    let guard = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let token = guard.fencing_token();
    let acquired = find(&seen, "lock acquired", &name).expect("an acquired event");
    assert_eq!((acquired.level, acquired.get("token")), (tracing::Level::DEBUG, Some(token.to_string().as_str())));

    // An operator deletes the holder's key.
    let lost = guard.lost();
    raw(&shared().endpoints()).await.delete(guard.key().to_vec(), None).await.unwrap();
    let reason = tokio::time::timeout(Duration::from_secs(5), lost.wait()).await.expect("lost within 5 s");
    assert_eq!(reason, etcdlock::LostReason::KeyDeleted);

    let warn = find(&seen, "lock lost: it may be held by another client now", &name).expect("a lost event");
    assert_eq!(warn.level, tracing::Level::WARN);
    assert_eq!(warn.get("token"), Some(token.to_string().as_str()));
    assert_eq!(warn.get("reason"), Some("key_deleted"));
    assert!(warn.get("held_ms").is_some(), "{warn:?}");
    let _ = guard.release().await;
    client.close().await;
}

// covers: OBS-EVENT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_is_a_debug_event_and_not_a_loss() {
    crate::alone!(a_release_is_a_debug_event_and_not_a_loss);
    let seen = events();
    let client = client().await;
    let name = prefix("events") + "released";
    let guard = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    guard.release().await.unwrap();
    let released = find(&seen, "lock released", &name).expect("a released event");
    assert_eq!(released.level, tracing::Level::DEBUG);
    client.close().await;
    // Closing the client after the release is no loss of that lock.
    assert!(find(&seen, "lock lost: it may be held by another client now", &name).is_none());
}
