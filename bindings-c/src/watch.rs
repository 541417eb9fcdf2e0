//! Watches (polled with a timeout) and their events.

use crate::client::etcdlock_client;
use crate::ffi;
use etcdlock::{Error, ErrorKind, EventType, Watch, WatchEvent, WatchOptions};
use std::os::raw::c_int;
use std::sync::Arc;

/// A key was created or changed.
pub const ETCDLOCK_EVENT_PUT: c_int = 1;
/// A key was deleted.
pub const ETCDLOCK_EVENT_DELETE: c_int = 2;

/// A resilient watch: resumes after disconnects without gaps or duplicates. One thread at a
/// time calls etcdlock_watch_next (concurrent calls queue up).
pub struct etcdlock_watch {
    // Behind an async mutex so that a `next` future can own it (block_on needs 'static).
    watch: Arc<tokio::sync::Mutex<Watch>>,
}

/// One change. Free with etcdlock_event_free.
pub struct etcdlock_event {
    ev: WatchEvent,
}

/// Watches `key` (or with `prefix`, every key starting with it; an empty key with `prefix`
/// watches everything). `start_revision` 0 means changes made after this returns; otherwise
/// the first revision to deliver (ETCDLOCK_E_COMPACTED from etcdlock_watch_next if it is gone).
/// Returns once etcd has confirmed the watch. On success writes it to `*out`.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_watch_open(
    client: *mut etcdlock_client,
    key: *const u8,
    key_len: usize,
    prefix: bool,
    start_revision: i64,
    out: *mut *mut etcdlock_watch,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        let out = ffi::out(out, "out")?;
        // 0 is C's "none"; a negative revision is refused by the core.
        let opts = WatchOptions { prefix, start_revision: (start_revision != 0).then_some(start_revision), prev_kv: false };
        let client = c.client.clone();
        let watch = ffi::block(async move { client.watch(key, opts).await })?;
        unsafe { *out = ffi::into_raw(etcdlock_watch { watch: Arc::new(tokio::sync::Mutex::new(watch)) }) };
        Ok(())
    })
}

/// Waits up to `timeout_ms` (0 = poll, ETCDLOCK_WAIT_FOREVER) for the next event and writes
/// it to `*out`. ETCDLOCK_E_TIMEOUT when nothing arrived in time (the watch goes on);
/// ETCDLOCK_E_COMPACTED when the history needed is gone and ETCDLOCK_E_CLOSED when the client
/// was closed (the watch has ended after either).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_watch_next(watch: *mut etcdlock_watch, timeout_ms: i64, out: *mut *mut etcdlock_event) -> c_int {
    ffi::status(|| {
        let w = unsafe { ffi::arg(watch, "watch") }?.watch.clone();
        let out = ffi::out(out, "out")?;
        let timeout = ffi::wait(timeout_ms)?;
        let ev = ffi::block(async move {
            let mut w = w.lock().await;
            // Watch::next is cancel-safe: an event is never half-taken when the timeout wins.
            let next = match timeout {
                None => w.next().await,
                Some(t) => tokio::time::timeout(t, w.next())
                    .await
                    .map_err(|_| Error::new(ErrorKind::Timeout, "no event arrived before the timeout"))?,
            };
            next.unwrap_or_else(|| Err(Error::new(ErrorKind::Closed, "the watch has ended")))
        })?;
        unsafe { *out = ffi::into_raw(etcdlock_event { ev }) };
        Ok(())
    })
}

/// Stops the watch and frees it. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_watch_free(watch: *mut etcdlock_watch) {
    ffi::void(|| drop(unsafe { ffi::from_raw(watch) }))
}

/// ETCDLOCK_EVENT_PUT or ETCDLOCK_EVENT_DELETE (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_event_type(e: *const etcdlock_event) -> c_int {
    ffi::value(0, || {
        Ok(match unsafe { ffi::arg(e, "event") }?.ev.event_type {
            EventType::Put => ETCDLOCK_EVENT_PUT,
            EventType::Delete => ETCDLOCK_EVENT_DELETE,
        })
    })
}

unsafe fn bytes_out(data: &[u8], len: *mut usize) -> *const u8 {
    if let Some(len) = unsafe { len.as_mut() } {
        *len = data.len();
    }
    data.as_ptr()
}

/// The event's key, `*len` bytes (valid until the event is freed). NULL for NULL; `len` may be
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_event_key(e: *const etcdlock_event, len: *mut usize) -> *const u8 {
    ffi::value(std::ptr::null(), || Ok(unsafe { bytes_out(&ffi::arg(e, "event")?.ev.kv.key, len) }))
}

/// The event's value, `*len` bytes (empty for a delete). NULL for NULL; `len` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_event_value(e: *const etcdlock_event, len: *mut usize) -> *const u8 {
    ffi::value(std::ptr::null(), || Ok(unsafe { bytes_out(&ffi::arg(e, "event")?.ev.kv.value, len) }))
}

/// The revision of the change. 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_event_revision(e: *const etcdlock_event) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(e, "event") }?.ev.revision()))
}

/// Frees an event. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_event_free(e: *mut etcdlock_event) {
    ffi::void(|| drop(unsafe { ffi::from_raw(e) }))
}
