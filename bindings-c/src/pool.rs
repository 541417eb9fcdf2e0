//! Pools of named slots: a pool handle (open or join, acquire with timeout, cancel and owner,
//! an `_async` acquire, slots added and removed at runtime), a holding (its slots and their
//! tokens, fenced writes, the lost callback, release, free) and a pool's slots as etcd has them.
//! Conversions only: the pool is the core's.

use crate::callback::{self, etcdlock_lost_cb, Slot};
use crate::cancel::etcdlock_cancel;
use crate::client::etcdlock_client;
use crate::ffi::{self, invalid};
use crate::lock_async::Callbacks;
use crate::status::ETCDLOCK_OK;
use crate::tasks::etcdlock_op;
use etcdlock::{Client, ErrorKind, Pool, PoolAcquire, PoolGuard, PoolOptions, SlotInfo, SlotState};
use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The most slots a pool may have.
pub const ETCDLOCK_MAX_POOL_SLOTS: usize = 1024;
/// The most slots one acquire may take.
pub const ETCDLOCK_MAX_POOL_COUNT: u32 = 30;
/// The longest slot id, in bytes.
pub const ETCDLOCK_MAX_SLOT_ID_LEN: usize = 128;

/// A handle on a pool of named slots (etcdlock_pool_open, etcdlock_pool_join). Any number of
/// threads may use it at once; it must not be freed while another thread is inside a call on it.
pub struct etcdlock_pool {
    pool: Pool,
    client: Client,
    callbacks: Arc<Callbacks>,
}

/// Slots held from a pool (etcdlock_pool_acquire), until etcdlock_pool_held_release or
/// etcdlock_pool_held_free (or until the holder's lease ends). Its accessors may be called from
/// any thread; it must not be freed while another thread uses it.
pub struct etcdlock_pool_held {
    guard: PoolGuard,
    /// The slot ids, NUL-terminated (read through `id_ptrs`, the array etcdlock_pool_held_slots
    /// hands out).
    _ids: Vec<CString>,
    id_ptrs: Vec<*const c_char>,
    tokens: Vec<i64>,
    owner: Option<CString>,
    client: Client,
    lost: Arc<Slot>,
    /// This holding among the handles on it (see [`Handles`]).
    handle_key: HandleKey,
}

/// Called once with the outcome of etcdlock_pool_acquire_async: `status` ETCDLOCK_OK and the
/// holding (the callee owns it: release it, then etcdlock_pool_held_free), or an error status and
/// NULL (the message is in etcdlock_last_error on this thread, during the call). Runs on a
/// library thread under the rules of etcdlock_lock_cb: return quickly; blocking calls made from
/// it return ETCDLOCK_E_WRONG_THREAD.
pub type etcdlock_pool_held_cb = Option<unsafe extern "C" fn(user_data: *mut c_void, status: c_int, held: *mut etcdlock_pool_held)>;

/// Opens the pool `name` (a NUL-terminated lock name, not ending in '/') of the slots `slots`
/// (`n_slots` NUL-terminated UTF-8 ids, 1 to ETCDLOCK_MAX_POOL_SLOTS of them, each 1 to
/// ETCDLOCK_MAX_SLOT_ID_LEN bytes without '/' or a newline, no duplicates), or with `slots` NULL
/// the pool of `n_slots` slots named "0" to "n_slots - 1". Holdings live on leases of `ttl_s`
/// seconds, kept alive while held. A slot whose holder died (its lease ended) is not handed out
/// again before `reuse_delay_ms` (timed by an etcd lease: whole seconds, rounded up, at least
/// etcd's minimum TTL unless 0; 0: at once); a released slot is free at once. Sends nothing.
///
/// The first acquire stores the definition if the pool has none; every participant must give
/// the same slots and reuse delay, and one that gives others gets ETCDLOCK_E_INVALID_ARGUMENT
/// from its acquire (the message names etcdlock_pool_add_slots / _remove_slots).
/// A bad name, no slots, a bad or duplicate id, `ttl_s` <= 0 or a negative `reuse_delay_ms` is
/// ETCDLOCK_E_INVALID_ARGUMENT here. On success writes the pool to `*out` (free it with
/// etcdlock_pool_free).
///
///     const char *gpus[] = {"gpu0", "gpu1", "gpu2"};
///     etcdlock_pool *pool = NULL;
///     etcdlock_pool_open(client, "gpus", gpus, 3, 10, 5000, &pool);
///     etcdlock_pool *ids = NULL;   // slots "0" to "1023":
///     etcdlock_pool_open(client, "snowflake/workers", NULL, 1024, 10, 30000, &ids);
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_open(
    client: *mut etcdlock_client,
    name: *const c_char,
    slots: *const *const c_char,
    n_slots: usize,
    ttl_s: i64,
    reuse_delay_ms: i64,
    out: *mut *mut etcdlock_pool,
) -> c_int {
    // The header's limits are the core's.
    const _: () = assert!(
        ETCDLOCK_MAX_POOL_SLOTS == etcdlock::MAX_POOL_SLOTS
            && ETCDLOCK_MAX_POOL_COUNT as usize == etcdlock::MAX_POOL_COUNT
            && ETCDLOCK_MAX_SLOT_ID_LEN == etcdlock::MAX_SLOT_ID_LEN
    );
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let name = unsafe { ffi::cstr(name, "name") }?.to_vec();
        let opts = if slots.is_null() {
            // (Checked here: the core would first make that many names.)
            if n_slots == 0 || n_slots > ETCDLOCK_MAX_POOL_SLOTS {
                return Err(invalid(format!("a pool has 1 to {ETCDLOCK_MAX_POOL_SLOTS} slots, got {n_slots}")));
            }
            PoolOptions::size(n_slots)
        } else {
            PoolOptions::named(unsafe { ids(slots, n_slots, "slots") }?)
        };
        let reuse_delay = match reuse_delay_ms {
            ms if ms >= 0 => Duration::from_millis(ms as u64),
            ms => return Err(invalid(format!("reuse_delay_ms must be >= 0, got {ms}"))),
        };
        let pool = c.client.pool(name, opts.ttl(ttl_s).reuse_delay(reuse_delay))?;
        unsafe { *out = ffi::into_raw(etcdlock_pool { pool, client: c.client.clone(), callbacks: c.callbacks.clone() }) };
        Ok(())
    })
}

/// Opens the pool `name` as another participant defined it, whatever its slots and reuse delay:
/// its acquires take the stored definition, and fail with ETCDLOCK_E_INVALID_ARGUMENT if nobody
/// defined the pool yet. Holdings live on leases of `ttl_s` seconds. Sends nothing.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_join(client: *mut etcdlock_client, name: *const c_char, ttl_s: i64, out: *mut *mut etcdlock_pool) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let name = unsafe { ffi::cstr(name, "name") }?.to_vec();
        let pool = c.client.join_pool(name, ttl_s)?;
        unsafe { *out = ffi::into_raw(etcdlock_pool { pool, client: c.client.clone(), callbacks: c.callbacks.clone() }) };
        Ok(())
    })
}

/// Takes `count` slots of the pool (1 to its size, at most ETCDLOCK_MAX_POOL_COUNT; else
/// ETCDLOCK_E_INVALID_ARGUMENT) that nobody else holds, and writes the holding to `*out`.
///
/// Requests are served in the order etcd committed them; a request for `count` slots waits at
/// the head until that many are free, and later requests wait behind it (so it is never
/// starved by smaller ones). `timeout_ms`: 0 tries once (ETCDLOCK_E_WOULD_BLOCK when too few
/// are free or others wait), ETCDLOCK_WAIT_FOREVER waits, otherwise ETCDLOCK_E_LOCK_TIMEOUT when
/// it passes. `cancel` (nullable): etcdlock_cancel_trigger makes the wait fail with
/// ETCDLOCK_E_CANCELLED. Every failure leaves nothing behind (no queue key, no slot).
///
/// `owner` (nullable, a NUL-terminated UTF-8 string of at most 4096 bytes): while this client
/// holds slots acquired from this pool with the same owner, the acquire returns that holding
/// again (a new handle on it: the same slots and tokens) instead of taking more, so a retried
/// call gets what it already has. Stored in the slot keys for etcdlock_inspect_pool.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_acquire(
    pool: *mut etcdlock_pool,
    count: u32,
    owner: *const c_char,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    out: *mut *mut etcdlock_pool_held,
) -> c_int {
    ffi::status(|| {
        let p = unsafe { ffi::arg(pool, "pool") }?;
        let out = ffi::out(out, "out")?;
        let opts = unsafe { acquire_options(count, owner, timeout_ms, cancel) }?;
        let pool = p.pool.clone();
        let guard = ffi::block(async move { pool.acquire_with(opts).await })?;
        unsafe { *out = ffi::into_raw(etcdlock_pool_held::new(guard, p.pool.name(), p.client.clone())) };
        Ok(())
    })
}

/// Starts etcdlock_pool_acquire (same arguments and semantics) without blocking, under the rules
/// of etcdlock_lock_acquire_async: returns ETCDLOCK_OK at once and calls `cb` exactly once later
/// with the holding or the failure (also ETCDLOCK_E_CLOSED when the client is freed or
/// etcdlock_shutdown runs first, and before etcdlock_client_free returns). A triggered `cancel`
/// makes it ETCDLOCK_E_CANCELLED, leaving nothing behind. Bad arguments return their status
/// here, and then `cb` is never called. `cb` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_acquire_async(
    pool: *mut etcdlock_pool,
    count: u32,
    owner: *const c_char,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    cb: etcdlock_pool_held_cb,
    user_data: *mut c_void,
) -> c_int {
    ffi::status(|| {
        let p = unsafe { ffi::arg(pool, "pool") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        let opts = unsafe { acquire_options(count, owner, timeout_ms, cancel) }?;
        let (pool, client, name) = (p.pool.clone(), p.client.clone(), p.pool.name().to_vec());
        crate::lock_async::spawn(&p.callbacks, user_data, async move { pool.acquire_with(opts).await }, move |user_data, outcome| {
            let (status, held) = match outcome {
                Ok(guard) => (ETCDLOCK_OK, ffi::into_raw(etcdlock_pool_held::new(guard, &name, client))),
                Err(f) => (crate::lock_async::failed(&f), std::ptr::null_mut()),
            };
            // SAFETY: the caller registered a valid function for this user_data.
            unsafe { cb(user_data, status, held) };
        });
        Ok(())
    })
}

/// The acquire arguments both forms share, checked.
unsafe fn acquire_options(count: u32, owner: *const c_char, timeout_ms: i64, cancel: *const etcdlock_cancel) -> ffi::FfiResult<PoolAcquire> {
    let owner = if owner.is_null() { None } else { Some(unsafe { ffi::utf8(owner, "owner") }?.to_string()) };
    let timeout = ffi::wait(timeout_ms)?;
    // SAFETY: NULL means no token; otherwise a live token from etcdlock_cancel_new.
    let cancel = unsafe { cancel.as_ref() }.map(|t| t.token.clone());
    Ok(PoolAcquire { count: count as usize, owner, timeout, cancel })
}

/// `n` NUL-terminated UTF-8 strings at `p` (`p` NULL only with `n` 0).
unsafe fn ids(p: *const *const c_char, n: usize, what: &str) -> ffi::FfiResult<Vec<String>> {
    if p.is_null() {
        return if n == 0 { Ok(Vec::new()) } else { Err(invalid(format!("{what} is NULL with a non-zero count"))) };
    }
    if n > ETCDLOCK_MAX_POOL_SLOTS {
        return Err(invalid(format!("a pool has 1 to {ETCDLOCK_MAX_POOL_SLOTS} slots, got {n}")));
    }
    // SAFETY: the caller gives `n` readable pointers at `p`.
    let raw = unsafe { std::slice::from_raw_parts(p, n) };
    raw.iter().enumerate().map(|(i, s)| Ok(unsafe { ffi::utf8(*s, &format!("{what}[{i}]")) }?.to_string())).collect()
}

/// Adds the slots `ids` (`n_ids` NUL-terminated ids not in the pool yet) to the pool's stored
/// definition; a request waiting meanwhile sees them at once. `size` (nullable): on success, the
/// pool's number of slots after. An id already in the pool, a bad id, or a pool nobody defined
/// yet (acquire once first) is ETCDLOCK_E_INVALID_ARGUMENT with nothing changed.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_add_slots(pool: *mut etcdlock_pool, ids: *const *const c_char, n_ids: usize, size: *mut usize) -> c_int {
    unsafe { change(pool, ids, n_ids, size, true) }
}

/// Removes the slots `ids` from the pool's stored definition. A held slot goes when its holder
/// releases it, and is not handed out meanwhile. `size` (nullable): on success, the pool's number
/// of slots after. An id not in the pool, or removing the last slot, is
/// ETCDLOCK_E_INVALID_ARGUMENT with nothing changed.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_remove_slots(pool: *mut etcdlock_pool, ids: *const *const c_char, n_ids: usize, size: *mut usize) -> c_int {
    unsafe { change(pool, ids, n_ids, size, false) }
}

unsafe fn change(pool: *mut etcdlock_pool, p: *const *const c_char, n: usize, size: *mut usize, add: bool) -> c_int {
    ffi::status(|| {
        let pl = unsafe { ffi::arg(pool, "pool") }?;
        let list = unsafe { ids(p, n, "ids") }?;
        let pool = pl.pool.clone();
        let after = ffi::block(async move { if add { pool.add_slots(list).await } else { pool.remove_slots(list).await } })?;
        if let Some(size) = unsafe { size.as_mut() } {
            *size = after.len();
        }
        Ok(())
    })
}

/// Frees the pool handle (its holdings live on: they are handles of their own). No other thread
/// may be inside a call on it. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_free(pool: *mut etcdlock_pool) {
    ffi::void(|| drop(unsafe { ffi::from_raw(pool) }))
}

/// The C handles on one holding (an acquire with the owner of a live holding hands out another
/// handle on it): the holding is released by the free of its last handle.
type HandleKey = (Vec<u8>, i64, i64);
static HANDLES: Mutex<BTreeMap<HandleKey, usize>> = Mutex::new(BTreeMap::new());

impl etcdlock_pool_held {
    fn new(guard: PoolGuard, pool: &[u8], client: Client) -> etcdlock_pool_held {
        // Slot ids hold no NUL the C API can give; one written elsewhere is cut at its first NUL.
        let cut = |s: &str| CString::new(s.split('\0').next().unwrap_or_default()).unwrap_or_default();
        let ids: Vec<CString> = guard.tokens().iter().map(|(s, _)| cut(s)).collect();
        let id_ptrs = ids.iter().map(|s| s.as_ptr()).collect();
        let tokens = guard.tokens().iter().map(|(_, t)| *t).collect();
        let owner = guard.owner().map(cut);
        let handle_key = (pool.to_vec(), guard.lease_id(), guard.fencing_token());
        *HANDLES.lock().unwrap_or_else(|e| e.into_inner()).entry(handle_key.clone()).or_default() += 1;
        etcdlock_pool_held { guard, _ids: ids, id_ptrs, tokens, owner, client, lost: Slot::new(), handle_key }
    }

    /// The core's holding (for its fence, in fence.rs).
    pub(crate) fn guard(&self) -> &PoolGuard {
        &self.guard
    }

    /// Counts this handle out; true if it was the holding's last.
    fn last_handle(&self) -> bool {
        let mut handles = HANDLES.lock().unwrap_or_else(|e| e.into_inner());
        let n = handles.get_mut(&self.handle_key).map_or(0, |n| {
            *n -= 1;
            *n
        });
        if n == 0 {
            handles.remove(&self.handle_key);
        }
        n == 0
    }

    /// After a release: no lost callback from here on (unless the call was refused on a library
    /// thread, which changed nothing).
    fn end<T>(&self, r: &ffi::FfiResult<T>) {
        if !matches!(r, Err(f) if f.status == crate::status::ETCDLOCK_E_WRONG_THREAD) {
            self.lost.disarm();
        }
    }
}

/// The slot ids held, in the pool's order: `*n` NUL-terminated strings (`n` may be NULL), valid
/// until the holding is freed. NULL for a NULL holding.
///
///     size_t n = 0;
///     const char *const *slots = etcdlock_pool_held_slots(held, &n);
///     const int64_t *tokens = etcdlock_pool_held_tokens(held, NULL);
///     for (size_t i = 0; i < n; i++) printf("%s token %lld\n", slots[i], (long long)tokens[i]);
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_slots(held: *const etcdlock_pool_held, n: *mut usize) -> *const *const c_char {
    ffi::value(std::ptr::null(), || {
        let h = unsafe { ffi::arg(held, "held") }?;
        if let Some(n) = unsafe { n.as_mut() } {
            *n = h.id_ptrs.len();
        }
        Ok(h.id_ptrs.as_ptr())
    })
}

/// Each held slot's fencing token (its key's create revision, larger for every later holder of
/// that slot), in the order of etcdlock_pool_held_slots: `*n` of them (`n` may be NULL), valid
/// until the holding is freed. NULL for a NULL holding.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_tokens(held: *const etcdlock_pool_held, n: *mut usize) -> *const i64 {
    ffi::value(std::ptr::null(), || {
        let h = unsafe { ffi::arg(held, "held") }?;
        if let Some(n) = unsafe { n.as_mut() } {
            *n = h.tokens.len();
        }
        Ok(h.tokens.as_ptr())
    })
}

/// The acquisition's fencing token: larger for every later acquisition from this pool. 0 for
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_fencing_token(held: *const etcdlock_pool_held) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(held, "held") }?.guard.fencing_token()))
}

/// The owner the slots were acquired with, NUL-terminated, valid until the holding is freed;
/// NULL for none (or a NULL holding).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_owner(held: *const etcdlock_pool_held) -> *const c_char {
    ffi::value(std::ptr::null(), || Ok(unsafe { ffi::arg(held, "held") }?.owner.as_ref().map_or(std::ptr::null(), |o| o.as_ptr())))
}

/// The ID of the lease the slots are held on (shared by the client's holdings and locks of the
/// same TTL). 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_lease_id(held: *const etcdlock_pool_held) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(held, "held") }?.guard.lease_id()))
}

/// Cheap local check: neither released nor known lost. false for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_is_held(held: *const etcdlock_pool_held) -> bool {
    ffi::value(false, || Ok(unsafe { ffi::arg(held, "held") }?.guard.is_held()))
}

/// Fills `*out` with the holding's health (held, lost or released; `ok` while held and not in
/// doubt), as etcdlock_lock_health. ETCDLOCK_E_INVALID_ARGUMENT for a NULL handle or `out`.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_health(held: *const etcdlock_pool_held, out: *mut crate::health::etcdlock_health) -> c_int {
    crate::health::fill(out, || Ok(unsafe { ffi::arg(held, "held") }?.guard.health()))
}

/// Why the holding was lost (an ETCDLOCK_LOST_* reason), or 0 if it was not (or NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_lost_reason(held: *const etcdlock_pool_held) -> c_int {
    ffi::value(0, || Ok(unsafe { ffi::arg(held, "held") }?.guard.lost_reason().map_or(0, callback::reason_code)))
}

/// Registers `cb`, called once with `user_data` and an ETCDLOCK_LOST_* reason when the holding
/// is lost (its lease ended: stop using the slots, another holder may get them after the reuse
/// delay), not when it is released, under the rules of etcdlock_lock_on_lost. No call happens
/// after etcdlock_pool_held_release or etcdlock_pool_held_free (of this handle) has returned.
/// ETCDLOCK_E_NOT_HELD once the slots were released.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_on_lost(held: *mut etcdlock_pool_held, cb: etcdlock_lost_cb, user_data: *mut c_void) -> c_int {
    ffi::status(|| {
        let h = unsafe { ffi::arg(held, "held") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        if !h.guard.is_held() && h.guard.lost_reason().is_none() {
            return Err(etcdlock::Error::new(ErrorKind::NotHeld, "the slots were released").into());
        }
        h.lost.arm(cb, user_data, h.guard.lost());
        Ok(())
    })
}

/// Writes `value` at `key` only while every slot of the holding is still this holding's, checked
/// by etcd atomically with the write (ETCDLOCK_E_NOT_HELD otherwise, nothing written). A key
/// under the pool's own `<name>/` is ETCDLOCK_E_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_put(held: *mut etcdlock_pool_held, key: *const u8, key_len: usize, value: *const u8, value_len: usize) -> c_int {
    ffi::status(|| {
        let h = unsafe { ffi::arg(held, "held") }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        let value = unsafe { ffi::bytes(value, value_len, "value") }?.to_vec();
        let guard = h.guard.clone();
        ffi::block(async move { guard.put(&key, &value).await.map(drop) })
    })
}

/// Deletes `key` only while every slot of the holding is still this holding's
/// (ETCDLOCK_E_NOT_HELD otherwise, nothing deleted). A key under the pool's own `<name>/` is
/// ETCDLOCK_E_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_delete(held: *mut etcdlock_pool_held, key: *const u8, key_len: usize) -> c_int {
    ffi::status(|| {
        let h = unsafe { ffi::arg(held, "held") }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        let guard = h.guard.clone();
        ffi::block(async move { guard.delete(&key).await.map(drop) })
    })
}

/// Applies `n_ops` writes (`ops`, 1 to 64 of them) in one transaction, only while every slot of
/// the holding is still this holding's (ETCDLOCK_E_NOT_HELD otherwise, nothing written).
/// `revision` (nullable): on success, the transaction's etcd revision. No ops, a key under the
/// pool's own `<name>/`, an empty key or an unknown kind is ETCDLOCK_E_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_txn(held: *mut etcdlock_pool_held, ops: *const etcdlock_op, n_ops: usize, revision: *mut i64) -> c_int {
    ffi::status(|| {
        let h = unsafe { ffi::arg(held, "held") }?;
        let list = unsafe { crate::tasks::ops_of(ops, n_ops) }?;
        let guard = h.guard.clone();
        let rev = ffi::block(async move { guard.txn(&list).await })?;
        if let Some(out) = unsafe { revision.as_mut() } {
            *out = rev;
        }
        Ok(())
    })
}

/// Gives every slot back at once (each free for the next request, no reuse delay), in one
/// transaction that applies only while they are this holding's. Other handles on the same
/// holding (an acquire with its owner) see it released too. ETCDLOCK_E_NOT_HELD if already
/// released or lost. Disarms the lost callback.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_release(held: *mut etcdlock_pool_held) -> c_int {
    ffi::status(|| {
        let h = unsafe { ffi::arg(held, "held") }?;
        let guard = h.guard.clone();
        let r = ffi::block(async move { guard.release().await });
        h.end(&r);
        r
    })
}

/// Frees the holding handle. The last handle on a holding still held releases it first, as
/// etcdlock_pool_held_release (in the background when called from a library thread); another
/// handle on it (an acquire with its owner) keeps it held. No lost callback of this handle runs
/// after this returns. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_held_free(held: *mut etcdlock_pool_held) {
    ffi::void(|| {
        let Some(h) = (unsafe { ffi::from_raw(held) }) else { return };
        h.lost.disarm();
        // Released or lost: nothing to give back (dropping the last clone gives back the slot
        // keys of a lost holding that are still its own, in the background).
        if h.last_handle() && h.guard.is_held() && ffi::may_block() && !h.client.is_closed() {
            let guard = h.guard.clone();
            let _ = ffi::block(async move { guard.release().await });
        }
    })
}

/// A slot's state (etcdlock_slot_info): it can be handed out now.
pub const ETCDLOCK_SLOT_FREE: c_int = 0;
/// A slot's state: held (`token`, `lease`, `ttl_s`, `acquisition` and `owner` say by whom).
pub const ETCDLOCK_SLOT_HELD: c_int = 1;
/// A slot's state: its holder died and it rests the reuse delay, until its rest's lease
/// (`lease`, `ttl_s` seconds left) ends.
pub const ETCDLOCK_SLOT_RESTING: c_int = 2;
/// A slot's state: its holder died and no request has seen it yet; it will rest first.
pub const ETCDLOCK_SLOT_DEAD: c_int = 3;

/// One slot of a pool (etcdlock_inspect_pool). Pointers are valid until its etcdlock_pool_state
/// is freed.
#[repr(C)]
pub struct etcdlock_slot_info {
    /// The slot id, NUL-terminated.
    pub id: *const c_char,
    /// An ETCDLOCK_SLOT_* state.
    pub state: c_int,
    /// HELD: the slot's fencing token; otherwise 0.
    pub token: i64,
    /// HELD: the holder's lease; RESTING: the rest's lease; otherwise 0.
    pub lease: i64,
    /// Seconds that lease has left on the server; -1 when it is gone or there is none.
    pub ttl_s: i64,
    /// HELD: the acquisition's fencing token; otherwise 0.
    pub acquisition: i64,
    /// HELD: the owner the slot was acquired with ("" for none); otherwise "". NUL-terminated.
    pub owner: *const c_char,
}

/// A pool's slots in its order, read at one revision. Free with etcdlock_pool_state_free.
#[repr(C)]
pub struct etcdlock_pool_state {
    /// The slots in the pool's order, `n_slots` of them.
    pub slots: *const etcdlock_slot_info,
    /// How many entries `slots` points to.
    pub n_slots: usize,
}

#[repr(C)]
struct OwnedState {
    view: etcdlock_pool_state,
    entries: Vec<etcdlock_slot_info>,
    strings: Vec<CString>,
}

fn state_out(slots: Vec<SlotInfo>) -> *mut etcdlock_pool_state {
    let cut = |s: &str| CString::new(s.split('\0').next().unwrap_or_default()).unwrap_or_default();
    let mut strings = Vec::with_capacity(2 * slots.len());
    let mut entries = Vec::with_capacity(slots.len());
    for s in &slots {
        let (state, token, lease, ttl, acquisition, owner) = match &s.state {
            SlotState::Free => (ETCDLOCK_SLOT_FREE, 0, 0, None, 0, ""),
            SlotState::Held { token, lease, ttl, acquisition, owner } => (ETCDLOCK_SLOT_HELD, *token, *lease, *ttl, *acquisition, owner.as_str()),
            SlotState::Resting { lease, ttl } => (ETCDLOCK_SLOT_RESTING, 0, *lease, *ttl, 0, ""),
            SlotState::Dead => (ETCDLOCK_SLOT_DEAD, 0, 0, None, 0, ""),
        };
        let (id, owner) = (cut(&s.id), cut(owner));
        // A CString's heap buffer stays where it is when the CString moves into the Vec.
        entries.push(etcdlock_slot_info { id: id.as_ptr(), state, token, lease, ttl_s: ttl.unwrap_or(-1), acquisition, owner: owner.as_ptr() });
        strings.extend([id, owner]);
    }
    let view = etcdlock_pool_state { slots: entries.as_ptr(), n_slots: entries.len() };
    Box::into_raw(Box::new(OwnedState { view, entries, strings })).cast::<etcdlock_pool_state>()
}

/// Reads the slots of the pool `name` (a NUL-terminated lock name) at one revision: each free,
/// held (by whom, since which token), resting (until when) or dead, in the pool's order, and
/// writes them to `*out` (free with etcdlock_pool_state_free), or NULL if no pool is defined
/// there. Changes nothing.
///
///     etcdlock_pool_state *st = NULL;
///     if (etcdlock_inspect_pool(client, "gpus", &st) == ETCDLOCK_OK && st) {
///         for (size_t i = 0; i < st->n_slots; i++)
///             printf("%s %s\n", st->slots[i].id, st->slots[i].state == ETCDLOCK_SLOT_HELD ? st->slots[i].owner : "-");
///         etcdlock_pool_state_free(st);
///     }
#[no_mangle]
pub unsafe extern "C" fn etcdlock_inspect_pool(client: *mut etcdlock_client, name: *const c_char, out: *mut *mut etcdlock_pool_state) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let name = unsafe { ffi::cstr(name, "name") }?.to_vec();
        etcdlock::check_lock_name(&name)?;
        let client = c.client.clone();
        let slots = ffi::block(async move { client.inspect_pool(name).await })?;
        unsafe { *out = slots.map_or(std::ptr::null_mut(), state_out) };
        Ok(())
    })
}

/// Frees what etcdlock_inspect_pool wrote. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_pool_state_free(state: *mut etcdlock_pool_state) {
    ffi::void(|| {
        if !state.is_null() {
            // SAFETY: from state_out, where it is the first field of a boxed OwnedState.
            drop(unsafe { Box::from_raw(state.cast::<OwnedState>()) });
        }
    })
}
