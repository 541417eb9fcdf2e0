//! # etcdlock
//!
//! Distributed coordination on etcd, done carefully: leases kept alive in the background with a
//! conservative local view of their liveness, watches that resume without gaps or duplicates,
//! and a fair (FIFO) mutex with fencing tokens that shares its queue with etcd's own
//! `concurrency.Mutex` and `etcdctl lock`.
//!
//! Everything runs on one small background runtime per process ([`runtime`]), shared by every
//! client and every language binding.
//!
//! ```
//! # #[tokio::main] async fn main() -> etcdlock::Result<()> {
//! # let etcd = etcd_testkit::Etcd::start(1); // a throwaway etcd on 127.0.0.1 (the doc tests' own)
//! # let endpoints = etcd.endpoints();
//! use etcdlock::{Client, ClientOptions};
//! // endpoints: your etcd members' client URLs, e.g. ["http://127.0.0.1:2379"]
//! let client = Client::connect(endpoints, ClientOptions::default()).await?;
//! let mutex = client.mutex("jobs/nightly", 10)?;
//! let guard = mutex.lock().await?;
//! guard.put(b"jobs/nightly-state", b"running").await?; // only while held
//! guard.release().await?;
//! client.close().await;
//! # Ok(()) }
//! ```

// Every public item documented, and every intra-doc link resolving: warnings here, so that a
// build in progress is not stopped by them, and errors in the docs stage (scripts/docs.sh runs
// rustdoc with `-D warnings`, over the features docs.rs builds with).
#![warn(missing_docs)]
#![warn(rustdoc::broken_intra_doc_links)]

// The layers, bottom up; each imports only from the ones above it in this list (client, lease
// and watch are one layer, as KV, Lease and Watcher are in etcd's `clientv3`), and none from
// `sync` (docs/design.md, "Layers"; scripts/check-layers.sh checks it).
mod error;
pub mod runtime;
#[doc(hidden)]
pub mod transport;
mod client;
mod lease;
mod watch;
mod cache;
mod sync;

pub use error::{Error, ErrorKind, Result};
pub use client::kv::{KeyValue, Op};
pub use client::validate::{check_lock_name, check_lock_value, check_ttl, MAX_LOCK_VALUE_LEN, MAX_TTL_SECS};
pub use client::{Client, ClientOptions};
pub use lease::lost::{LostReason, LostSignal};
pub use lease::Lease;
pub use sync::election::{Election, Leader, Leadership, Observer};
pub use sync::follow::Follow;
pub use sync::guard::LockGuard;
pub use sync::health::{Health, HoldState};
pub use sync::spans;
pub use sync::registry::{grpc_endpoint, grpc_endpoint_addr, Discovery, Instance, Instances, RegisterOptions, Registration, RegistrationEvent, RegistrationEvents};
pub use sync::rwlock::RwLock;
pub use sync::semaphore::{Semaphore, MAX_PERMITS};
pub use sync::inspect::{LockState, QueueEntry};
pub use sync::survey::{NameKind, NameSummary};
pub use sync::lockset::{LockSet, LockSetGuard, SetMember, SetMode, MAX_LOCK_SET};
pub use sync::metrics::{MetricEntry, MetricValue, Metrics};
/// The client's metrics in a `prometheus` crate registry (cargo feature `prometheus`).
#[cfg(feature = "prometheus")]
pub use sync::metrics::PrometheusCollector;
pub use transport::stats::HistogramSnapshot;
pub use sync::mutex::{LockOptions, Mutex};
pub use cache::{Cache, CacheEvent, CacheEventKind, CacheEvents};
pub use sync::fence::{Fence, FenceKind};
pub use sync::once::{check_once, OnceOptions, OnceSlot};
pub use sync::pool::{check_pool, Pool, PoolAcquire, PoolGuard, PoolOptions, SlotInfo, SlotState, MAX_POOL_COUNT, MAX_POOL_SLOTS, MAX_SLOT_ID_LEN};
pub use sync::tasks::{check_queue, ClaimOptions, DeadTask, QueueOptions, QueueStats, Task, TaskOptions, TaskQueue, MAX_TASK_ID_LEN, MAX_TASK_PAYLOAD_LEN};
pub use sync::tasks::ClaimInfo;
pub use tokio_util::sync::CancellationToken;
pub use transport::tls::{Pem, TlsOptions};
pub use watch::event::{EventType, WatchEvent};
pub use watch::{Watch, WatchOptions};

/// Fencing at the database: a high-water mark per resource, checked and raised by one statement
/// inside the writer's own transaction, before its writes, so that they commit only if no newer
/// holder of the lock has written (`docs/design.md`, "Fencing at the database"). The table and
/// statements are here for any driver; `fencing::postgres` (cargo feature `postgres`) runs them
/// on a `tokio-postgres` connection or transaction.
pub mod fencing {
    pub use crate::sync::fence::sql::{CHECK, DDL, MARK, TABLE};
    pub use crate::sync::fence::{Fence, FenceKind};
    #[cfg(feature = "postgres")]
    pub use crate::sync::fence::postgres;
}

/// The README's Rust example, compiled as a doc test so it cannot rot. (Only under doctest: the
/// repository's README is not in the published crate.)
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// The crate's own README (crates.io's page), compiled as a doc test too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;

/// The Rust manual's examples (docs/manual/rust.md, moved there from the README), compiled as
/// doc tests too (only under doctest: the file is not in the published crate).
#[cfg(doctest)]
#[doc = include_str!("../../docs/manual/rust.md")]
struct RustManualDoctests;
