//! Native half of the `etcdlock` npm package. Everything here converts types, errors and calling
//! conventions; all behaviour lives in the `etcdlock` core crate. The public JavaScript API is the
//! hand-written wrapper in `index.js`, which adds AbortSignal, async iteration and `Symbol.asyncDispose`.
//!
//! There is one runtime: core's (`etcdlock::runtime`). napi's own tokio runtime is not enabled;
//! every promise is a napi deferred settled from a task on core's runtime (see `promise.rs`).

// napi-derive leaves out its JS registration under cfg(test), so `cargo test` of the workspace
// would see the exported-only items as dead code.
#![cfg_attr(test, allow(dead_code))]

mod cache;
mod client;
mod election;
mod error;
mod follow;
mod health;
mod lease;
mod lock;
mod lockset;
mod log;
mod lost;
mod metrics;
mod once;
mod pool;
mod promise;
mod registry;
mod spin;
mod tasks;
mod watch;

use napi_derive::napi;
use std::time::Duration;

/// Closes every client of this process (revoking their leases, so held locks are freed at once)
/// and stops the runtime, waiting at most `timeoutMs`. Called by the wrapper at process exit.
#[napi]
pub fn shutdown(timeout_ms: f64) {
    let ms = if timeout_ms.is_finite() && timeout_ms > 0.0 { timeout_ms } else { 0.0 };
    let _ = etcdlock::runtime::shutdown(Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::from_secs(3600)));
}

/// Sets the caller spin for every later call of this process (`setCallerSpin` in index.js
/// converts milliseconds and checks the type); core checks the range.
#[napi]
pub fn set_caller_spin(env: napi::Env, us: f64) -> napi::Result<()> {
    let window = Duration::try_from_secs_f64(us / 1e6).map_err(|_| {
        let e = etcdlock::Error::new(etcdlock::ErrorKind::InvalidArgument, format!("the caller spin must be a number of milliseconds >= 0, not {}", us / 1e3));
        error::to_js(&env, e)
    })?;
    etcdlock::runtime::set_caller_spin(window).map_err(|e| error::to_js(&env, e))
}

/// The caller spin in effect, in microseconds.
#[napi]
pub fn caller_spin() -> f64 {
    etcdlock::runtime::caller_spin().as_micros() as f64
}

/// Checks a lock, semaphore, read-write lock or election name and a TTL as core does (the
/// wrapper's synchronous `client.election()` and `client.rwlock()` throw before anything is sent).
#[napi]
pub fn check_name(env: napi::Env, name: &[u8], ttl: i64) -> napi::Result<()> {
    etcdlock::check_lock_name(name).and_then(|_| etcdlock::check_ttl(ttl)).map(|_| ()).map_err(|e| error::to_js(&env, e))
}

/// The most permits a semaphore may have (core `MAX_PERMITS`).
#[napi]
pub fn max_permits() -> u32 {
    etcdlock::MAX_PERMITS
}

/// Whether core's runtime threads exist in this process (none are started on import).
#[napi]
pub fn runtime_started() -> bool {
    etcdlock::runtime::runtime_started()
}

/// The addon's Rust allocations (its own and core's) use mimalloc. Nearly every allocation of
/// a call crosses threads (made on the JS thread and freed on a runtime worker, or the other
/// way round), which glibc's malloc serves slowly: with many concurrent lock loops it takes a
/// large share of the JS thread's time (malloc, free, unlink_chunk), and mimalloc serves such
/// frees cheaply. It affects nothing outside the addon.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
