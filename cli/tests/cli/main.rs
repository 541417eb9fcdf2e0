//! The `etcdlock` command line as a process against real etcd, in one test binary (each test
//! binary links the whole dependency set again). A new test file goes here as a module.

#[path = "../common/mod.rs"]
mod common;

mod fence;
mod health;
mod once;
mod pool;
mod orphans;
mod queue;
mod run;
mod status_all;
mod status_and_elect;
mod tooling;
