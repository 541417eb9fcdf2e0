//! Queue inspection: a lock's holder and waiters as etcd has them.

use crate::client::etcdlock_client;
use crate::ffi;
use std::os::raw::{c_char, c_int};

/// One acquisition in a lock's queue. Pointers are valid until etcdlock_lock_state_free.
#[repr(C)]
pub struct etcdlock_queue_entry {
    /// The queue key, `<name>/<lease hex>[-n]` (`key_len` bytes, not NUL-terminated).
    pub key: *const u8,
    /// The length of `key` in bytes.
    pub key_len: usize,
    /// The key's create revision: the fencing token it has, or will have once it holds.
    pub fencing_token: i64,
    /// The lease the key is bound to.
    pub lease: i64,
    /// Seconds the lease has left on the server; -1 when it is gone (the key goes with it).
    pub ttl_s: i64,
    /// What the acquire attached (etcdlock_lock_acquire_with_value), an election's proposal;
    /// empty for none.
    pub value: *const u8,
    /// The length of `value` in bytes.
    pub value_len: usize,
    /// NUL-terminated: "read" or "write" for a read-write lock's key, "permits=N" for a
    /// semaphore's of N ("permits=N,count=K" for one taking K at once), "" for a lock's or an
    /// election's (the value comes without it).
    pub mode: *const c_char,
}

/// A lock's queue at one revision: the first `n_holders` entries hold (the holder alone for a
/// lock, an election or a writer; up to N for a semaphore of N; the readers older than every
/// writer), the others wait in that order. Free with etcdlock_lock_state_free.
#[repr(C)]
pub struct etcdlock_lock_state {
    /// The queue's entries in order, `n_entries` of them (the holders first).
    pub entries: *const etcdlock_queue_entry,
    /// How many entries `entries` points to.
    pub n_entries: usize,
    /// The etcd revision the queue was read at.
    pub revision: i64,
    /// How many of the first entries hold: 0 when the lock is free.
    pub n_holders: usize,
}

/// What etcdlock_inspect hands out: the C view first, then the storage it points into.
#[repr(C)]
struct Owned {
    view: etcdlock_lock_state,
    entries: Vec<etcdlock_queue_entry>,
    data: Vec<etcdlock::QueueEntry>,
    modes: Vec<std::ffi::CString>,
}

/// Reads the queue of lock `name` (whoever holds or waits: this library, `etcdctl lock`, Go's
/// concurrency.Mutex) and writes it to `*out`. Changes nothing. A bad name is
/// ETCDLOCK_E_INVALID_ARGUMENT before anything is sent.
///
///     etcdlock_lock_state *st = NULL;
///     if (etcdlock_inspect(client, "jobs", &st) == ETCDLOCK_OK) {
///         for (size_t i = 0; i < st->n_entries; i++)
///             printf("%s token %lld value %.*s\n", i < st->n_holders ? "holder" : "waiter",
///                    (long long)st->entries[i].fencing_token,
///                    (int)st->entries[i].value_len, (const char *)st->entries[i].value);
///         etcdlock_lock_state_free(st);
///     }
#[no_mangle]
pub unsafe extern "C" fn etcdlock_inspect(client: *mut etcdlock_client, name: *const c_char, out: *mut *mut etcdlock_lock_state) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let name = unsafe { ffi::cstr(name, "name") }?.to_vec();
        etcdlock::check_lock_name(&name)?;
        let client = c.client.clone();
        let state = ffi::block(async move { client.inspect(&name).await })?;
        let n_holders = state.holders.len();
        let data: Vec<etcdlock::QueueEntry> = state.holders.into_iter().chain(state.waiters).collect();
        // A mode is ASCII without NUL (the core makes it).
        let modes: Vec<std::ffi::CString> = data.iter().map(|e| std::ffi::CString::new(e.mode.clone()).unwrap_or_default()).collect();
        let entries: Vec<etcdlock_queue_entry> = data
            .iter()
            .zip(&modes)
            .map(|(e, mode)| etcdlock_queue_entry {
                key: e.key.as_ptr(),
                key_len: e.key.len(),
                fencing_token: e.fencing_token,
                lease: e.lease,
                ttl_s: e.ttl.unwrap_or(-1),
                value: e.value.as_ptr(),
                value_len: e.value.len(),
                mode: mode.as_ptr(),
            })
            .collect();
        let view = etcdlock_lock_state { entries: entries.as_ptr(), n_entries: entries.len(), revision: state.revision, n_holders };
        // Moving the Vecs into the box keeps their heap buffers where the view points.
        let owned = Box::new(Owned { view, entries, data, modes });
        unsafe { *out = Box::into_raw(owned).cast::<etcdlock_lock_state>() };
        Ok(())
    })
}

/// Frees what etcdlock_inspect wrote. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_lock_state_free(state: *mut etcdlock_lock_state) {
    ffi::void(|| {
        if !state.is_null() {
            // SAFETY: from etcdlock_inspect, where it is the first field of a boxed Owned.
            drop(unsafe { Box::from_raw(state.cast::<Owned>()) });
        }
    })
}
