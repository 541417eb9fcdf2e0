//! Clients: options, connect, free.

use crate::ffi::{self, invalid, FfiResult};
use crate::lock_async::Callbacks;
use etcdlock::{Client, ClientOptions};
use std::os::raw::{c_char, c_int};
use std::sync::Arc;
use std::time::Duration;

/// Options for etcdlock_client_new. Zero (or NULL) fields mean the defaults, so a
/// zero-initialised struct is valid; etcdlock_client_options_init fills in the defaults.
#[repr(C)]
pub struct etcdlock_client_options {
    /// Bound on the first connection and its probe, in ms (default 5000).
    pub connect_timeout_ms: i64,
    /// Bound on each request, retries included, in ms (default 5000).
    pub request_timeout_ms: i64,
    /// User name for etcd with authentication enabled, or NULL. Copied by etcdlock_client_new.
    pub user: *const c_char,
    /// Password for `user` (required when `user` is set). Copied by etcdlock_client_new.
    pub password: *const c_char,
    /// At most this many requests of this client in flight at once (default 256).
    pub max_in_flight: u32,
}

/// A connection to an etcd cluster. Any number of threads may use one client at once.
pub struct etcdlock_client {
    pub(crate) client: Client,
    pub(crate) callbacks: Arc<Callbacks>,
    request_timeout: Duration,
}

/// Fills `opts` with the defaults (5 s timeouts, no user, 256 requests in flight).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_client_options_init(opts: *mut etcdlock_client_options) -> c_int {
    ffi::status(|| {
        // SAFETY: checked non-NULL; the caller gives a writable struct.
        let opts = unsafe { opts.as_mut() }.ok_or_else(|| invalid("opts must not be NULL"))?;
        let d = ClientOptions::default();
        *opts = etcdlock_client_options {
            connect_timeout_ms: d.connect_timeout.as_millis() as i64,
            request_timeout_ms: d.request_timeout.as_millis() as i64,
            user: std::ptr::null(),
            password: std::ptr::null(),
            max_in_flight: d.max_in_flight as u32,
        };
        Ok(())
    })
}

unsafe fn convert(opts: *const etcdlock_client_options) -> FfiResult<ClientOptions> {
    let mut o = ClientOptions::default();
    // SAFETY: NULL means defaults; otherwise the caller gives a valid struct.
    let Some(c) = (unsafe { opts.as_ref() }) else { return Ok(o) };
    let ms = |v: i64, what: &str| match v {
        0 => Ok(None),
        v if v > 0 => Ok(Some(Duration::from_millis(v as u64))),
        v => Err(invalid(format!("{what} must not be negative, got {v}"))),
    };
    if let Some(d) = ms(c.connect_timeout_ms, "connect_timeout_ms")? {
        o.connect_timeout = d;
    }
    if let Some(d) = ms(c.request_timeout_ms, "request_timeout_ms")? {
        o.request_timeout = d;
    }
    if c.max_in_flight > 0 {
        o.max_in_flight = c.max_in_flight as usize;
    }
    match (c.user.is_null(), c.password.is_null()) {
        (true, true) => {}
        (false, false) => {
            let user = unsafe { ffi::utf8(c.user, "opts->user") }?;
            let password = unsafe { ffi::utf8(c.password, "opts->password") }?;
            o.user = Some((user.to_string(), password.to_string()));
        }
        (false, true) => return Err(invalid("opts->password must be set when opts->user is")),
        (true, false) => return Err(invalid("opts->user must be set when opts->password is")),
    }
    Ok(o)
}

/// Connects to `endpoints` ("http://a:2379,http://b:2379"; `host:port` works too) and checks
/// that the cluster answers within the connect timeout. `opts` may be NULL for defaults.
/// On success writes a new client to `*out` (free it with etcdlock_client_free).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_client_new(
    endpoints: *const c_char,
    opts: *const etcdlock_client_options,
    out: *mut *mut etcdlock_client,
) -> c_int {
    ffi::status(|| {
        let endpoints = unsafe { ffi::utf8(endpoints, "endpoints") }?;
        let out = ffi::out(out, "out")?;
        let opts = unsafe { convert(opts) }?;
        let eps: Vec<String> = endpoints.split(',').map(str::to_string).collect();
        let request_timeout = opts.request_timeout;
        let client = ffi::block(async move { Client::connect(eps, opts).await })?;
        let handle = etcdlock_client { client, callbacks: Arc::default(), request_timeout };
        // SAFETY: checked non-NULL.
        unsafe { *out = ffi::into_raw(handle) };
        Ok(())
    })
}

/// Closes the client and frees it: its leases are revoked (bounded by the request timeout),
/// its locks are lost, and calls still using its locks, leases or watches fail with
/// ETCDLOCK_E_CLOSED. Free those handles too. No other thread may be inside a call on this
/// client when it is freed. Every `_async` callback of the client and its locks has returned
/// when this returns (waiting at most the request timeout; not at all on a library thread,
/// e.g. inside such a callback). NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_client_free(client: *mut etcdlock_client) {
    ffi::void(|| {
        let Some(handle) = (unsafe { ffi::from_raw(client) }) else { return };
        close(&handle.client);
        if ffi::may_block() {
            // Closing failed every pending call; their callbacks are on their way.
            handle.callbacks.wait_all(handle.request_timeout);
        }
    })
}

/// Closes a client: waits for the revokes on a user thread, runs them in the background on a
/// library thread (where blocking would deadlock).
pub(crate) fn close(client: &Client) {
    if client.is_closed() {
        return;
    }
    let c = client.clone();
    if ffi::may_block() {
        let _ = etcdlock::runtime::block_on(async move { c.close().await });
    } else {
        etcdlock::runtime::spawn(async move { c.close().await });
    }
}
