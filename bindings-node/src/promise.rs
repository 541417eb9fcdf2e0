//! Promises settled from core's runtime.
//!
//! A promise is created on the JS thread (napi_create_promise) and its future runs on core's
//! runtime; the outcome travels back through ONE threadsafe function per JS environment, whose
//! callback converts it to JS values and settles the promise on the JS thread. So JS never runs
//! on a runtime thread and the JS thread never waits on the network. Sharing the threadsafe
//! function (instead of napi's JsDeferred, which creates and tears down one per promise) keeps
//! the per-call cost of the JS thread low. It is weak (never keeps the process alive) and is
//! referenced only while promises are pending, so a pending call keeps the event loop alive
//! like any pending I/O, and nothing else does. Every promise settles (`etcdlock::runtime::linger::
//! spawn_call`: INTERNAL if its task panicked, CLOSED if the runtime shut down first), and the
//! worker that settles it then waits briefly for the JS thread's next call instead of parking.

use crate::error;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeCallContext, ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{check_status, sys, Env};
use std::cell::RefCell;
use std::future::Future;
use std::sync::{Arc, Mutex};

/// Runs on the JS thread: builds the settled value (Ok) or the rejection (Err).
type Settle = Box<dyn FnOnce(&Env) -> Result<sys::napi_value> + Send>;

struct Job {
    deferred: SendDeferred,
    settle: Settle,
    /// When the call started: how long the JS thread waited decides whether it polls (`spin`).
    started: std::time::Instant,
}

/// The raw deferred is only ever used on the JS thread that created it.
struct SendDeferred(sys::napi_deferred);
unsafe impl Send for SendDeferred {}

type Tsfn = ThreadsafeFunction<Job, Unknown<'static>, (), Status, false, true>;

/// Per JS environment (one per JS thread): the shared threadsafe function and the number of
/// promises waiting on it.
struct Completer {
    tsfn: Arc<Mutex<Tsfn>>,
    pending: usize,
}

thread_local! {
    static COMPLETER: RefCell<Option<Completer>> = const { RefCell::new(None) };
}

/// Sets up this environment's completion channel; `noop` is any JS function (napi requires one).
/// Called once by the wrapper when it loads.
#[napi_derive::napi]
pub fn init_completions(noop: Function<'_, (), Unknown<'static>>) -> Result<()> {
    let tsfn: Tsfn = noop
        .build_threadsafe_function::<Job>()
        .callee_handled::<false>()
        .weak::<true>()
        .build_callback(settle_on_js_thread)?;
    COMPLETER.with(|c| *c.borrow_mut() = Some(Completer { tsfn: Arc::new(Mutex::new(tsfn)), pending: 0 }));
    Ok(())
}

fn settle_on_js_thread(ctx: ThreadsafeCallContext<Job>) -> Result<()> {
    let env = ctx.env;
    let Job { deferred, settle, started } = ctx.value;
    etcdlock::runtime::spin::record(started.elapsed());
    let raw_env = env.raw();
    let status = match settle(&env) {
        Ok(v) => unsafe { sys::napi_resolve_deferred(raw_env, deferred.0, v) },
        Err(e) => {
            let v = unsafe { ToNapiValue::to_napi_value(raw_env, e) }?;
            unsafe { sys::napi_reject_deferred(raw_env, deferred.0, v) }
        }
    };
    finished(&env);
    check_status!(status)
}

/// One promise fewer pending; unreference the channel when none is left. (`refer`/`unref` are
/// deprecated in napi-rs in favour of clone-counting, which is about thread counts; these two
/// are the event-loop reference, napi_ref/unref_threadsafe_function, which is what is meant.)
#[allow(deprecated)]
fn finished(env: &Env) {
    COMPLETER.with(|c| {
        if let Some(c) = c.borrow_mut().as_mut() {
            c.pending -= 1;
            if c.pending == 0 {
                let _ = c.tsfn.lock().unwrap_or_else(|p| p.into_inner()).unref(env);
            }
        }
    });
}

#[allow(deprecated)]
/// Runs `fut` on core's runtime; `conv` turns its output into a JS value on the JS thread.
pub fn spawn<'env, T, V, F, C>(env: &'env Env, fut: F, conv: C) -> Result<PromiseRaw<'env, V>>
where
    T: Send + 'static,
    V: ToNapiValue + 'static,
    F: Future<Output = etcdlock::Result<T>> + Send + 'static,
    C: FnOnce(&Env, T) -> Result<V> + Send + 'static,
{
    let tsfn = COMPLETER.with(|c| -> Result<_> {
        let mut c = c.borrow_mut();
        let c = c.as_mut().ok_or_else(|| Error::from_reason("etcdlock: init_completions was not called"))?;
        if c.pending == 0 {
            c.tsfn.lock().unwrap_or_else(|p| p.into_inner()).refer(env)?;
        }
        c.pending += 1;
        Ok(c.tsfn.clone())
    })?;
    crate::spin::call_started(env);
    let mut deferred = std::ptr::null_mut();
    let mut promise = std::ptr::null_mut();
    if let Err(e) = check_status!(unsafe { sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) }) {
        finished(env);
        return Err(e);
    }
    let deferred = SendDeferred(deferred);
    let started = std::time::Instant::now();
    etcdlock::runtime::linger::spawn_call(fut, move |result| {
        let settle: Settle = Box::new(move |env: &Env| match result {
            Ok(v) => {
                let v = conv(env, v)?;
                unsafe { V::to_napi_value(env.raw(), v) }
            }
            Err(e) => Err(error::to_js(env, e)),
        });
        // Fails only once the environment is gone; the promise went with it.
        let _ = tsfn
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .call(Job { deferred, settle, started }, ThreadsafeFunctionCallMode::NonBlocking);
    });
    Ok(PromiseRaw::new(env.raw(), promise))
}

/// How many promises of this JS thread wait for their outcome.
pub fn pending() -> usize {
    COMPLETER.with(|c| c.borrow().as_ref().map_or(0, |c| c.pending))
}
