//! Forwards a core "lost" signal to a JS callback, on the JS thread, at most once.

use etcdlock::{CancellationToken, LostSignal};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

/// `(reason: string) => void`, weak: a pending callback never keeps the process alive.
pub type LostCallback = ThreadsafeFunction<String, Unknown<'static>, String, Status, false, true>;

/// Calls `cb` with the reason once `signal` fires, unless `stop` is cancelled first (the owner
/// was released or garbage-collected: its signal would then report a spurious "closed").
pub fn forward(signal: LostSignal, stop: CancellationToken, cb: LostCallback) {
    etcdlock::runtime::spawn(async move {
        tokio::select! {
            biased;
            _ = stop.cancelled() => {}
            reason = signal.wait() => {
                cb.call(reason.as_str().to_string(), ThreadsafeFunctionCallMode::NonBlocking);
            }
        }
    });
}
