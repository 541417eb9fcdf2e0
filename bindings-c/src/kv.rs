//! Key-value calls: put (plain, on a lease, or fenced by a held lock), get, delete.

use crate::client::etcdlock_client;
use crate::ffi;
use crate::lease::etcdlock_lease;
use crate::lock::etcdlock_lock;
use std::os::raw::c_int;

/// A value read by etcdlock_get. Free with etcdlock_buf_free.
pub struct etcdlock_buf {
    data: Vec<u8>,
    mod_revision: i64,
}

/// Writes `value` at `key`. With `if_held` (nullable), the write happens only while that lock
/// is still held, checked by etcd atomically with the write (ETCDLOCK_E_NOT_HELD otherwise,
/// nothing written). Not retried: a write with an unknown outcome is reported, not repeated.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_put(
    client: *mut etcdlock_client,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
    if_held: *const etcdlock_lock,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        let value = unsafe { ffi::bytes(value, value_len, "value") }?.to_vec();
        // SAFETY: NULL or a live lock.
        match unsafe { if_held.as_ref() } {
            None => {
                let client = c.client.clone();
                ffi::block(async move { client.put(&key, &value, None).await.map(drop) })
            }
            Some(lock) => {
                let guard = lock.guard();
                ffi::block(async move { guard.put(&key, &value).await.map(drop) })
            }
        }
    })
}

/// Writes `value` at `key`, attached to `lease`: the key is deleted when the lease ends.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_put_with_lease(
    client: *mut etcdlock_client,
    key: *const u8,
    key_len: usize,
    value: *const u8,
    value_len: usize,
    lease: *const etcdlock_lease,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        let value = unsafe { ffi::bytes(value, value_len, "value") }?.to_vec();
        let lease = unsafe { ffi::arg(lease, "lease") }?.lease.clone();
        let client = c.client.clone();
        ffi::block(async move { client.put(&key, &value, Some(&lease)).await.map(drop) })
    })
}

/// Reads `key` (linearizable). On success writes a new buffer to `*out`, or NULL when the key
/// does not exist.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_get(client: *mut etcdlock_client, key: *const u8, key_len: usize, out: *mut *mut etcdlock_buf) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        let out = ffi::out(out, "out")?;
        let client = c.client.clone();
        let kv = ffi::block(async move { client.get(&key).await })?;
        let buf = kv.map_or(std::ptr::null_mut(), |kv| ffi::into_raw(etcdlock_buf { data: kv.value, mod_revision: kv.mod_revision }));
        unsafe { *out = buf };
        Ok(())
    })
}

/// The value's bytes (valid until the buffer is freed; not NUL-terminated). NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_buf_data(b: *const etcdlock_buf) -> *const u8 {
    ffi::value(std::ptr::null(), || Ok(unsafe { ffi::arg(b, "buf") }?.data.as_ptr()))
}

/// The value's length in bytes. 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_buf_len(b: *const etcdlock_buf) -> usize {
    ffi::value(0, || Ok(unsafe { ffi::arg(b, "buf") }?.data.len()))
}

/// The revision of the key's last modification. 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_buf_mod_revision(b: *const etcdlock_buf) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(b, "buf") }?.mod_revision))
}

/// Frees a buffer. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_buf_free(b: *mut etcdlock_buf) {
    ffi::void(|| drop(unsafe { ffi::from_raw(b) }))
}

/// Deletes `key`. Deleting a key that does not exist succeeds.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_delete(client: *mut etcdlock_client, key: *const u8, key_len: usize) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        let client = c.client.clone();
        ffi::block(async move { client.delete(&key).await.map(drop) })
    })
}
