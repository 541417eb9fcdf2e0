//! A prefix cache (the core's `Cache`): a local copy of a prefix, loaded at one revision and
//! kept in step with etcd. Reads of the copy, waits for a revision, and the copy's events
//! (cache_events.rs). Conversions only: loading, following and resyncing are the core's.

use crate::client::etcdlock_client;
use crate::ffi::{self, FfiResult};
use etcdlock::{Cache, CancellationToken, Client, Error, ErrorKind, KeyValue};
use std::os::raw::{c_char, c_int};
use std::sync::RwLock;
use std::time::Duration;

/// A local copy of every key under a prefix, at one revision, kept in step with etcd
/// (etcdlock_cache_open). Reads of it send nothing and are not linearizable: the copy is at
/// etcdlock_cache_revision, which may be behind etcd (etcdlock_cache_wait_for catches up with a
/// revision). Any number of threads may use it at once; etcdlock_cache_close may be called
/// from any thread.
pub struct etcdlock_cache {
    /// Taken out by close: the copy stops following etcd once nothing else holds it.
    cache: RwLock<Option<Cache>>,
    pub(crate) client: Client,
    /// Cancelled by close: a wait in progress returns ETCDLOCK_E_CLOSED.
    closed: CancellationToken,
}

/// One key of a cache's copy. Pointers are valid until it (or its etcdlock_kv_set) is freed.
#[repr(C)]
pub struct etcdlock_kv {
    /// `key_len` bytes, not NUL-terminated.
    pub key: *const u8,
    /// The length of `key` in bytes.
    pub key_len: usize,
    /// `value_len` bytes, not NUL-terminated (may be empty).
    pub value: *const u8,
    /// The length of `value` in bytes.
    pub value_len: usize,
    /// The revision of the put that created the key (since it was last deleted).
    pub create_revision: i64,
    /// The revision of its latest put.
    pub mod_revision: i64,
    /// Puts since it was created (1 for the first).
    pub version: i64,
    /// The lease the key is on (0 for none).
    pub lease: i64,
}

/// A cache's whole copy at one revision, ordered by key (bytewise). Free with
/// etcdlock_kv_set_free.
#[repr(C)]
pub struct etcdlock_kv_set {
    /// The entries, `n_kvs` of them, ordered by key.
    pub kvs: *const etcdlock_kv,
    /// How many entries `kvs` points to.
    pub n_kvs: usize,
    /// The revision the copy was at: every change up to it is in, none after it.
    pub revision: i64,
}

fn kv_view(kv: &KeyValue) -> etcdlock_kv {
    etcdlock_kv {
        key: kv.key.as_ptr(),
        key_len: kv.key.len(),
        value: kv.value.as_ptr(),
        value_len: kv.value.len(),
        create_revision: kv.create_revision,
        mod_revision: kv.mod_revision,
        version: kv.version,
        lease: kv.lease,
    }
}

/// What etcdlock_cache_get hands out: the C view first, then the storage it points into.
#[repr(C)]
struct OwnedKv {
    view: etcdlock_kv,
    data: KeyValue,
}

/// What etcdlock_cache_snapshot hands out.
#[repr(C)]
struct OwnedSet {
    view: etcdlock_kv_set,
    entries: Vec<etcdlock_kv>,
    data: Vec<KeyValue>,
}

pub(crate) fn closed_error(what: &str) -> Error {
    Error::new(ErrorKind::Closed, format!("{what} is closed"))
}

impl etcdlock_cache {
    /// The copy, unless the cache or its client is closed.
    pub(crate) fn live(&self) -> FfiResult<Cache> {
        if self.client.is_closed() {
            return Err(closed_error("the client").into());
        }
        let cache = self.cache.read().unwrap_or_else(|e| e.into_inner()).clone();
        cache.ok_or_else(|| closed_error("the cache").into())
    }
}

/// Loads every key under `prefix` (a NUL-terminated string; "" is the whole keyspace) at one
/// revision, then follows etcd from the next revision on: each revision's changes are applied
/// together, across disconnects without a gap or a duplicate; when the history it needs was
/// compacted it reads the prefix again and reports the differences (see etcdlock_cache_events).
/// Returns once loaded (a read of the client's request timeout per 1000 keys). Writes the cache
/// to `*out` (free it with etcdlock_cache_free). ETCDLOCK_E_CLOSED for a closed client.
///
///     etcdlock_cache *cache = NULL;
///     if (etcdlock_cache_open(client, "config/", &cache) == ETCDLOCK_OK) {
///         etcdlock_kv *kv = NULL;
///         if (etcdlock_cache_get(cache, (const uint8_t *)"config/a", 8, &kv) == ETCDLOCK_OK && kv) {
///             printf("%.*s\n", (int)kv->value_len, (const char *)kv->value);
///             etcdlock_kv_free(kv);
///         }
///         etcdlock_cache_free(cache);
///     }
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_open(client: *mut etcdlock_client, prefix: *const c_char, out: *mut *mut etcdlock_cache) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let prefix = unsafe { ffi::cstr(prefix, "prefix") }?.to_vec();
        let out = ffi::out(out, "out")?;
        if c.client.is_closed() {
            // Said before blocking: a client closed by etcdlock_shutdown starts no runtime again.
            return Err(closed_error("the client").into());
        }
        let client = c.client.clone();
        let cache = ffi::block(async move { client.cache(prefix).await })?;
        let handle = etcdlock_cache { cache: RwLock::new(Some(cache)), client: c.client.clone(), closed: CancellationToken::new() };
        unsafe { *out = ffi::into_raw(handle) };
        Ok(())
    })
}

/// Reads `key` from the copy (sends nothing): writes it to `*out` (free it with
/// etcdlock_kv_free), or NULL when the copy has no such key, returning ETCDLOCK_OK.
/// ETCDLOCK_E_CLOSED once the cache or its client is closed (the copy no longer follows etcd).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_get(cache: *const etcdlock_cache, key: *const u8, key_len: usize, out: *mut *mut etcdlock_kv) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(cache, "cache") }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?;
        let out = ffi::out(out, "out")?;
        let kv = c.live()?.get(key);
        let p = kv.map_or(std::ptr::null_mut(), |data| Box::into_raw(Box::new(OwnedKv { view: kv_view(&data), data })).cast::<etcdlock_kv>());
        unsafe { *out = p };
        Ok(())
    })
}

/// Frees what etcdlock_cache_get wrote. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_kv_free(kv: *mut etcdlock_kv) {
    ffi::void(|| {
        if !kv.is_null() {
            // SAFETY: from etcdlock_cache_get, where it is the first field of a boxed OwnedKv.
            drop(unsafe { Box::from_raw(kv.cast::<OwnedKv>()) });
        }
    })
}

/// Writes the whole copy and the revision it is at, read together, to `*out` (free it with
/// etcdlock_kv_set_free; it may be empty). Sends nothing. ETCDLOCK_E_CLOSED once the cache or
/// its client is closed.
///
///     etcdlock_kv_set *set = NULL;
///     if (etcdlock_cache_snapshot(cache, &set) == ETCDLOCK_OK) {
///         for (size_t i = 0; i < set->n_kvs; i++)
///             printf("%.*s @%lld\n", (int)set->kvs[i].key_len, (const char *)set->kvs[i].key,
///                    (long long)set->kvs[i].mod_revision);
///         etcdlock_kv_set_free(set);
///     }
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_snapshot(cache: *const etcdlock_cache, out: *mut *mut etcdlock_kv_set) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(cache, "cache") }?;
        let out = ffi::out(out, "out")?;
        let (map, revision) = c.live()?.snapshot();
        let data: Vec<KeyValue> = map.into_values().collect();
        let entries: Vec<etcdlock_kv> = data.iter().map(kv_view).collect();
        let view = etcdlock_kv_set { kvs: entries.as_ptr(), n_kvs: entries.len(), revision };
        // Moving the Vecs into the box keeps their heap buffers where the view points.
        let owned = Box::new(OwnedSet { view, entries, data });
        unsafe { *out = Box::into_raw(owned).cast::<etcdlock_kv_set>() };
        Ok(())
    })
}

/// Frees what etcdlock_cache_snapshot wrote. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_kv_set_free(set: *mut etcdlock_kv_set) {
    ffi::void(|| {
        if !set.is_null() {
            // SAFETY: from etcdlock_cache_snapshot, where it is the first field of a boxed OwnedSet.
            drop(unsafe { Box::from_raw(set.cast::<OwnedSet>()) });
        }
    })
}

/// The revision the copy is at: every change up to it is in. 0 for NULL or a closed cache.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_revision(cache: *const etcdlock_cache) -> i64 {
    ffi::value(0, || {
        let c = unsafe { ffi::arg(cache, "cache") }?;
        let cache = c.cache.read().unwrap_or_else(|e| e.into_inner()).clone();
        Ok(cache.map_or(0, |cache| cache.revision()))
    })
}

/// How many keys the copy has. 0 for NULL or a closed cache.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_len(cache: *const etcdlock_cache) -> usize {
    ffi::value(0, || {
        let c = unsafe { ffi::arg(cache, "cache") }?;
        let cache = c.cache.read().unwrap_or_else(|e| e.into_inner()).clone();
        Ok(cache.map_or(0, |cache| cache.len()))
    })
}

/// Waits up to `timeout_ms` (0 = only check, ETCDLOCK_WAIT_FOREVER) until the copy is at
/// `revision` or later: after a write under the prefix that returned revision R,
/// etcdlock_cache_wait_for(cache, R, ...) then etcdlock_cache_get reads that write (or a later
/// one). A write elsewhere arrives only with etcd's progress notices (etcd >= 3.5.8).
/// ETCDLOCK_E_TIMEOUT when it did not get there in time; ETCDLOCK_E_CLOSED once the cache
/// (etcdlock_cache_close, from any thread) or its client is closed.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_wait_for(cache: *const etcdlock_cache, revision: i64, timeout_ms: i64) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(cache, "cache") }?;
        // No limit: a century (the core's wait takes a Duration).
        let timeout = ffi::wait(timeout_ms)?.unwrap_or(Duration::from_secs(100 * 365 * 86_400));
        let (cache, closed) = (c.live()?, c.closed.clone());
        // The core's wait ends with Closed when the copy stops following (its client closed);
        // this handle's close, which may leave the copy to another holder, ends it too.
        ffi::block(async move {
            tokio::select! {
                biased;
                _ = closed.cancelled() => Err(closed_error("the cache")),
                r = cache.wait_for(revision, timeout) => r,
            }
        })
    })
}

/// Stops following etcd: a etcdlock_cache_wait_for waiting on another thread returns
/// ETCDLOCK_E_CLOSED, and so does every later call on the cache; its event streams end
/// (etcdlock_cache_stream_next: ETCDLOCK_E_CLOSED once the events before are read).
/// Idempotent; NULL is a no-op. Free it after.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_close(cache: *mut etcdlock_cache) {
    ffi::void(|| {
        // SAFETY: NULL or a live cache.
        if let Some(c) = unsafe { cache.as_ref() } {
            c.closed.cancel();
            c.cache.write().unwrap_or_else(|e| e.into_inner()).take();
        }
    })
}

/// Closes the cache (etcdlock_cache_close) and frees it. No other thread may be inside a call
/// on it. Its event streams outlive it (they end) and are freed on their own. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_cache_free(cache: *mut etcdlock_cache) {
    ffi::void(|| {
        if let Some(c) = unsafe { ffi::from_raw(cache) } {
            c.closed.cancel();
        }
    })
}
