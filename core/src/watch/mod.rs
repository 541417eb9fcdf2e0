//! Watches that survive disconnects: they resume from the last delivered revision + 1, so the
//! caller sees every change in order, with no gap and no duplicate, or an explicit
//! [`ErrorKind::Compacted`] error when the history needed to resume is gone.

mod channel;
mod dispatch;
pub(crate) mod event;
pub(crate) mod hub;
mod permitted;

use crate::transport::backoff::Backoff;
use crate::client::{closed_error, Client};
use crate::error::{Error, Result};
use crate::client::validate;
use crate::watch::hub::{Msg, Spec, Subscription, WatchEvent};
use std::collections::VecDeque;

/// What to watch.
#[derive(Debug, Clone, Default)]
pub struct WatchOptions {
    /// Watch every key that starts with the key.
    pub prefix: bool,
    /// First revision to deliver; `None` means changes after the watch starts.
    pub start_revision: Option<i64>,
    /// Include each event's previous value.
    pub prev_kv: bool,
}

/// A resilient watch. Call [`Watch::next`] until it returns `None` (closed) or an error.
///
/// ```
/// # #[tokio::main] async fn main() -> etcdlock::Result<()> {
/// # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
/// # let client = etcdlock::Client::connect(etcd.endpoints(), Default::default()).await?;
/// let mut watch = client.watch("jobs/", etcdlock::WatchOptions { prefix: true, ..Default::default() }).await?;
/// # client.put(b"jobs/7", b"queued", None).await?;
/// while let Some(event) = watch.next().await {
///     let event = event?;
///     println!("{:?} {:?} at {}", event.event_type, event.kv.key, event.revision());
/// #   assert_eq!(event.kv.key, b"jobs/7"); break; // (the doc test stops at the first)
/// }
/// # client.close().await; Ok(()) }
/// ```
pub struct Watch {
    client: Client,
    spec: Spec,
    sub: Option<Subscription>,
    /// Revision the next event must have at least; 0 until the first `Created` says "now".
    next_revision: i64,
    pending: VecDeque<WatchEvent>,
    backoff: Backoff,
    done: bool,
    /// An error met while [`Watch::next_batch`] gathered a batch, returned by the next call.
    deferred: Option<Error>,
}

impl WatchOptions {
    /// Checks `key` and these options as [`Client::watch`] does, before anything is sent (for
    /// bindings that create the watch later than they take its arguments).
    ///
    /// ```
    /// use etcdlock::WatchOptions;
    /// assert!(WatchOptions::default().check(b"jobs/1").is_ok());
    /// assert!(WatchOptions::default().check(b"").is_err()); // everything needs `prefix: true`
    /// assert!(WatchOptions { start_revision: Some(0), ..Default::default() }.check(b"k").is_err());
    /// ```
    pub fn check(&self, key: &[u8]) -> Result<()> {
        if key.is_empty() && !self.prefix {
            return Err(Error::invalid("key must not be empty (use prefix=true with an empty key to watch everything)"));
        }
        if !self.prefix {
            validate::key(key)?;
        }
        match self.start_revision {
            Some(r) if r <= 0 => Err(Error::invalid(format!("start_revision must be positive, got {r}"))),
            _ => Ok(()),
        }
    }
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").field("key", &String::from_utf8_lossy(&self.spec.key)).field("next_revision", &self.next_revision).finish()
    }
}

impl Watch {
    pub(crate) async fn new(client: &Client, key: Vec<u8>, opts: WatchOptions) -> Result<Watch> {
        client.check_open()?;
        opts.check(&key)?;
        let start = opts.start_revision.unwrap_or(0);
        let spec = Spec { key, prefix: opts.prefix, start_revision: start, prev_kv: opts.prev_kv, only_deletes: false };
        let mut watch = Watch {
            client: client.clone(),
            sub: Some(client.inner.hub.subscribe(spec.clone())),
            spec,
            next_revision: start,
            pending: VecDeque::new(),
            backoff: Backoff::default(),
            deferred: None,
            done: false,
        };
        watch.wait_created().await?;
        Ok(watch)
    }

    /// Waits for the server to confirm the watch, so that "from now" means from the moment
    /// `Client::watch` returned. A stream that breaks first is subscribed again (still before
    /// this returns, so nothing the caller could see is missed), within `request_timeout`.
    async fn wait_created(&mut self) -> Result<()> {
        let deadline = tokio::time::Instant::now() + self.client.inner.opts.request_timeout;
        let timed_out = || Error::new(crate::ErrorKind::Unavailable, "etcd did not confirm the watch in time");
        while self.next_revision == 0 {
            let sub = match self.sub.as_mut() {
                Some(sub) => sub,
                None => {
                    tokio::select! {
                        _ = tokio::time::sleep(self.backoff.next_delay()) => {}
                        _ = tokio::time::sleep_until(deadline) => return Err(timed_out()),
                        _ = self.client.inner.closed.cancelled() => return Err(closed_error()),
                    }
                    self.sub.insert(self.client.inner.hub.subscribe(self.spec.clone()))
                }
            };
            let msg = tokio::select! {
                m = sub.rx.recv() => m,
                _ = tokio::time::sleep_until(deadline) => return Err(timed_out()),
                _ = self.client.inner.closed.cancelled() => return Err(closed_error()),
            };
            match msg {
                Some(Msg::Created { revision }) => self.next_revision = revision + 1,
                Some(Msg::Events(events)) => self.pending.extend(events),
                Some(Msg::Progress { .. }) => {}
                Some(Msg::Failed(e)) => return Err(*e),
                None => self.sub = None,
            }
        }
        self.backoff.reset();
        Ok(())
    }

    /// The next event; `None` once closed. After an error the watch is finished.
    pub async fn next(&mut self) -> Option<Result<WatchEvent>> {
        loop {
            if let Some(e) = self.pending.pop_front() {
                return Some(Ok(e));
            }
            if self.done {
                return None;
            }
            if let Err(e) = self.client.check_open() {
                return self.fail(e);
            }
            if self.sub.is_none() {
                let spec = Spec { start_revision: self.next_revision, ..self.spec.clone() };
                self.sub = Some(self.client.inner.hub.subscribe(spec));
            }
            let sub = self.sub.as_mut().expect("just set");
            let msg = tokio::select! {
                m = sub.rx.recv() => m,
                _ = self.client.inner.closed.cancelled() => return self.fail(closed_error()),
            };
            match msg {
                Some(Msg::Created { revision }) => {
                    self.backoff.reset();
                    if self.next_revision == 0 {
                        // "Now" is pinned at creation, so a resume will not skip anything.
                        self.next_revision = revision + 1;
                    }
                }
                Some(Msg::Events(events)) => {
                    for e in events {
                        // Defensive: a resumed stream must not replay what was delivered.
                        if e.revision() >= self.next_revision {
                            self.pending.push_back(e);
                        }
                    }
                    if let Some(last) = self.pending.back() {
                        self.next_revision = last.revision() + 1;
                    }
                }
                // Nothing of this watch happened up to `revision`: a resume may start after it
                // (history before it may be compacted by then). Not before the watch started,
                // nor while events are queued (they are later than it).
                Some(Msg::Progress { revision }) => {
                    if self.next_revision > 0 && self.pending.is_empty() {
                        self.next_revision = self.next_revision.max(revision + 1);
                    }
                }
                Some(Msg::Failed(e)) => return self.fail(*e),
                None => {
                    // Stream broke or we fell behind: resume from next_revision after a pause.
                    self.sub = None;
                    let delay = self.backoff.next_delay();
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = self.client.inner.closed.cancelled() => return self.fail(closed_error()),
                    }
                }
            }
        }
    }

    /// The next events: waits for one, then takes every event already received, up to `max`
    /// in all (at least one), without waiting again. For bindings that hand events across a
    /// thread or language boundary, where each crossing costs more than the events themselves.
    /// Cancel-safe like [`Watch::next`]; an error met after the first event of a batch is
    /// returned by the following call, and `None` means the watch ended.
    ///
    /// ```no_run
    /// # async fn demo(client: etcdlock::Client) -> etcdlock::Result<()> {
    /// let mut watch = client.watch("jobs/", etcdlock::WatchOptions { prefix: true, ..Default::default() }).await?;
    /// while let Some(batch) = watch.next_batch(256).await {
    ///     for event in batch? {
    ///         println!("{:?} at {}", event.kv.key, event.revision());
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn next_batch(&mut self, max: usize) -> Option<Result<Vec<WatchEvent>>> {
        use std::future::Future;
        use std::task::{Context, Poll, Waker};
        if let Some(e) = self.deferred.take() {
            return Some(Err(e));
        }
        let mut batch = match self.next().await? {
            Ok(first) => vec![first],
            Err(e) => return Some(Err(e)),
        };
        // Whatever is ready now, without waiting: one poll of `next`, dropped if it is pending
        // (it is cancel-safe).
        while batch.len() < max {
            let mut cx = Context::from_waker(Waker::noop());
            let polled = std::pin::pin!(self.next()).poll(&mut cx);
            match polled {
                Poll::Ready(Some(Ok(e))) => batch.push(e),
                Poll::Ready(Some(Err(e))) => {
                    self.deferred = Some(e);
                    break;
                }
                // The end is reported by the next call, which finds the watch done.
                Poll::Ready(None) | Poll::Pending => break,
            }
        }
        Some(Ok(batch))
    }

    /// The events of `revision` already received and not yet returned. A response from etcd
    /// never splits a revision, and each is queued whole, so after a batch that
    /// [`next_batch`](Watch::next_batch) cut off at its `max` inside `revision`, this is the
    /// rest of that revision, with no waiting.
    pub(crate) fn rest_of_revision(&mut self, revision: i64) -> Vec<WatchEvent> {
        let mut rest = Vec::new();
        while self.pending.front().is_some_and(|e| e.revision() == revision) {
            rest.extend(self.pending.pop_front());
        }
        rest
    }

    /// The revision the next event will have at least (0 before the watch started).
    pub fn next_revision(&self) -> i64 {
        self.next_revision
    }

    /// Stops the watch; `next` returns `None` afterwards.
    pub fn close(&mut self) {
        self.done = true;
        self.sub = None;
        self.pending.clear();
        self.deferred = None;
    }

    fn fail(&mut self, e: Error) -> Option<Result<WatchEvent>> {
        if let Some(compacted) = e.compact_revision() {
            tracing::warn!(target: "etcdlock", key = %String::from_utf8_lossy(&self.spec.key), next_revision = self.next_revision, compacted, "watch ended: the history it needed was compacted");
        }
        self.done = true;
        self.sub = None;
        Some(Err(e))
    }
}
