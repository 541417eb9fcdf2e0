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
//! ```no_run
//! # async fn demo() -> etcdlock::Result<()> {
//! use etcdlock::{Client, ClientOptions};
//! let client = Client::connect(["http://127.0.0.1:2379"], ClientOptions::default()).await?;
//! let mutex = client.mutex("jobs/nightly", 10)?;
//! let guard = mutex.lock().await?;
//! guard.put(b"jobs/nightly-state", b"running").await?; // only while held
//! guard.release().await?;
//! client.close().await;
//! # Ok(()) }
//! ```

mod backoff;
mod client;
pub mod clock;
mod error;
mod guard;
#[doc(hidden)]
pub mod h2_channel;
mod keepalive;
mod kv;
mod kv_pool;
mod lease;
pub mod linger;
mod lost;
mod monitor;
mod mutex;
mod paths;
mod queue;
pub mod runtime;
mod session;
mod tls;
pub mod spin;
mod validate;
mod watch;
mod watch_hub;

pub use client::{Client, ClientOptions};
pub use error::{Error, ErrorKind, Result};
pub use guard::LockGuard;
pub use kv::{KeyValue, Op};
pub use lease::Lease;
pub use lost::{LostReason, LostSignal};
pub use mutex::{LockOptions, Mutex};
pub use tokio_util::sync::CancellationToken;
pub use tls::{Pem, TlsOptions};
pub use validate::{check_lock_name, check_ttl, MAX_TTL_SECS};
pub use watch::{Watch, WatchOptions};
pub use watch_hub::{EventType, WatchEvent};

/// The README's Rust example, compiled as a doc test so it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
