//! Keeps the JS thread's event loop polling, instead of sleeping in it, for a short while after
//! a call starts: core's caller-spin policy (`etcdlock::runtime::spin`: the window, only while replies
//! come within it, at most half the CPUs spinning, `ETCDLOCK_SPIN_US`), applied to an event
//! loop. A local etcd's reply then reaches a JS thread that is awake, which saves the wake-up of
//! a sleeping one (costly on a VM, where it wakes a halted vCPU) on every call.
//!
//! Only while few calls are pending: with many in flight, replies wake the loop often enough,
//! and polling only takes CPU from the runtime and etcd (more CPU per cycle of many concurrent
//! lock loops, for no more cycles per second).
//!
//! An active libuv idle handle makes each loop iteration poll without blocking; it is
//! unreferenced (it never keeps the process alive) and stops once nothing is pending or the
//! window has passed. The handle is closed when the environment is torn down (a worker thread
//! must close every handle before its loop closes).

use napi::{sys, Env};
use std::cell::RefCell;
use std::os::raw::{c_int, c_void};

/// Room for a `uv_idle_t` (120 bytes on 64-bit Linux; `open` checks), which must come first.
#[repr(C, align(16))]
struct Idle {
    uv: [u8; UV_IDLE_ROOM],
    cleanup: sys::napi_async_cleanup_hook_handle,
}

/// Polls only while at most this many promises are pending.
const MAX_PENDING: usize = 2;

const UV_IDLE_ROOM: usize = 256;
/// `UV_IDLE` in libuv's (stable) `uv_handle_type`.
const UV_IDLE: c_int = 6;

// From the host process (node exports libuv), like the napi_* functions.
extern "C" {
    fn uv_handle_size(handle_type: c_int) -> usize;
    fn uv_idle_init(event_loop: *mut c_void, handle: *mut Idle) -> c_int;
    fn uv_idle_start(handle: *mut Idle, cb: extern "C" fn(*mut Idle)) -> c_int;
    fn uv_idle_stop(handle: *mut Idle) -> c_int;
    fn uv_unref(handle: *mut Idle);
    fn uv_close(handle: *mut Idle, cb: extern "C" fn(*mut Idle));
}

/// Per JS thread: its idle handle, and the permission to spin while the handle is active.
struct Loop {
    idle: *mut Idle,
    spin: Option<etcdlock::runtime::spin::Spin>,
}

thread_local! {
    static LOOP: RefCell<Option<Loop>> = const { RefCell::new(None) };
}

/// A call was started on this JS thread: poll for the next window. Best effort: without a
/// handle (or a spin permission) the loop sleeps as usual.
pub fn call_started(env: &Env) {
    if crate::promise::pending() > MAX_PENDING {
        return;
    }
    LOOP.with(|l| {
        let mut l = l.borrow_mut();
        if l.is_none() {
            *l = open(env).map(|idle| Loop { idle, spin: None });
        }
        let Some(l) = l.as_mut() else { return };
        match l.spin.as_mut() {
            Some(spin) => spin.extend(),
            None => {
                l.spin = etcdlock::runtime::spin::Spin::start(None);
                if l.spin.is_some() {
                    // SAFETY: an initialised handle of this thread's loop.
                    unsafe { uv_idle_start(l.idle, on_idle) };
                }
            }
        }
    });
}

/// Runs once per loop iteration while the handle is active.
extern "C" fn on_idle(_: *mut Idle) {
    LOOP.with(|l| {
        let mut l = l.borrow_mut();
        let Some(l) = l.as_mut() else { return };
        let pending = crate::promise::pending();
        if (1..=MAX_PENDING).contains(&pending) && l.spin.as_ref().is_some_and(|s| !s.expired()) {
            std::thread::yield_now();
        } else {
            l.spin = None;
            // SAFETY: as in `call_started`.
            unsafe { uv_idle_stop(l.idle) };
        }
    });
}

fn open(env: &Env) -> Option<*mut Idle> {
    // SAFETY: a pure function of libuv's.
    if unsafe { uv_handle_size(UV_IDLE) } > UV_IDLE_ROOM {
        return None;
    }
    let mut event_loop = std::ptr::null_mut();
    // SAFETY: a live env on its own thread.
    if unsafe { sys::napi_get_uv_event_loop(env.raw(), &mut event_loop) } != sys::Status::napi_ok {
        return None;
    }
    let idle = Box::into_raw(Box::new(Idle { uv: [0; UV_IDLE_ROOM], cleanup: std::ptr::null_mut() }));
    // SAFETY: `idle` is a fresh allocation that outlives the handle (freed in `on_closed`).
    unsafe {
        if uv_idle_init(event_loop.cast(), idle) != 0 {
            drop(Box::from_raw(idle));
            return None;
        }
        uv_unref(idle);
        let status = sys::napi_add_async_cleanup_hook(env.raw(), Some(on_teardown), idle.cast(), &mut (*idle).cleanup);
        if status != sys::Status::napi_ok {
            uv_close(idle, on_closed);
            return None;
        }
    }
    Some(idle)
}

unsafe extern "C" fn on_teardown(_: sys::napi_async_cleanup_hook_handle, idle: *mut c_void) {
    LOOP.with(|l| l.borrow_mut().take());
    // SAFETY: the handle `open` registered this hook for; closing also stops it.
    unsafe { uv_close(idle.cast(), on_closed) };
}

extern "C" fn on_closed(idle: *mut Idle) {
    // SAFETY: libuv is done with the handle; it was allocated by `open`.
    let idle = unsafe { Box::from_raw(idle) };
    if !idle.cleanup.is_null() {
        // SAFETY: the hook registered in `open`, removed once, after it ran.
        unsafe { sys::napi_remove_async_cleanup_hook(idle.cleanup) };
    }
}
