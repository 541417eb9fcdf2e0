//! The log callback: the core's events (a lock lost, a lease expired, a stream reopened...)
//! handed to one C function. Off until etcdlock_set_log_callback is called.

use crate::ffi::{self, invalid};
use etcdlock::runtime::log::{self as core_log, LogLevel, LogRecord, SinkId};
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Mutex;

/// No events (etcdlock_set_log_callback's `level` to turn the callback off).
pub const ETCDLOCK_LOG_OFF: c_int = 0;
/// Something failed and was not retried.
pub const ETCDLOCK_LOG_ERROR: c_int = 1;
/// A user may need to act: a lock lost, a lease expired on the server, a watch ended by
/// compaction, a queue key that could not be deleted.
pub const ETCDLOCK_LOG_WARN: c_int = 2;
/// The library coped: a keepalive or watch stream reopened, requests moved to another member.
pub const ETCDLOCK_LOG_INFO: c_int = 3;
/// Each acquisition and release, auth token refreshes, background retries.
pub const ETCDLOCK_LOG_DEBUG: c_int = 4;
/// Finer detail (none emitted today).
pub const ETCDLOCK_LOG_TRACE: c_int = 5;

/// One structured field of an event, both strings NUL-terminated (numbers in decimal).
#[repr(C)]
pub struct etcdlock_log_field {
    /// The field's name.
    pub key: *const c_char,
    /// The field's value, as text.
    pub value: *const c_char,
}

/// One event, valid only during the callback (copy what you keep).
#[repr(C)]
pub struct etcdlock_log_record {
    /// ETCDLOCK_LOG_ERROR ... ETCDLOCK_LOG_TRACE.
    pub level: c_int,
    /// "lock", "lease", "watch" or "connection".
    pub area: *const c_char,
    /// The event's fixed message, e.g. "lock lost: it may be held by another client now".
    pub message: *const c_char,
    /// Its fields, e.g. lock, token, reason, held_ms for a lost lock.
    pub fields: *const etcdlock_log_field,
    /// How many entries `fields` points to.
    pub n_fields: usize,
}

/// Called with each event at or above the level given to etcdlock_set_log_callback, on the
/// thread that emitted it: a library thread, or yours inside a library call. It must return
/// quickly and must not call etcdlock functions (an event may be emitted while the library
/// holds one of its locks); events emitted on its own thread while it runs are dropped.
pub type etcdlock_log_cb = Option<unsafe extern "C" fn(record: *const etcdlock_log_record, user_data: *mut c_void)>;

#[derive(Clone, Copy)]
struct Target {
    cb: unsafe extern "C" fn(*const etcdlock_log_record, *mut c_void),
    user_data: *mut c_void,
}

// SAFETY: the documented contract is that the callback runs on any thread with its user_data.
unsafe impl Send for Target {}
unsafe impl Sync for Target {}

static CURRENT: Mutex<Option<SinkId>> = Mutex::new(None);

fn c_string(s: &str) -> CString {
    // A NUL inside (a lock name may hold any byte) would cut the string short: show it.
    CString::new(s.replace('\0', "\u{FFFD}")).unwrap_or_default()
}

fn deliver(t: Target, r: &LogRecord) {
    let area = c_string(r.area);
    let message = c_string(&r.message);
    let strings: Vec<(CString, CString)> = r.fields.iter().map(|(k, v)| (c_string(k), c_string(&v.to_string()))).collect();
    let fields: Vec<etcdlock_log_field> = strings.iter().map(|(k, v)| etcdlock_log_field { key: k.as_ptr(), value: v.as_ptr() }).collect();
    let record = etcdlock_log_record {
        level: r.level as c_int,
        area: area.as_ptr(),
        message: message.as_ptr(),
        fields: fields.as_ptr(),
        n_fields: fields.len(),
    };
    // SAFETY: the caller registered `cb` for this; every pointer lives until it returns.
    unsafe { (t.cb)(&record, t.user_data) };
}

/// Sends the library's events at `level` and above (ETCDLOCK_LOG_ERROR ... ETCDLOCK_LOG_TRACE)
/// to `cb` with `user_data`, replacing any earlier callback; ETCDLOCK_LOG_OFF or a NULL `cb`
/// turns it off (the default). When this returns, no call of the previous callback is still
/// running, so its `user_data` may be freed. ETCDLOCK_E_INVALID_ARGUMENT for a level outside
/// 0..5 (nothing changes); ETCDLOCK_E_WRONG_THREAD from inside the log callback.
///
///     static void on_log(const etcdlock_log_record *r, void *user_data) {
///         fprintf((FILE *)user_data, "etcdlock %s [%s]: %s\n", r->area,
///                 r->level == ETCDLOCK_LOG_WARN ? "warn" : "other", r->message);
///     }
///     etcdlock_set_log_callback(ETCDLOCK_LOG_WARN, on_log, stderr);
#[no_mangle]
pub extern "C" fn etcdlock_set_log_callback(level: c_int, cb: etcdlock_log_cb, user_data: *mut c_void) -> c_int {
    ffi::status(|| {
        let level = match level {
            ETCDLOCK_LOG_OFF => None,
            n => Some(LogLevel::from_number(n as i64).ok_or_else(|| invalid(format!("log level {n} is not one of ETCDLOCK_LOG_OFF..ETCDLOCK_LOG_TRACE (0..5)")))?),
        };
        if core_log::in_sink() {
            return Err(etcdlock::Error::new(etcdlock::ErrorKind::WrongContext, "etcdlock_set_log_callback was called from inside the log callback").into());
        }
        let mut current = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(id) = current.take() {
            // Waits for a running call of the old callback to return.
            if let Err(e) = core_log::remove_sink(id) {
                *current = Some(id);
                return Err(e.into());
            }
        }
        if let (Some(level), Some(cb)) = (level, cb) {
            let t = Target { cb, user_data };
            *current = Some(core_log::add_sink(level, std::sync::Arc::new(move |r: &LogRecord| deliver(t, r)))?);
        }
        Ok(())
    })
}
