//! Once-per-period jobs: the period's slot a caller won (or NULL), marked done or released.
//! Conversions only: the behaviour is the core's.

use crate::callback::{self, etcdlock_lost_cb, Slot};
use crate::client::etcdlock_client;
use crate::ffi::{self, invalid};
use etcdlock::{Client, ErrorKind, OnceOptions, OnceSlot};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

/// The period's slot of a once-per-period job, won by this caller (etcdlock_once): run the job,
/// then etcdlock_once_done; or etcdlock_once_release (the job failed) to let the next trigger
/// in the period run it. Freed without either, it is released. Its accessors may be called from
/// any thread; it must not be freed while another thread uses it.
pub struct etcdlock_once_slot {
    slot: Arc<OnceSlot>,
    client: Client,
    lost: Arc<Slot>,
}

/// Claims the period's slot of the job `name` (a NUL-terminated lock name, not ending in '/'),
/// run at most once per period of `every_ms` (at least 1000) across every caller that
/// triggers it. The slot is the period boundary nearest the trigger time `at_unix_ms`
/// (milliseconds since the epoch; 0 for now), so hosts whose clocks differ by less than half a
/// period pick the same one. The claim is a try-lock on a lease of `ttl_s` seconds kept alive
/// while the job runs; a done mark is kept `keep_periods` periods (at least 2).
///
/// On ETCDLOCK_OK writes to `*out` the slot if this caller won it (the job is this caller's to
/// run; free it with etcdlock_once_free after etcdlock_once_done or etcdlock_once_release), or
/// NULL if the period's job is done or another caller runs it. A bad name, `every_ms` under
/// 1000, `ttl_s` <= 0, `keep_periods` under 2 or a trigger time before 1970 (negative) is
/// ETCDLOCK_E_INVALID_ARGUMENT with nothing written.
///
///     etcdlock_once_slot *slot = NULL;
///     if (etcdlock_once(client, "reports/daily", 86400000, 10, 0, 3, &slot) == ETCDLOCK_OK && slot) {
///         run_report(etcdlock_once_fencing_token(slot));   // fenced where it writes
///         etcdlock_once_done(slot);
///         etcdlock_once_free(slot);
///     }
#[no_mangle]
pub unsafe extern "C" fn etcdlock_once(
    client: *mut etcdlock_client,
    name: *const c_char,
    every_ms: i64,
    ttl_s: i64,
    at_unix_ms: i64,
    keep_periods: u32,
    out: *mut *mut etcdlock_once_slot,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let name = unsafe { ffi::cstr(name, "name") }?.to_vec();
        let every = u64::try_from(every_ms).map_err(|_| invalid(format!("every_ms must be at least 1000, got {every_ms}")))?;
        let at = match at_unix_ms {
            0 => None,
            ms if ms > 0 => Some(UNIX_EPOCH + Duration::from_millis(ms as u64)),
            ms => return Err(invalid(format!("a trigger time before 1970: at_unix_ms {ms}"))),
        };
        let every = Duration::from_millis(every);
        // (The core multiplies the two, which must not overflow first.)
        if every.checked_mul(keep_periods).is_none() {
            return Err(invalid(format!("every_ms {every_ms} times keep_periods {keep_periods} is beyond any lease's TTL")));
        }
        let opts = OnceOptions { every, ttl_secs: ttl_s, at, keep_periods };
        etcdlock::check_once(&name, &opts)?;
        let client = c.client.clone();
        let won = ffi::block(async move { client.once(name, opts).await })?;
        let handle = won.map_or(std::ptr::null_mut(), |slot| {
            ffi::into_raw(etcdlock_once_slot { slot: Arc::new(slot), client: c.client.clone(), lost: Slot::new() })
        });
        unsafe { *out = handle };
        Ok(())
    })
}

/// The slot's index: its period boundary is `index * every_ms` after the epoch. 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_once_index(slot: *const etcdlock_once_slot) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(slot, "slot") }?.slot.slot()))
}

/// The claim's fencing token: larger for every later claim. 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_once_fencing_token(slot: *const etcdlock_once_slot) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(slot, "slot") }?.slot.fencing_token()))
}

/// Cheap local check: neither done, released nor lost. false for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_once_is_held(slot: *const etcdlock_once_slot) -> bool {
    ffi::value(false, || Ok(unsafe { ffi::arg(slot, "slot") }?.slot.is_held()))
}

/// Fills `*out` with the claim's health (held, lost or released; `ok` while held and not in
/// doubt), as etcdlock_lock_health. ETCDLOCK_E_INVALID_ARGUMENT for a NULL handle or `out`.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_once_health(slot: *const etcdlock_once_slot, out: *mut crate::health::etcdlock_health) -> c_int {
    crate::health::fill(out, || Ok(unsafe { ffi::arg(slot, "slot") }?.slot.health()))
}

/// Why the claim was lost (an ETCDLOCK_LOST_* reason), or 0 if it was not (or NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_once_lost_reason(slot: *const etcdlock_once_slot) -> c_int {
    ffi::value(0, || Ok(unsafe { ffi::arg(slot, "slot") }?.slot.lost_reason().map_or(0, callback::reason_code)))
}

/// Registers `cb`, called once with `user_data` and an ETCDLOCK_LOST_* reason if the claim is
/// lost while the job runs (another trigger may run it now), under the rules of
/// etcdlock_lock_on_lost. No call happens after etcdlock_once_done, etcdlock_once_release or
/// etcdlock_once_free has returned. ETCDLOCK_E_NOT_HELD once the slot was done or released.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_once_on_lost(slot: *mut etcdlock_once_slot, cb: etcdlock_lost_cb, user_data: *mut c_void) -> c_int {
    ffi::status(|| {
        let s = unsafe { ffi::arg(slot, "slot") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        if !s.slot.is_held() && s.slot.lost_reason().is_none() {
            return Err(etcdlock::Error::new(ErrorKind::NotHeld, "the slot was done or released").into());
        }
        s.lost.arm(cb, user_data, s.slot.lost());
        Ok(())
    })
}

/// Writes `value` at `key` only while the claim holds, checked by etcd atomically with the write
/// (ETCDLOCK_E_NOT_HELD otherwise, nothing written): a winner that was cut off, and whose period
/// another trigger took over, writes nothing. A key under the job's own `<name>/` (its slots and
/// done marks) is ETCDLOCK_E_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_once_put(slot: *mut etcdlock_once_slot, key: *const u8, key_len: usize, value: *const u8, value_len: usize) -> c_int {
    ffi::status(|| {
        let s = unsafe { ffi::arg(slot, "slot") }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        let value = unsafe { ffi::bytes(value, value_len, "value") }?.to_vec();
        let slot = s.slot.clone();
        ffi::block(async move { slot.put(&key, &value).await.map(drop) })
    })
}

/// Deletes `key` only while the claim holds (ETCDLOCK_E_NOT_HELD otherwise, nothing deleted). A
/// key under the job's own `<name>/` is ETCDLOCK_E_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_once_delete(slot: *mut etcdlock_once_slot, key: *const u8, key_len: usize) -> c_int {
    ffi::status(|| {
        let s = unsafe { ffi::arg(slot, "slot") }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        let slot = s.slot.clone();
        ffi::block(async move { slot.delete(&key).await.map(drop) })
    })
}

/// Marks the period's job done and ends the claim, in one transaction that applies only while
/// the claim holds: later triggers in the period get NULL. ETCDLOCK_E_NOT_HELD, and nothing
/// marked, if the claim was lost (the next trigger runs the job again) or already ended.
/// Disarms the lost callback.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_once_done(slot: *mut etcdlock_once_slot) -> c_int {
    ffi::status(|| {
        let s = unsafe { ffi::arg(slot, "slot") }?;
        let slot = s.slot.clone();
        let r = ffi::block(async move { slot.done().await });
        s.end(&r);
        r
    })
}

/// Ends the claim without marking the job done (the job failed): the next trigger in this
/// period runs it. ETCDLOCK_E_NOT_HELD if the claim was lost or already ended. Disarms the lost
/// callback.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_once_release(slot: *mut etcdlock_once_slot) -> c_int {
    ffi::status(|| {
        let s = unsafe { ffi::arg(slot, "slot") }?;
        let slot = s.slot.clone();
        let r = ffi::block(async move { slot.release().await });
        s.end(&r);
        r
    })
}

impl etcdlock_once_slot {
    /// After done or release: no lost callback from here on (unless the call was refused on a
    /// library thread, which changed nothing).
    fn end(&self, r: &ffi::FfiResult) {
        if !matches!(r, Err(f) if f.status == crate::status::ETCDLOCK_E_WRONG_THREAD) {
            self.lost.disarm();
        }
    }
}

/// Frees the slot. One neither done nor released is released first, as by
/// etcdlock_once_release (in the background when called from a library thread). No lost
/// callback runs after this returns. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_once_free(slot: *mut etcdlock_once_slot) {
    ffi::void(|| {
        let Some(s) = (unsafe { ffi::from_raw(slot) }) else { return };
        s.lost.disarm();
        if s.slot.is_held() && ffi::may_block() && !s.client.is_closed() {
            let slot = s.slot.clone();
            let _ = ffi::block(async move { slot.release().await });
        }
    })
}
