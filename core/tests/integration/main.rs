//! The core's integration, fault and interop tests against real etcd, in one test binary.
//!
//! One binary, not one per file: each test binary instantiates the core's generic and async code
//! again and links the whole dependency set (25–54 s of compile and link apiece in a fresh release
//! build). Tests here share nothing process-wide but `common::shared()`, the one etcd server of
//! the binary, and isolate themselves by key prefix; a test that injects faults or compacts starts
//! a private cluster. A test that changes process-wide state (the shared runtime, the tracing
//! subscriber, the log sink) goes to `../process/`, where each test runs in a process of its own.
//!
//! A new test file goes here as a module: `mod <file>;` below, and `use crate::common::*;` in it.

#[path = "../common/mod.rs"]
mod common;

mod auth;
mod cache;
mod channel;
mod close_race;
mod discovery_history;
mod election;
mod faults;
mod fence;
mod health;
mod inspect;
mod late_copies;
mod lockset;
mod lease;
mod members;
mod metrics;
mod mutex;
mod once;
mod pool;
mod queue;
mod registry;
mod registry_races;
mod rwlock;
mod semaphore;
mod session;
mod tasks;
mod tls;
mod watch;
