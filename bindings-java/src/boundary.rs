//! The boundary: panic catching, failures turned into Java exceptions, argument conversion,
//! handles, and blocking on the shared runtime.

use etcdlock::{Error, ErrorKind};
use jni::objects::{JByteArray, JString, JThrowable, JValue};
use jni::JNIEnv;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Why a call failed, and so which exception the Java caller gets.
pub(crate) enum Failure {
    /// A core error: `io.etcdlock.Errors.of(kind, message)` picks the exception class.
    Core(Error),
    /// A Java exception is already pending (a JNI call threw): leave it.
    Pending,
}

pub(crate) type JResult<T> = Result<T, Failure>;

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Core(e)
    }
}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Self {
        match e {
            jni::errors::Error::JavaException => Failure::Pending,
            other => Failure::Core(Error::new(ErrorKind::Internal, format!("JNI: {other}"))),
        }
    }
}

pub(crate) fn invalid(message: impl Into<String>) -> Failure {
    Failure::Core(Error::new(ErrorKind::InvalidArgument, message))
}

/// Runs the body of a native method: its value, or `default` with an exception pending.
pub(crate) fn entry<T>(env: &mut JNIEnv, default: T, body: impl FnOnce(&mut JNIEnv) -> JResult<T>) -> T {
    let outcome = catch_unwind(AssertUnwindSafe(|| body(env))).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(Failure::Core(Error::new(ErrorKind::Internal, format!("panic in etcdlock: {what}"))))
    });
    match outcome {
        Ok(v) => v,
        Err(f) => {
            throw(env, f);
            default
        }
    }
}

/// Makes `f` the pending exception (unless one already is).
fn throw(env: &mut JNIEnv, f: Failure) {
    let Failure::Core(e) = f else { return };
    if env.exception_check().unwrap_or(true) {
        return;
    }
    let made = (|| -> jni::errors::Result<()> {
        let kind = env.new_string(e.kind().code())?;
        let message = env.new_string(e.message())?;
        // A compacted watch carries the revision its history now starts at.
        let ex = match e.compact_revision() {
            Some(rev) => env.call_static_method(
                "io/etcdlock/Errors",
                "compacted",
                "(Ljava/lang/String;J)Ljava/lang/RuntimeException;",
                &[JValue::Object(&message), JValue::Long(rev)],
            )?,
            None => env.call_static_method(
                "io/etcdlock/Errors",
                "of",
                "(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/RuntimeException;",
                &[JValue::Object(&kind), JValue::Object(&message)],
            )?,
        }
        .l()?;
        env.throw(JThrowable::from(ex))
    })();
    if made.is_err() && !env.exception_check().unwrap_or(true) {
        // Errors could not be reached: still never return as if it had worked.
        let _ = env.throw_new("java/lang/IllegalStateException", e.to_string());
    }
}

/// A Java string argument (the Java side rejects null first; this is the backstop).
pub(crate) fn string(env: &mut JNIEnv, s: &JString, what: &str) -> JResult<String> {
    if s.is_null() {
        return Err(invalid(format!("{what} must not be null")));
    }
    Ok(env.get_string(s)?.into())
}

/// A nullable Java string argument.
pub(crate) fn opt_string(env: &mut JNIEnv, s: &JString) -> JResult<Option<String>> {
    if s.is_null() {
        return Ok(None);
    }
    Ok(Some(env.get_string(s)?.into()))
}

/// A byte[] argument; null is empty.
pub(crate) fn bytes(env: &mut JNIEnv, b: &JByteArray) -> JResult<Vec<u8>> {
    if b.is_null() {
        return Ok(Vec::new());
    }
    Ok(env.convert_byte_array(b)?)
}

/// Moves a value to Java as a handle.
pub(crate) fn into_handle<T>(v: T) -> i64 {
    Box::into_raw(Box::new(v)) as i64
}

/// Borrows a live handle. The Java side keeps it alive for the call (`NativeHandle` frees it
/// only under its write lock, never during a call, and never twice).
pub(crate) fn handle<'a, T>(h: i64, what: &str) -> JResult<&'a T> {
    // SAFETY: non-zero handles come from into_handle of a T and are alive (see above).
    unsafe { (h as *const T).as_ref() }.ok_or_else(|| Failure::Core(Error::new(ErrorKind::Closed, format!("the {what} is closed"))))
}

/// Takes a handle back to drop it; 0 gives None.
pub(crate) fn take_handle<T>(h: i64) -> Option<Box<T>> {
    // SAFETY: made by into_handle of a T; NativeHandle frees each exactly once.
    (h != 0).then(|| unsafe { Box::from_raw(h as *mut T) })
}

/// Blocks the calling (Java) thread on `fut` run by the shared runtime.
pub(crate) fn block<F, T>(fut: F) -> JResult<T>
where
    F: Future<Output = etcdlock::Result<T>> + Send + 'static,
    T: Send + 'static,
{
    Ok(etcdlock::runtime::block_on(fut)??)
}

/// Whether the calling thread may block (it is not one of the runtime's).
pub(crate) fn may_block() -> bool {
    etcdlock::runtime::check_not_in_runtime().is_ok()
}

/// A wait in milliseconds from Java: -1 forever, 0 try once, otherwise a limit.
pub(crate) fn wait(timeout_ms: i64) -> JResult<Option<std::time::Duration>> {
    match timeout_ms {
        -1 => Ok(None),
        t if t >= 0 => Ok(Some(std::time::Duration::from_millis(t as u64))),
        t => Err(invalid(format!("timeout must be >= 0 ms (or -1 for none), got {t}"))),
    }
}
