//! The C ABI of etcdlock: `libetcdlock.so` / `libetcdlock.a` and `include/etcdlock.h`
//! (generated from this crate by build.rs). Conversions only: all behaviour lives in the core
//! crate. Conventions are in README.md; every export goes through `ffi` (panic boundary,
//! argument checks, blocking on the core runtime).

#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)] // the C contract is documented per function for C readers

mod cache;
mod cache_events;
mod callback;
mod cancel;
mod client;
mod discovery;
mod election;
mod fence;
mod ffi;
mod follow;
mod health;
mod inspect;
mod kv;
mod lease;
mod lock;
mod lock_async;
mod lockset;
mod lockset_held;
mod log;
mod metrics;
mod once;
mod options;
mod pool;
mod registry;
mod runtime;
mod rwlock;
mod semaphore;
mod status;
mod tasks;
mod watch;

pub use cache::*;
pub use cache_events::*;
pub use callback::*;
pub use cancel::*;
pub use inspect::*;
pub use client::etcdlock_client;
pub use election::*;
pub use fence::*;
pub use kv::*;
pub use lease::*;
pub use lock::*;
pub use lock_async::*;
pub use lockset::*;
pub use lockset_held::*;
pub use log::*;
pub use metrics::*;
pub use once::*;
pub use options::*;
pub use pool::*;
pub use registry::*;
pub use runtime::*;
pub use rwlock::*;
pub use semaphore::*;
pub use status::*;
pub use tasks::*;
pub use watch::*;
