//! A client's metrics, as Prometheus text.

use crate::client::etcdlock_client;
use crate::ffi;
use std::ffi::CString;
use std::os::raw::{c_char, c_int};

/// Writes the client's metrics since it connected to `*out` as a NUL-terminated string in the
/// Prometheus text format (free it with etcdlock_string_free): lock acquisitions, timeouts,
/// busy tries, failures, releases, failed releases, losses by reason, the wait and hold
/// histograms in seconds (`etcdlock_lock_acquisitions_total`, `etcdlock_lock_wait_seconds`...),
/// and the connection's requests in flight, retries, stream reopens, member switches, leases
/// alive, watches open and keepalive round trips; every series labelled `client="<name>"`
/// (`opts->name`, or `etcdlock-<n>`). Reads counters in memory, sends nothing,
/// never blocks, works on any thread and on a closed client too.
///
///     char *text = NULL;
///     if (etcdlock_client_metrics_text(client, &text) == ETCDLOCK_OK) {
///         fputs(text, stdout);
///         etcdlock_string_free(text);
///     }
#[no_mangle]
pub unsafe extern "C" fn etcdlock_client_metrics_text(client: *const etcdlock_client, out: *mut *mut c_char) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        // The core's fixed names and numbers, and the client's name (from a C string: no NUL).
        let text = CString::new(c.client.metrics().prometheus_text()).map_err(|_| ffi::invalid("metrics text holds a NUL"))?;
        // SAFETY: checked non-NULL.
        unsafe { *out = text.into_raw() };
        Ok(())
    })
}

/// Frees a string this library wrote (etcdlock_client_metrics_text). NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_string_free(s: *mut c_char) {
    ffi::void(|| {
        if !s.is_null() {
            // SAFETY: from CString::into_raw in this library (caller's contract).
            drop(unsafe { CString::from_raw(s) });
        }
    })
}
