//! The bindings' bridge (`runtime::log`): sinks get the core's events as records. In a process
//! of its own (`alone!`): the first sink installs the process-wide subscriber.
use crate::common::*;
use etcdlock::runtime::log::{add_sink, remove_sink, set_level, LogLevel, LogRecord, LogValue};
use std::sync::{Arc, Mutex};
use std::time::Duration;

// covers: OBS-EVENT-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sink_gets_the_lost_lock_as_a_warn_record_and_nothing_after_removal() {
    crate::alone!(a_sink_gets_the_lost_lock_as_a_warn_record_and_nothing_after_removal);
    let seen: Arc<Mutex<Vec<LogRecord>>> = Arc::default();
    let s = seen.clone();
    let id = add_sink(LogLevel::Warn, Arc::new(move |r: &LogRecord| s.lock().unwrap().push(r.clone()))).unwrap();
    let client = client().await;
    let name = prefix("logsink") + "lost";
    let guard = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let token = guard.fencing_token();
    let ours = |message: &str| {
        seen.lock().unwrap().iter().filter(|r| r.message.starts_with(message) && r.field("lock") == Some(&LogValue::Str(name.clone()))).cloned().collect::<Vec<_>>()
    };
    assert!(ours("lock acquired").is_empty(), "DEBUG is below the sink's level");

    let lost = guard.lost();
    raw(&shared().endpoints()).await.delete(guard.key().to_vec(), None).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), lost.wait()).await.expect("lost within 5 s");
    let records = ours("lock lost");
    assert_eq!(records.len(), 1, "{records:?}");
    let r = &records[0];
    assert_eq!((r.level, r.area), (LogLevel::Warn, "lock"));
    assert_eq!(r.field("token"), Some(&LogValue::I64(token)));
    assert_eq!(r.field("reason"), Some(&LogValue::Str("key_deleted".into())));
    assert!(matches!(r.field("held_ms"), Some(LogValue::U64(_))));
    assert!(r.text().starts_with(&format!("lock lost: it may be held by another client now lock={name} token={token} reason=key_deleted held_ms=")));

    // At DEBUG, the next acquisition is seen; removed, nothing more arrives.
    set_level(id, Some(LogLevel::Debug)).unwrap();
    let g = client.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    assert_eq!(ours("lock acquired").len(), 1);
    remove_sink(id).unwrap();
    g.release().await.unwrap();
    assert!(ours("lock released").is_empty());
    client.close().await;
}
