//! A cache's events (the core's `CacheEvents`), read one per etcdlock_cache_stream_next with a
//! timeout, through the waiting half an observer and a discovery share (follow.rs).

use crate::cache::{closed_error, etcdlock_cache};
use crate::ffi;
use crate::follow::Followed;
use etcdlock::{CacheEvent, CacheEventKind, CacheEvents, Client, Follow};
use std::future::Future;
use std::os::raw::c_int;

/// A key was created or changed (`value` is its new value).
pub const ETCDLOCK_CACHE_PUT: c_int = 1;
/// A key was deleted (`value` is empty).
pub const ETCDLOCK_CACHE_DELETE: c_int = 2;
/// The copy was read again: after a compaction of the history it needed (the events just before
/// this one are the differences it found), or because this stream fell more than 4096 events
/// behind (what it missed is in the copy, not in events: read etcdlock_cache_snapshot again).
/// `key`, `value` are empty and `has_prev` false.
pub const ETCDLOCK_CACHE_RESYNCED: c_int = 3;

/// One change of a cache's copy. Pointers are valid until it is freed (etcdlock_cache_event_free).
#[repr(C)]
pub struct etcdlock_cache_event {
    /// ETCDLOCK_CACHE_PUT, ETCDLOCK_CACHE_DELETE or ETCDLOCK_CACHE_RESYNCED.
    pub kind: c_int,
    /// `key_len` bytes, not NUL-terminated.
    pub key: *const u8,
    /// The length of `key` in bytes.
    pub key_len: usize,
    /// The new value (`value_len` bytes; empty for a delete and for RESYNCED).
    pub value: *const u8,
    /// The length of `value` in bytes.
    pub value_len: usize,
    /// Whether the copy had the key before this change; then `prev_value` is its value then.
    pub has_prev: bool,
    /// The key's value before this change (`prev_value_len` bytes), when `has_prev`.
    pub prev_value: *const u8,
    /// The length of `prev_value` in bytes (0 without `has_prev`).
    pub prev_value_len: usize,
    /// The revision of the change (of the read, for the changes a resync found and RESYNCED).
    pub revision: i64,
}

/// What etcdlock_cache_stream_next hands out: the C view first, then the storage it points into.
#[repr(C)]
struct OwnedEvent {
    view: etcdlock_cache_event,
    data: CacheEvent,
}

fn event_out(data: CacheEvent) -> *mut etcdlock_cache_event {
    let kind = match data.kind {
        CacheEventKind::Put => ETCDLOCK_CACHE_PUT,
        CacheEventKind::Delete => ETCDLOCK_CACHE_DELETE,
        CacheEventKind::Resynced => ETCDLOCK_CACHE_RESYNCED,
    };
    let prev: &[u8] = data.prev_value.as_deref().unwrap_or(&[]);
    let view = etcdlock_cache_event {
        kind,
        key: data.key.as_ptr(),
        key_len: data.key.len(),
        value: data.value.as_ptr(),
        value_len: data.value.len(),
        has_prev: data.prev_value.is_some(),
        prev_value: prev.as_ptr(),
        prev_value_len: prev.len(),
        revision: data.revision,
    };
    // The Vecs' heap buffers stay where the view points when `data` moves into the box.
    Box::into_raw(Box::new(OwnedEvent { view, data })).cast::<etcdlock_cache_event>()
}

/// The core's events, ending with CLOSED once the copy stopped following etcd (the cache or its
/// client closed; the core hands out the events received before first).
struct Events {
    events: CacheEvents,
    client: Client,
}

impl Follow for Events {
    type Item = CacheEvent;
    fn next(&mut self) -> impl Future<Output = etcdlock::Result<CacheEvent>> + Send + '_ {
        async move {
            let ev = self.events.next().await;
            ev.ok_or_else(|| closed_error(if self.client.is_closed() { "the client" } else { "the cache" }))
        }
    }
}

/// A cache's events from when it was made (etcdlock_cache_events), one per
/// etcdlock_cache_stream_next. One thread at a time should call next (concurrent calls queue
/// up); etcdlock_cache_stream_close may be called from any thread.
pub struct etcdlock_cache_stream(Followed<Events>);

/// Starts reading the copy's changes from now on: in revision order, each revision's changes
/// together and none twice, each one applied to the copy before it is handed out (a get made
/// after an event sees that change or a later one). Writes the stream to `*out` (free it with
/// etcdlock_cache_stream_free). Any number of streams may read one cache.
/// ETCDLOCK_E_CLOSED once the cache or its client is closed.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_events(cache: *const etcdlock_cache, out: *mut *mut etcdlock_cache_stream) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(cache, "cache") }?;
        let out = ffi::out(out, "out")?;
        let events = Events { events: c.live()?.events(), client: c.client.clone() };
        unsafe { *out = ffi::into_raw(etcdlock_cache_stream(Followed::new(events, "the cache stream"))) };
        Ok(())
    })
}

/// Waits up to `timeout_ms` (0 = only what has arrived, ETCDLOCK_WAIT_FOREVER) for the next
/// change and writes it to `*out` (free it with etcdlock_cache_event_free).
/// ETCDLOCK_E_TIMEOUT when none came in time: nothing is lost, a later call reports it.
/// ETCDLOCK_E_CLOSED once the stream (etcdlock_cache_stream_close), the cache or its client is
/// closed (the events that came before are read first).
///
///     etcdlock_cache_event *ev = NULL;
///     while (etcdlock_cache_stream_next(stream, 1000, &ev) == ETCDLOCK_OK) {
///         if (ev->kind == ETCDLOCK_CACHE_RESYNCED)
///             reload(cache);  // e.g. etcdlock_cache_snapshot
///         else
///             printf("%s %.*s @%lld\n", ev->kind == ETCDLOCK_CACHE_PUT ? "put" : "delete",
///                    (int)ev->key_len, (const char *)ev->key, (long long)ev->revision);
///         etcdlock_cache_event_free(ev);
///     }
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_stream_next(stream: *mut etcdlock_cache_stream, timeout_ms: i64, out: *mut *mut etcdlock_cache_event) -> c_int {
    ffi::status(|| {
        let s = unsafe { ffi::arg(stream, "stream") }?;
        let out = ffi::out(out, "out")?;
        let ev = s.0.next(ffi::wait(timeout_ms)?)?;
        unsafe { *out = event_out(ev) };
        Ok(())
    })
}

/// Frees an event. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_event_free(ev: *mut etcdlock_cache_event) {
    ffi::void(|| {
        if !ev.is_null() {
            // SAFETY: from event_out, where it is the first field of a boxed OwnedEvent.
            drop(unsafe { Box::from_raw(ev.cast::<OwnedEvent>()) });
        }
    })
}

/// Ends the stream: a etcdlock_cache_stream_next waiting on another thread returns
/// ETCDLOCK_E_CLOSED, and so does every later one. Idempotent; NULL is a no-op. Free it after.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_stream_close(stream: *mut etcdlock_cache_stream) {
    ffi::void(|| {
        // SAFETY: NULL or a live stream.
        if let Some(s) = unsafe { stream.as_ref() } {
            s.0.close();
        }
    })
}

/// Frees the stream. No other thread may be inside a call on it. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_stream_free(stream: *mut etcdlock_cache_stream) {
    ffi::void(|| drop(unsafe { ffi::from_raw(stream) }))
}
