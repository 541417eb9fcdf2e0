//! A work queue whose claims live and die with the worker's lease.
//!
//! Items are durable until acked. A claim is a key on the worker's lease (the queue key of a
//! lock named after the item), kept alive while held: a worker that dies, freezes past its TTL or
//! is cut off loses its claim when etcd ends its lease, never by a client's clock, and the item is
//! claimable again. An ack deletes the item and its claim in one Txn that applies only while the
//! claim holds, with the caller's own writes if given. Workers waiting to claim queue up behind
//! one another (a fair lock): only the first watches for new items, so a new item wakes one.
//! The keys: `keys.rs`; the guarantees: `docs/design.md`, "Task queue".
//!
//! ```
//! # #[tokio::main] async fn main() -> etcdlock::Result<()> {
//! # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
//! # let client = etcdlock::Client::connect(etcd.endpoints(), Default::default()).await?;
//! use etcdlock::{ClaimOptions, QueueOptions, TaskOptions};
//! use std::time::Duration;
//! let q = client.queue("jobs/resize", QueueOptions { ttl_secs: 10, max_attempts: 5, max_processing: None })?;
//! q.put(b"img-17", TaskOptions { id: Some("img-17".into()), ..Default::default() }).await?;
//! let task = q.claim(ClaimOptions { timeout: Some(Duration::from_secs(5)), ..Default::default() }).await?;
//! // The result and the ack commit together, only while the claim holds.
//! task.ack_with(&[etcdlock::Op::put("results/img-17", "ok")]).await?;
//! # client.close().await; Ok(()) }
//! ```

mod claim;
mod dead;
mod inspect;
pub(crate) mod keys;
mod put;
mod task;
mod watch;

pub use claim::ClaimOptions;
pub use dead::{DeadTask, QueueStats};
pub use inspect::ClaimInfo;
pub use keys::{MAX_TASK_ID_LEN, MAX_TASK_PAYLOAD_LEN};
pub use put::TaskOptions;
pub use task::Task;

use crate::client::{validate, Client};
use crate::error::{Error, Result};
use crate::sync::mutex::Mutex;
use keys::Keys;
use std::sync::Arc;

/// How a queue's claims live and how often an item is delivered.
#[derive(Debug, Clone)]
pub struct QueueOptions {
    /// The TTL of the lease a claim lives on (kept alive while the task is held): how long a
    /// dead worker's item stays claimed.
    pub ttl_secs: i64,
    /// Deliveries before an item goes to the dead letters (at least 1).
    pub max_attempts: u32,
    /// If set, a claim ends this long after it was made, held or not (its key is deleted, the
    /// task's lost signal fires, the item is claimable again): a hung handler cannot hold an
    /// item for ever.
    pub max_processing: Option<std::time::Duration>,
}

impl Default for QueueOptions {
    fn default() -> Self {
        QueueOptions { ttl_secs: 10, max_attempts: 5, max_processing: None }
    }
}

/// A handle on the task queue `name`. Creating it sends nothing.
#[derive(Debug, Clone)]
pub struct TaskQueue {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    client: Client,
    keys: Keys,
    ttl: i64,
    max_attempts: u32,
    max_processing: Option<std::time::Duration>,
    /// The lock whose holder takes the next item (`Q/workers`).
    workers: Mutex,
}

/// Checks a queue's name and options as [`Client::queue`] does (for bindings that validate
/// before they connect).
pub fn check_queue(name: &[u8], opts: &QueueOptions) -> Result<()> {
    validate::lock_name(name)?;
    validate::ttl(opts.ttl_secs)?;
    if opts.max_attempts == 0 {
        return Err(Error::invalid("max_attempts must be at least 1"));
    }
    if opts.max_processing.is_some_and(|d| d.is_zero()) {
        return Err(Error::invalid("max_processing must be positive"));
    }
    Ok(())
}

impl Client {
    /// A handle on the task queue `name` (see [`TaskQueue`]).
    pub fn queue(&self, name: impl Into<Vec<u8>>, opts: QueueOptions) -> Result<TaskQueue> {
        let name = name.into();
        check_queue(&name, &opts)?;
        self.check_open()?;
        let keys = Keys::new(&name);
        let workers = self.mutex(keys.workers_lock(), opts.ttl_secs)?;
        Ok(TaskQueue { inner: Arc::new(Inner { client: self.clone(), keys, ttl: opts.ttl_secs, max_attempts: opts.max_attempts, max_processing: opts.max_processing, workers }) })
    }
}

impl TaskQueue {
    /// The queue's name: the prefix its items, claims and dead letters are under.
    pub fn name(&self) -> &[u8] {
        self.inner.keys.name()
    }

    /// Adds an item; returns its id. With an id, put is idempotent while that item exists
    /// (pending, claimed, delayed or dead): a second put changes nothing and returns the id.
    pub async fn put(&self, payload: &[u8], opts: TaskOptions) -> Result<String> {
        put::put(&self.inner, payload, opts).await
    }

    /// The oldest available item of the highest priority, claimed on this client's lease for
    /// the queue's TTL. Waits within `opts` (`LockTimeout` when it passes; `WouldBlock` for a
    /// zero timeout and nothing available). Waiting workers are served in the order they began.
    pub async fn claim(&self, opts: ClaimOptions) -> Result<Task> {
        claim::claim(&self.inner, opts).await
    }

    /// Counts of pending (by priority), delayed, claimed and dead items, read at one moment.
    pub async fn stats(&self) -> Result<QueueStats> {
        dead::stats(&self.inner).await
    }

    /// The dead letters, in id order.
    pub async fn dead(&self) -> Result<Vec<DeadTask>> {
        dead::list(&self.inner).await
    }

    /// Puts a dead item back at the end of its priority, its attempts at 0; false if no dead
    /// item has that id.
    pub async fn requeue_dead(&self, id: &str) -> Result<bool> {
        dead::requeue(&self.inner, id).await
    }

    /// Deletes a dead item; false if no dead item has that id.
    pub async fn delete_dead(&self, id: &str) -> Result<bool> {
        dead::delete(&self.inner, id).await
    }
}
