//! Delivering outcomes from the runtime's threads to Java objects: the thread attaches itself
//! to the VM once (as a daemon, so it never holds the JVM's exit), each delivery runs in its own
//! local frame (a permanently attached thread would otherwise accumulate local references), and
//! an exception a Java method threw is cleared, never left pending on the runtime thread.
//! The Java methods called here only hand the outcome to Java's own executor: user code never
//! runs on a runtime thread.

use etcdlock::LostSignal;
use jni::objects::{GlobalRef, JValue};
use jni::{JNIEnv, JavaVM};
use std::sync::OnceLock;
use tokio::task::AbortHandle;

static VM: OnceLock<JavaVM> = OnceLock::new();

pub(crate) fn set_vm(vm: JavaVM) {
    let _ = VM.set(vm);
}

/// Runs `f` with this thread's JNIEnv; false when it could not, or `f` failed or threw.
pub(crate) fn call(f: impl FnOnce(&mut JNIEnv) -> jni::errors::Result<()>) -> bool {
    let Some(vm) = VM.get() else { return false };
    let Ok(mut env) = vm.attach_current_thread_as_daemon() else { return false };
    let ok = env.with_local_frame(8, |env| f(env)).is_ok();
    if env.exception_check().unwrap_or(false) {
        let _ = env.exception_describe();
        let _ = env.exception_clear();
        return false;
    }
    ok
}

/// Calls `sink.lost(reason)` once `signal` fires. Abort the returned task to disarm it.
pub(crate) fn on_lost(signal: LostSignal, sink: GlobalRef) -> AbortHandle {
    etcdlock::runtime::spawn(async move {
        let reason = signal.wait().await;
        call(|env| {
            let reason = env.new_string(reason.as_str())?;
            env.call_method(&sink, "lost", "(Ljava/lang/String;)V", &[JValue::Object(&reason)])?;
            Ok(())
        });
    })
    .abort_handle()
}

/// The armed lost watcher of a lease or a lock: at most one, disarmed when replaced or dropped.
#[derive(Default)]
pub(crate) struct LostWatcher(std::sync::Mutex<Option<AbortHandle>>);

impl LostWatcher {
    pub(crate) fn arm(&self, signal: LostSignal, sink: GlobalRef) {
        let task = on_lost(signal, sink);
        if let Some(old) = self.0.lock().unwrap_or_else(|p| p.into_inner()).replace(task) {
            old.abort();
        }
    }

    pub(crate) fn disarm(&self) {
        if let Some(task) = self.0.lock().unwrap_or_else(|p| p.into_inner()).take() {
            task.abort();
        }
    }
}

impl Drop for LostWatcher {
    fn drop(&mut self) {
        self.disarm();
    }
}
