//! Watching a key we wrote (a waiter's or holder's queue key) for its deletion: the one way the
//! mutex's wait and a held lock's monitor learn that someone deleted it.
//!
//! The watch opens only at a given time (most waits and holds are short, and a watch costs the
//! server), starts at the revision after the key's creation so that a delete before it opened
//! is still seen, resumes after a broken stream, and, when that start was compacted away,
//! looks at the key itself: a delete in between is no longer in etcd's history.

use crate::transport::backoff::Backoff;
use crate::error::{ErrorKind, Result};
use crate::client::Client;
use crate::watch::hub::{EventType, Msg, Spec, Subscription};
use etcd_client::GetOptions;
use tokio::time::Instant;

/// A waiter (or holder) starts watching its own key for deletion only after this long.
pub(crate) const WATCH_OWN_KEY_AFTER: std::time::Duration = std::time::Duration::from_millis(50);

pub(crate) struct OwnKey {
    client: Client,
    spec: Spec,
    /// The key's create revision: a key of that name created later is not ours.
    created: i64,
    sub: Option<Subscription>,
    /// When to (re)open the watch, while there is none.
    open_at: Instant,
    backoff: Backoff,
}

impl OwnKey {
    /// Watches `key`, created at revision `created`, from `open_at` on; or with `sub` at once,
    /// a watch of it already open.
    pub fn new(client: &Client, key: Vec<u8>, created: i64, open_at: Instant, sub: Option<Subscription>) -> OwnKey {
        let spec = Spec { key, prefix: false, start_revision: created + 1, prev_kv: false, only_deletes: true };
        OwnKey { client: client.clone(), spec, created, sub, open_at, backoff: Backoff::default() }
    }

    /// Returns once the key is deleted (never, while it stays). Cancel-safe: dropped and
    /// called again, it goes on where it was.
    pub async fn deleted(&mut self) {
        loop {
            let Some(sub) = self.sub.as_mut() else {
                if Instant::now() < self.open_at {
                    // Boxed: a timer is over a hundred bytes, and a held lock's monitor would
                    // carry it for as long as it holds.
                    Box::pin(tokio::time::sleep_until(self.open_at)).await;
                }
                self.sub = Some(self.client.inner.hub.subscribe(self.spec.clone()));
                continue;
            };
            match sub.rx.recv().await {
                Some(Msg::Events(events)) if events.iter().any(|e| e.event_type == EventType::Delete) => return,
                Some(Msg::Created { .. }) => self.backoff.reset(),
                Some(Msg::Failed(e)) if e.kind() == ErrorKind::Compacted => {
                    self.sub = None;
                    // Boxed: rare, and a request's future would make every held lock's monitor kilobytes larger.
                    match Box::pin(still_there(&self.client, &self.spec.key, self.created)).await {
                        Ok(None) => return,
                        Ok(Some(revision)) => {
                            self.spec.start_revision = revision + 1;
                            self.open_at = Instant::now();
                        }
                        Err(_) => self.open_at = Instant::now() + self.backoff.next_delay(),
                    }
                }
                Some(_) => {}
                // The stream broke: resume from where the watch was after a pause (from the
                // key's creation, so a delete meanwhile is still seen).
                None => {
                    self.sub = None;
                    self.open_at = Instant::now() + self.backoff.next_delay();
                }
            }
        }
    }

    /// The open watch, if any, for whoever watches the key next.
    pub fn into_subscription(self) -> Option<Subscription> {
        self.sub
    }
}

/// After a watch of our key lost its history: the revision to watch on from if the key is
/// still the one created at `created`, else None.
async fn still_there(client: &Client, key: &[u8], created: i64) -> Result<Option<i64>> {
    let key = key.to_vec();
    let resp = client
        .call(None, true, move |rpc| {
            let (mut kv, key) = (rpc.kv.get(), key.clone());
            async move { kv.get(key, Some(GetOptions::new().with_keys_only())).await }
        })
        .await?;
    let ours = resp.kvs().first().is_some_and(|kv| kv.create_revision() == created);
    Ok(ours.then(|| resp.header().map_or(0, |h| h.revision())))
}
