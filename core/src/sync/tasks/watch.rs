//! How a worker with nothing to claim waits for the queue to change: watches on new items and on
//! ended claims, opened once per wait and kept across the re-reads it triggers.
//!
//! The watches start "from now", not from the read's revision: a watch from an older revision
//! waits in etcd's unsynced group for up to 100 ms (so did a new item's claim). The gap between
//! the read and the watch is closed by reading again when a watch starts past the read's
//! revision; and, since a watch "from now" registered while a write commits is unsynced too
//! (`sync/mutex/wait.rs`, RECHECK_AFTER), by a few cheap looks for items put since the read
//! (one Range, keys only, limit 1) in the watch's first 110 ms.

use super::Inner;
use crate::client::closed_error;
use crate::error::{Error, ErrorKind, Result};
use crate::transport::backoff::Backoff;
use crate::watch::hub::{EventType, Msg, Spec, Subscription};
use etcd_client::GetOptions;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Whether an item was put after `revision` (one Range: keys only, at most one).
async fn put_since(q: &Inner, revision: i64) -> Result<bool> {
    let (from, end) = (q.keys.items(), super::claim::prefix_end(&q.keys.items()));
    let resp = q
        .client
        .call(None, true, move |rpc| {
            let (mut kv, from, end) = (rpc.kv.get(), from.clone(), end.clone());
            let o = GetOptions::new().with_range(end).with_keys_only().with_limit(1).with_min_create_revision(revision + 1);
            async move { kv.get(from, Some(o)).await }
        })
        .await?;
    Ok(!resp.kvs().is_empty())
}

/// When, after its watches were created, a waiting worker looks for new items anyway.
const RECHECK_AFTER: [std::time::Duration; 3] = [
    std::time::Duration::from_millis(5),
    std::time::Duration::from_millis(30),
    std::time::Duration::from_millis(110),
];

pub(super) struct Changes {
    items: Subscription,
    claims: Subscription,
    /// When the later of the two watches was created, and how many re-reads since were done.
    created: Option<Instant>,
    started: usize,
    rechecks: usize,
    backoff: Backoff,
}

impl Changes {
    pub(super) fn open(q: &Inner) -> Changes {
        let hub = &q.client.inner.hub;
        let spec = |key: Vec<u8>, only_deletes| Spec { key, prefix: true, start_revision: 0, prev_kv: false, only_deletes };
        Changes {
            items: hub.subscribe(spec(q.keys.items(), false)),
            claims: hub.subscribe(spec(q.keys.claims(), true)),
            created: None,
            started: 0,
            rechecks: 0,
            backoff: Backoff::default(),
        }
    }

    /// Returns once the queue may have changed since the read at `revision` (an item was put, a
    /// claim ended, a watch started past it, a re-read is due, or a watch broke: the caller
    /// reads again), or fails at the deadline, on cancel or on close.
    pub(super) async fn wait(&mut self, q: &Inner, revision: i64, cancel: Option<&CancellationToken>, deadline: Option<Instant>) -> Result<bool> {
        let closed = q.client.inner.closed.clone();
        let timed_out = || Error::new(ErrorKind::LockTimeout, format!("timed out waiting for a task in queue {:?}", String::from_utf8_lossy(q.keys.name())));
        loop {
            let recheck = self.created.and_then(|c| RECHECK_AFTER.get(self.rechecks).map(|d| c + *d));
            let (is_item, msg) = tokio::select! {
                biased;
                _ = closed.cancelled() => return Err(closed_error()),
                _ = async { match cancel { Some(c) => c.cancelled().await, None => std::future::pending().await } } => {
                    return Err(Error::new(ErrorKind::Cancelled, "claim cancelled"));
                }
                m = self.items.rx.recv() => (true, m),
                m = self.claims.rx.recv() => (false, m),
                _ = async { match recheck { Some(t) => tokio::time::sleep_until(t).await, None => std::future::pending().await } } => {
                    self.rechecks += 1;
                    if put_since(q, revision).await? {
                        return Ok(true);
                    }
                    continue;
                }
                _ = async { match deadline { Some(d) => tokio::time::sleep_until(d).await, None => std::future::pending().await } } => return Err(timed_out()),
            };
            match msg {
                // A new item, or a claim (or delay) that ended; an ack elsewhere wakes nobody.
                Some(Msg::Events(events)) if !is_item || events.iter().any(|e| e.event_type == EventType::Put) => return Ok(true),
                Some(Msg::Created { revision: at }) => {
                    self.backoff.reset();
                    self.started += 1;
                    if self.started == 2 {
                        self.created = Some(Instant::now());
                    }
                    if at > revision {
                        return Ok(true);
                    }
                }
                Some(Msg::Progress { .. } | Msg::Events(_)) => self.backoff.reset(),
                // Broken or ended (compaction): read again, after a pause if it keeps breaking;
                // the caller opens new watches (`false`).
                Some(Msg::Failed(_)) | None => {
                    let pause = self.backoff.next_delay();
                    if deadline.is_some_and(|d| Instant::now() + pause >= d) {
                        return Err(timed_out());
                    }
                    tokio::time::sleep(pause).await;
                    return Ok(false);
                }
            }
        }
    }
}
