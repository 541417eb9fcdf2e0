//! A local copy of a prefix, kept in step with etcd ("an informer for etcd"): loaded at one
//! revision, then changed a whole revision at a time by a watch from the next revision, which
//! resumes across disconnects without gap or duplicate (`watch/`). When the history it needs
//! was compacted, it reads the prefix again, delivers the differences as ordinary events (a key
//! deleted and created again in the gap as a delete then a put) and one `Resynced` marker.
//!
//! Reads from the copy are not linearizable: it is at [`Cache::revision`], which may be behind
//! etcd. [`Cache::wait_for`] waits until it has caught up with a revision (read-your-writes
//! after a write under the prefix); [`Client::get`] is the linearizable read beside it.
//!
//! ```
//! # #[tokio::main] async fn main() -> etcdlock::Result<()> {
//! # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
//! # let client = etcdlock::Client::connect(etcd.endpoints(), Default::default()).await?;
//! use std::time::Duration;
//! let cache = client.cache("config/").await?;
//! let rev = client.put(b"config/a", b"1", None).await?;
//! cache.wait_for(rev, Duration::from_secs(5)).await?;
//! assert_eq!(cache.get(b"config/a").map(|kv| kv.value), Some(b"1".to_vec()));
//! let mut events = cache.events();
//! # client.put(b"config/b", b"2", None).await?;
//! while let Some(ev) = events.next().await {
//!     println!("{:?} {:?} at {}", ev.kind, ev.key, ev.revision);
//! #   assert_eq!(ev.key, b"config/b"); break; // (the doc test stops at the first)
//! }
//! # client.close().await; Ok(()) }
//! ```

mod follow;
pub(crate) mod load;

use crate::client::kv::KeyValue;
use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

/// Events kept for a slow reader of [`Cache::events`]; one that falls further behind gets a
/// `Resynced` marker (read [`Cache::snapshot`] again) instead of what it missed.
const BACKLOG: usize = 4096;

/// What a [`CacheEvent`] tells: a key written, a key deleted, or that the copy was read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheEventKind {
    /// The key was created or its value replaced (`prev_value` says which).
    Put,
    /// The key was deleted (explicitly, or by its lease's expiry).
    Delete,
    /// The copy was read again (after a compaction, or a reader that fell behind): what it
    /// knew may have changed in ways no event told; the events before this one say how.
    Resynced,
}

/// A change of the copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheEvent {
    /// A put, a delete, or the `Resynced` marker.
    pub kind: CacheEventKind,
    /// The full key, prefix included (empty for the marker).
    pub key: Vec<u8>,
    /// The new value (empty for a delete and the marker).
    pub value: Vec<u8>,
    /// The value before, if the copy had the key.
    pub prev_value: Option<Vec<u8>>,
    /// The etcd revision of the change: the copy is at this revision once it is delivered. After
    /// a read again, every difference and the marker carry the revision of that read.
    pub revision: i64,
}

/// A local copy of a prefix. Cheap to clone; the copy stops following etcd when the last clone
/// is dropped or the client closes.
#[derive(Debug, Clone)]
pub struct Cache {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) prefix: Vec<u8>,
    pub(crate) state: RwLock<State>,
    pub(crate) events: broadcast::Sender<CacheEvent>,
    pub(crate) revision: watch::Sender<i64>,
    pub(crate) stop: CancellationToken,
}

#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) map: BTreeMap<Vec<u8>, KeyValue>,
    pub(crate) revision: i64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Client {
    /// Loads the prefix at one revision and follows it from there. `prefix` may be empty (the
    /// whole keyspace).
    pub async fn cache(&self, prefix: impl Into<Vec<u8>>) -> Result<Cache> {
        self.check_open()?;
        let prefix = prefix.into();
        let (map, revision) = load::load(self, &prefix).await?;
        let inner = Arc::new(Inner {
            prefix,
            state: RwLock::new(State { map, revision }),
            events: broadcast::channel(BACKLOG).0,
            revision: watch::channel(revision).0,
            stop: CancellationToken::new(),
        });
        follow::start(self.clone(), Arc::downgrade(&inner), revision);
        Ok(Cache { inner })
    }
}

impl Cache {
    /// The prefix this copy follows, as given to [`Client::cache`].
    pub fn prefix(&self) -> &[u8] {
        &self.inner.prefix
    }
    /// The revision the copy is at: every change up to it is in.
    pub fn revision(&self) -> i64 {
        *self.inner.revision.borrow()
    }
    /// The key as the copy has it.
    pub fn get(&self, key: &[u8]) -> Option<KeyValue> {
        self.inner.state.read().unwrap_or_else(|e| e.into_inner()).map.get(key).cloned()
    }
    /// The whole copy and the revision it is at, read together.
    pub fn snapshot(&self) -> (BTreeMap<Vec<u8>, KeyValue>, i64) {
        let s = self.inner.state.read().unwrap_or_else(|e| e.into_inner());
        (s.map.clone(), s.revision)
    }
    /// How many keys the copy has now (without cloning them, unlike [`Cache::snapshot`]).
    pub fn len(&self) -> usize {
        self.inner.state.read().unwrap_or_else(|e| e.into_inner()).map.len()
    }
    /// Whether the copy has no key now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits until the copy is at `revision` or later (`Timeout` if not within `timeout`). A
    /// revision of a write under the prefix arrives with its event; one of a write elsewhere
    /// only with etcd's progress notices (etcd ≥ 3.5.8).
    pub async fn wait_for(&self, revision: i64, timeout: Duration) -> Result<()> {
        let mut rx = self.inner.revision.subscribe();
        let stop = &self.inner.stop;
        let reached = tokio::time::timeout(timeout, async {
            let reached = tokio::select! {
                r = rx.wait_for(|r| *r >= revision) => Some(r.is_ok()),
                _ = stop.cancelled() => None,
            };
            reached.unwrap_or_else(|| *rx.borrow() >= revision)
        })
        .await;
        match reached {
            Ok(true) => Ok(()),
            Ok(false) => Err(Error::new(ErrorKind::Closed, "the cache stopped following etcd")),
            Err(_) => Err(Error::new(ErrorKind::Timeout, format!("the cache did not reach revision {revision} in {timeout:?} (it is at {})", self.revision()))),
        }
    }

    /// The copy's changes from now on, in revision order, each revision's events together.
    pub fn events(&self) -> CacheEvents {
        CacheEvents { rx: self.inner.events.subscribe(), revision: self.inner.revision.subscribe(), stop: self.inner.stop.clone() }
    }
}

/// An iterator of a cache's events (see [`Cache::events`]).
#[derive(Debug)]
pub struct CacheEvents {
    rx: broadcast::Receiver<CacheEvent>,
    revision: watch::Receiver<i64>,
    /// Cancelled once the copy stopped following etcd (the client closed, ...).
    stop: CancellationToken,
}

impl CacheEvents {
    /// The next event; `None` once the cache stopped (its client closed, its last handle
    /// dropped, its watch failed for good), after the events already delivered.
    pub async fn next(&mut self) -> Option<CacheEvent> {
        let recv = tokio::select! {
            biased;
            r = self.rx.recv() => r,
            _ = self.stop.cancelled() => match self.rx.try_recv() {
                Ok(ev) => Ok(ev),
                Err(broadcast::error::TryRecvError::Lagged(n)) => Err(broadcast::error::RecvError::Lagged(n)),
                Err(_) => Err(broadcast::error::RecvError::Closed),
            },
        };
        match recv {
            Ok(ev) => Some(ev),
            Err(broadcast::error::RecvError::Closed) => None,
            Err(broadcast::error::RecvError::Lagged(_)) => {
                // Fell behind: what was missed is in the copy, not in events any more.
                self.rx = self.rx.resubscribe();
                let revision = *self.revision.borrow();
                Some(CacheEvent { kind: CacheEventKind::Resynced, key: Vec::new(), value: Vec::new(), prev_value: None, revision })
            }
        }
    }
}
