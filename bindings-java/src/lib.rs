//! The JNI layer of the Java package `io.etcdlock`: translation only. Every function here is a
//! `static native` method of `io.etcdlock.Native`; the Java classes own the API, the argument
//! checks a Java user expects (nulls, durations) and the handle lifetimes. Handles are `jlong`s
//! holding a `Box` pointer, freed exactly once by the Java side (`NativeHandle`).
//!
//! Every entry point runs inside [`boundary::entry`]: no panic unwinds into the JVM, and every
//! failure becomes a pending Java exception. Outcomes of work on the shared runtime
//! (acquires, losses) reach Java through [`callback`].

mod acquirer;
mod boundary;
mod cache;
mod callback;
mod client;
mod follow;
mod health;
mod inspect;
mod kv;
mod lease;
mod lock;
mod lockset;
mod log;
mod once;
mod pool;
mod registry;
mod tasks;
mod watch;

use jni::sys::{jint, JNI_VERSION_1_8};
use std::os::raw::c_void;

/// Keeps the VM so that runtime threads can attach themselves to deliver outcomes.
///
/// # Safety
/// Called by the JVM (System.load) with its own valid `JavaVM` pointer.
#[no_mangle]
pub unsafe extern "system" fn JNI_OnLoad(vm: *mut jni::sys::JavaVM, _reserved: *mut c_void) -> jint {
    // No panic may unwind into the JVM, here either.
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the JVM passes its own, valid pointer; it outlives the library.
        if let Ok(vm) = unsafe { jni::JavaVM::from_raw(vm) } {
            callback::set_vm(vm);
        }
    });
    JNI_VERSION_1_8
}
