//! Clients: connect, free (options: options.rs).

use crate::ffi;
use crate::lock_async::Callbacks;
use crate::options::{convert, etcdlock_client_options};
use etcdlock::Client;
use std::os::raw::{c_char, c_int};
use std::sync::Arc;
use std::time::Duration;

/// A connection to an etcd cluster. Any number of threads may use one client at once.
pub struct etcdlock_client {
    pub(crate) client: Client,
    pub(crate) callbacks: Arc<Callbacks>,
    request_timeout: Duration,
}

/// Connects to `endpoints` ("http://a:2379,http://b:2379"; `host:port` works too;
/// "https://..." for TLS, all of one scheme) and checks that the cluster answers within the
/// connect timeout. `opts` may be NULL for defaults; otherwise its `struct_size` must be set
/// (see etcdlock_client_options). A member certificate that is not trusted or names another
/// host, or `https://` to a plain member, is ETCDLOCK_E_UNAVAILABLE; a client certificate the
/// member refuses is ETCDLOCK_E_AUTH; unreadable or malformed PEM is
/// ETCDLOCK_E_INVALID_ARGUMENT naming the file.
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
