//! The task queue: a queue handle (put, claim with timeout and cancel, an `_async` claim, the
//! counts and the dead letters) and a claimed task (accessors, fenced writes, ack, nack, the
//! lost callback, free). Conversions only: the queue is the core's.

use crate::callback::{self, etcdlock_lost_cb, Slot};
use crate::cancel::etcdlock_cancel;
use crate::client::etcdlock_client;
use crate::ffi::{self, invalid};
use crate::lock_async::Callbacks;
use crate::status::ETCDLOCK_OK;
use etcdlock::{ClaimOptions, Client, ErrorKind, QueueOptions, QueueStats, Task, TaskOptions, TaskQueue};
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;
use std::time::Duration;

/// The largest task payload in bytes: etcd's default request limit (1.5 MiB) less room for
/// the keys and the id that travel with it.
pub const ETCDLOCK_MAX_TASK_PAYLOAD_LEN: usize = 1564672;
/// The longest task id in bytes.
pub const ETCDLOCK_MAX_TASK_ID_LEN: usize = 256;

/// A handle on a task queue in etcd (etcdlock_queue_open). Any number of threads may use it at
/// once; it must not be freed while another thread is inside a call on it.
pub struct etcdlock_queue {
    queue: TaskQueue,
    client: Client,
    callbacks: Arc<Callbacks>,
}

/// A claimed task: its claim lives on the client's lease (TTL: the queue's), kept alive while
/// the task is held. etcdlock_task_ack ends it by deleting the item, etcdlock_task_nack by
/// giving it back; etcdlock_task_free without either gives it back. Its accessors may be called
/// from any thread; it must not be freed while another thread uses it.
pub struct etcdlock_task {
    pub(crate) task: Arc<Task>,
    /// The id, NUL-terminated for etcdlock_task_id.
    id: CString,
    client: Client,
    lost: Arc<Slot>,
}

/// Called once with the outcome of etcdlock_queue_claim_async: `status` ETCDLOCK_OK and the
/// claimed task (the callee owns it: ack or nack it, then etcdlock_task_free), or an error
/// status and NULL (the message is in etcdlock_last_error on this thread, during the call).
/// Runs on a library thread under the rules of etcdlock_lock_cb: return quickly; blocking calls
/// made from it return ETCDLOCK_E_WRONG_THREAD.
pub type etcdlock_task_cb = Option<unsafe extern "C" fn(user_data: *mut c_void, status: c_int, task: *mut etcdlock_task)>;

/// Opens the task queue `name` (a NUL-terminated lock name, not ending in '/'): its claims live
/// on leases of `ttl_s` seconds, kept alive while a task is held (how long a dead worker's item
/// stays claimed), and an item is delivered at most `max_attempts` times (at least 1) before it
/// goes to the dead letters. Sends nothing. A bad name, `ttl_s` <= 0 or `max_attempts` 0 is
/// ETCDLOCK_E_INVALID_ARGUMENT, a closed client ETCDLOCK_E_CLOSED. On success writes the queue
/// to `*out` (free it with etcdlock_queue_free). Claims have no time limit:
/// etcdlock_queue_open_with_max_processing sets one.
///
///     etcdlock_queue *q = NULL;
///     if (etcdlock_queue_open(client, "jobs/resize", 10, 5, &q) == ETCDLOCK_OK) { ... }
#[no_mangle]
pub unsafe extern "C" fn etcdlock_queue_open(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    max_attempts: u32,
    out: *mut *mut etcdlock_queue,
) -> c_int {
    unsafe { etcdlock_queue_open_with_max_processing(client, name, ttl_s, max_attempts, 0, out) }
}

/// etcdlock_queue_open with a limit on how long a claim lasts: `max_processing_ms` after a task
/// was claimed its claim ends, held or not (its key is deleted, the lost callback fires with
/// ETCDLOCK_LOST_KEY_DELETED, etcdlock_task_is_held turns false, its ack and fenced writes fail
/// with ETCDLOCK_E_NOT_HELD, and the item is claimable again), so a hung handler cannot keep an
/// item while its process keeps the lease alive. 0: no limit (as etcdlock_queue_open); a
/// negative value is ETCDLOCK_E_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_queue_open_with_max_processing(
    client: *mut etcdlock_client,
    name: *const c_char,
    ttl_s: i64,
    max_attempts: u32,
    max_processing_ms: i64,
    out: *mut *mut etcdlock_queue,
) -> c_int {
    // The header's limits are the core's.
    const _: () = assert!(ETCDLOCK_MAX_TASK_PAYLOAD_LEN == etcdlock::MAX_TASK_PAYLOAD_LEN && ETCDLOCK_MAX_TASK_ID_LEN == etcdlock::MAX_TASK_ID_LEN);
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let name = unsafe { ffi::cstr(name, "name") }?.to_vec();
        let max_processing = match max_processing_ms {
            0 => None,
            ms if ms > 0 => Some(Duration::from_millis(ms as u64)),
            ms => return Err(invalid(format!("max_processing_ms must be >= 0 (0: no limit), got {ms}"))),
        };
        let queue = c.client.queue(name, QueueOptions { ttl_secs: ttl_s, max_attempts, max_processing })?;
        unsafe { *out = ffi::into_raw(etcdlock_queue { queue, client: c.client.clone(), callbacks: c.callbacks.clone() }) };
        Ok(())
    })
}

/// Adds an item: `payload` (`payload_len` bytes, at most ETCDLOCK_MAX_TASK_PAYLOAD_LEN; NULL
/// with length 0 for an empty one) with the id `id` (a NUL-terminated UTF-8 string of 1 to
/// ETCDLOCK_MAX_TASK_ID_LEN bytes without a newline; NULL for a random one). A put with the id
/// of an item that exists (pending, claimed, delayed or dead) changes nothing and succeeds.
/// Higher `priority` first; in one priority, in the order etcd committed the puts. Not
/// claimable before `delay_ms` (0: at once; timed by an etcd lease, so rounded up to whole
/// seconds). Bad arguments (a negative delay, one over etcd's largest TTL, too large a
/// payload, a bad id) are ETCDLOCK_E_INVALID_ARGUMENT with nothing written.
///
/// `id_out` (nullable): on success, the item's id as a new NUL-terminated string (free it
/// with etcdlock_string_free).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_queue_put(
    queue: *mut etcdlock_queue,
    payload: *const u8,
    payload_len: usize,
    id: *const c_char,
    priority: i32,
    delay_ms: i64,
    id_out: *mut *mut c_char,
) -> c_int {
    ffi::status(|| {
        let q = unsafe { ffi::arg(queue, "queue") }?;
        let payload = unsafe { ffi::bytes(payload, payload_len, "payload") }?.to_vec();
        let id = if id.is_null() { None } else { Some(unsafe { ffi::utf8(id, "id") }?.to_string()) };
        let delay = match delay_ms {
            0 => None,
            d if d > 0 => Some(Duration::from_millis(d as u64)),
            d => return Err(invalid(format!("delay_ms must be >= 0, got {d}"))),
        };
        let queue = q.queue.clone();
        let id = ffi::block(async move { queue.put(&payload, TaskOptions { id, priority, delay }).await })?;
        if !id_out.is_null() {
            // Ids hold no NUL (the core refuses them).
            let text = CString::new(id).map_err(|_| invalid("the id holds a NUL"))?;
            unsafe { *id_out = text.into_raw() };
        }
        Ok(())
    })
}

/// Claims the oldest available item of the highest priority, on this client's lease for the
/// queue's TTL, and writes the task to `*out`. Waiting workers are served in the order they
/// began waiting.
///
/// `timeout_ms`: 0 tries once (ETCDLOCK_E_WOULD_BLOCK when nothing is available),
/// ETCDLOCK_WAIT_FOREVER waits until an item comes, otherwise ETCDLOCK_E_LOCK_TIMEOUT when it
/// passes. `cancel` (nullable): etcdlock_cancel_trigger makes the wait fail with
/// ETCDLOCK_E_CANCELLED, leaving nothing behind. `worker` (`worker_len` bytes, at most 4096;
/// NULL with length 0 for none) is stored in the claim key, for `etcdlock status` to show who
/// works on what (a host, a pid).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_queue_claim(
    queue: *mut etcdlock_queue,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    worker: *const u8,
    worker_len: usize,
    out: *mut *mut etcdlock_task,
) -> c_int {
    ffi::status(|| {
        let q = unsafe { ffi::arg(queue, "queue") }?;
        let out = ffi::out(out, "out")?;
        let opts = unsafe { claim_options(timeout_ms, cancel, worker, worker_len) }?;
        let queue = q.queue.clone();
        let task = ffi::block(async move { queue.claim(opts).await })?;
        unsafe { *out = ffi::into_raw(etcdlock_task::new(task, q.client.clone())) };
        Ok(())
    })
}

/// Starts etcdlock_queue_claim (same arguments and semantics) without blocking, under the rules
/// of etcdlock_lock_acquire_async: returns ETCDLOCK_OK at once and calls `cb` exactly once
/// later with the task or the failure (also ETCDLOCK_E_CLOSED when the client is freed or
/// etcdlock_shutdown runs first, and before etcdlock_client_free returns). A triggered
/// `cancel` makes it ETCDLOCK_E_CANCELLED, leaving nothing behind. Bad arguments return their
/// status here, and then `cb` is never called. `cb` must not be NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_queue_claim_async(
    queue: *mut etcdlock_queue,
    timeout_ms: i64,
    cancel: *const etcdlock_cancel,
    worker: *const u8,
    worker_len: usize,
    cb: etcdlock_task_cb,
    user_data: *mut c_void,
) -> c_int {
    ffi::status(|| {
        let q = unsafe { ffi::arg(queue, "queue") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        let opts = unsafe { claim_options(timeout_ms, cancel, worker, worker_len) }?;
        let (queue, client) = (q.queue.clone(), q.client.clone());
        crate::lock_async::spawn(&q.callbacks, user_data, async move { queue.claim(opts).await }, move |user_data, outcome| {
            let (status, task) = match outcome {
                Ok(task) => (ETCDLOCK_OK, ffi::into_raw(etcdlock_task::new(task, client))),
                Err(f) => (crate::lock_async::failed(&f), std::ptr::null_mut()),
            };
            // SAFETY: the caller registered a valid function for this user_data.
            unsafe { cb(user_data, status, task) };
        });
        Ok(())
    })
}

/// The claim arguments both forms share, checked.
unsafe fn claim_options(timeout_ms: i64, cancel: *const etcdlock_cancel, worker: *const u8, worker_len: usize) -> ffi::FfiResult<ClaimOptions> {
    let worker = unsafe { crate::lock::lock_value(worker, worker_len) }?;
    let timeout = ffi::wait(timeout_ms)?;
    // SAFETY: NULL means no token; otherwise a live token from etcdlock_cancel_new.
    let cancel = unsafe { cancel.as_ref() }.map(|t| t.token.clone());
    Ok(ClaimOptions { timeout, cancel, worker })
}

/// How many items of one priority are pending.
#[repr(C)]
pub struct etcdlock_priority_count {
    /// The priority.
    pub priority: i32,
    /// How many pending items have it.
    pub count: u64,
}

/// A queue's items by state, read at one revision (written by etcdlock_queue_stats; in C a
/// type and a function cannot share a name). Free with etcdlock_queue_counts_free.
#[repr(C)]
pub struct etcdlock_queue_counts {
    /// Claimable now.
    pub pending: u64,
    /// `pending` by priority, the highest priority first (`n_by_priority` entries).
    pub by_priority: *const etcdlock_priority_count,
    /// How many entries `by_priority` points to.
    pub n_by_priority: usize,
    /// Put or given back with a delay that has not passed.
    pub delayed: u64,
    /// Held by a worker.
    pub claimed: u64,
    /// In the dead letters.
    pub dead: u64,
    /// The etcd revision the counts are at.
    pub revision: i64,
}

/// The C view first, then the storage it points into.
#[repr(C)]
struct OwnedStats {
    view: etcdlock_queue_counts,
    entries: Vec<etcdlock_priority_count>,
}

fn stats_out(s: QueueStats) -> *mut etcdlock_queue_counts {
    let entries: Vec<etcdlock_priority_count> =
        s.pending_by_priority.iter().rev().map(|(&priority, &count)| etcdlock_priority_count { priority, count }).collect();
    let view = etcdlock_queue_counts {
        pending: s.pending,
        by_priority: entries.as_ptr(),
        n_by_priority: entries.len(),
        delayed: s.delayed,
        claimed: s.claimed,
        dead: s.dead,
        revision: s.revision,
    };
    // Moving the Vec into the box keeps its heap buffer where the view points.
    Box::into_raw(Box::new(OwnedStats { view, entries })).cast::<etcdlock_queue_counts>()
}

/// Counts the queue's pending (by priority), delayed, claimed and dead items, read at one
/// revision, and writes them to `*out` (free with etcdlock_queue_counts_free).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_queue_stats(queue: *mut etcdlock_queue, out: *mut *mut etcdlock_queue_counts) -> c_int {
    ffi::status(|| {
        let q = unsafe { ffi::arg(queue, "queue") }?;
        let out = ffi::out(out, "out")?;
        let queue = q.queue.clone();
        let s = ffi::block(async move { queue.stats().await })?;
        unsafe { *out = stats_out(s) };
        Ok(())
    })
}

/// Frees what etcdlock_queue_stats wrote. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_queue_counts_free(counts: *mut etcdlock_queue_counts) {
    ffi::void(|| {
        if !counts.is_null() {
            // SAFETY: from stats_out, where it is the first field of a boxed OwnedStats.
            drop(unsafe { Box::from_raw(counts.cast::<OwnedStats>()) });
        }
    })
}

/// An item in the dead letters (past its last delivery). Pointers are valid until its
/// etcdlock_dead_task_list is freed.
#[repr(C)]
pub struct etcdlock_dead_task {
    /// Its id, NUL-terminated.
    pub id: *const c_char,
    /// `payload_len` bytes, not NUL-terminated.
    pub payload: *const u8,
    /// The length of `payload` in bytes.
    pub payload_len: usize,
    /// The deliveries it had.
    pub attempts: u32,
    /// The priority it was put with.
    pub priority: i32,
}

/// A queue's dead letters, in id order (bytewise). Free with etcdlock_dead_task_list_free.
#[repr(C)]
pub struct etcdlock_dead_task_list {
    /// The dead items, `n_tasks` of them.
    pub tasks: *const etcdlock_dead_task,
    /// How many entries `tasks` points to.
    pub n_tasks: usize,
}

#[repr(C)]
struct OwnedDead {
    view: etcdlock_dead_task_list,
    entries: Vec<etcdlock_dead_task>,
    ids: Vec<CString>,
    payloads: Vec<Vec<u8>>,
}

/// Lists the queue's dead letters and writes them to `*out` (free with
/// etcdlock_dead_task_list_free; it may be empty). A dead letter whose id holds a NUL (not
/// one this library wrote: puts refuse such ids) is left out.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_queue_dead(queue: *mut etcdlock_queue, out: *mut *mut etcdlock_dead_task_list) -> c_int {
    ffi::status(|| {
        let q = unsafe { ffi::arg(queue, "queue") }?;
        let out = ffi::out(out, "out")?;
        let queue = q.queue.clone();
        let dead = ffi::block(async move { queue.dead().await })?;
        let (mut ids, mut payloads, mut other) = (Vec::new(), Vec::new(), Vec::new());
        for d in dead {
            if let Ok(id) = CString::new(d.id) {
                ids.push(id);
                payloads.push(d.payload);
                other.push((d.attempts, d.priority));
            }
        }
        let entries: Vec<etcdlock_dead_task> = ids
            .iter()
            .zip(&payloads)
            .zip(&other)
            .map(|((id, payload), &(attempts, priority))| etcdlock_dead_task {
                id: id.as_ptr(),
                payload: payload.as_ptr(),
                payload_len: payload.len(),
                attempts,
                priority,
            })
            .collect();
        let view = etcdlock_dead_task_list { tasks: entries.as_ptr(), n_tasks: entries.len() };
        // Moving the Vecs (and CStrings) into the box keeps their heap buffers where the view points.
        let owned = Box::into_raw(Box::new(OwnedDead { view, entries, ids, payloads }));
        unsafe { *out = owned.cast::<etcdlock_dead_task_list>() };
        Ok(())
    })
}

/// Frees what etcdlock_queue_dead wrote. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_dead_task_list_free(list: *mut etcdlock_dead_task_list) {
    ffi::void(|| {
        if !list.is_null() {
            // SAFETY: from etcdlock_queue_dead, where it is the first field of a boxed OwnedDead.
            drop(unsafe { Box::from_raw(list.cast::<OwnedDead>()) });
        }
    })
}

/// Puts the dead item `id` (a NUL-terminated string) back at the end of its priority, its
/// attempts at 0. `found` (nullable): on success, whether a dead item had that id (false:
/// nothing changed).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_queue_requeue_dead(queue: *mut etcdlock_queue, id: *const c_char, found: *mut bool) -> c_int {
    ffi::status(|| {
        let q = unsafe { ffi::arg(queue, "queue") }?;
        let id = unsafe { ffi::utf8(id, "id") }?.to_string();
        let queue = q.queue.clone();
        let did = ffi::block(async move { queue.requeue_dead(&id).await })?;
        if let Some(found) = unsafe { found.as_mut() } {
            *found = did;
        }
        Ok(())
    })
}

/// Deletes the dead item `id` (a NUL-terminated string). `found` (nullable): on success,
/// whether a dead item had that id (false: nothing changed).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_queue_delete_dead(queue: *mut etcdlock_queue, id: *const c_char, found: *mut bool) -> c_int {
    ffi::status(|| {
        let q = unsafe { ffi::arg(queue, "queue") }?;
        let id = unsafe { ffi::utf8(id, "id") }?.to_string();
        let queue = q.queue.clone();
        let did = ffi::block(async move { queue.delete_dead(&id).await })?;
        if let Some(found) = unsafe { found.as_mut() } {
            *found = did;
        }
        Ok(())
    })
}

/// Frees the queue handle (its tasks live on: they are handles of their own). No other thread
/// may be inside a call on it. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_queue_free(queue: *mut etcdlock_queue) {
    ffi::void(|| drop(unsafe { ffi::from_raw(queue) }))
}

impl etcdlock_task {
    fn new(task: Task, client: Client) -> etcdlock_task {
        // Ids hold no NUL (puts refuse them); one written by hand is cut at its first NUL.
        let id = CString::new(task.id().split('\0').next().unwrap_or_default()).unwrap_or_default();
        etcdlock_task { task: Arc::new(task), id, client, lost: Slot::new() }
    }
}

/// The task's id, NUL-terminated, valid until the task is freed. NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_id(task: *const etcdlock_task) -> *const c_char {
    ffi::value(std::ptr::null(), || Ok(unsafe { ffi::arg(task, "task") }?.id.as_ptr()))
}

/// The task's payload, `*len` bytes, not NUL-terminated; valid until the task is freed. NULL
/// for a NULL task (`len` may be NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_payload(task: *const etcdlock_task, len: *mut usize) -> *const u8 {
    ffi::value(std::ptr::null(), || {
        let payload = unsafe { ffi::arg(task, "task") }?.task.payload();
        if let Some(len) = unsafe { len.as_mut() } {
            *len = payload.len();
        }
        Ok(payload.as_ptr())
    })
}

/// The item's priority. 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_priority(task: *const etcdlock_task) -> i32 {
    ffi::value(0, || Ok(unsafe { ffi::arg(task, "task") }?.task.priority()))
}

/// The item's deliveries so far, this one included (1 the first time). 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_attempts(task: *const etcdlock_task) -> u32 {
    ffi::value(0, || Ok(unsafe { ffi::arg(task, "task") }?.task.attempts()))
}

/// The claim's fencing token (the claim key's create revision): larger for every later claim
/// of any item. 0 for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_fencing_token(task: *const etcdlock_task) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(task, "task") }?.task.fencing_token()))
}

/// Cheap local check: neither acked, nacked nor lost. false for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_is_held(task: *const etcdlock_task) -> bool {
    ffi::value(false, || Ok(unsafe { ffi::arg(task, "task") }?.task.is_held()))
}

/// Fills `*out` with the claim's health (held, lost or released; `ok` while held and not in
/// doubt), as etcdlock_lock_health. ETCDLOCK_E_INVALID_ARGUMENT for a NULL handle or `out`.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_health(task: *const etcdlock_task, out: *mut crate::health::etcdlock_health) -> c_int {
    crate::health::fill(out, || Ok(unsafe { ffi::arg(task, "task") }?.task.health()))
}

/// Why the claim was lost (an ETCDLOCK_LOST_* reason), or 0 if it was not (or NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_lost_reason(task: *const etcdlock_task) -> c_int {
    ffi::value(0, || Ok(unsafe { ffi::arg(task, "task") }?.task.lost_reason().map_or(0, callback::reason_code)))
}

/// Registers `cb`, called once with `user_data` and an ETCDLOCK_LOST_* reason when the claim
/// is lost (not when the task is acked or nacked), under the rules of etcdlock_lock_on_lost.
/// No call happens after etcdlock_task_ack, etcdlock_task_nack or etcdlock_task_free has
/// returned. ETCDLOCK_E_NOT_HELD once the task was acked or nacked.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_on_lost(task: *mut etcdlock_task, cb: etcdlock_lost_cb, user_data: *mut c_void) -> c_int {
    ffi::status(|| {
        let t = unsafe { ffi::arg(task, "task") }?;
        let cb = cb.ok_or_else(|| invalid("cb must not be NULL"))?;
        if !t.task.is_held() && t.task.lost_reason().is_none() {
            return Err(etcdlock::Error::new(ErrorKind::NotHeld, "the task was acked or nacked").into());
        }
        t.lost.arm(cb, user_data, t.task.lost());
        Ok(())
    })
}

/// Writes `value` at `key` only while the claim holds, checked by etcd atomically with the
/// write (ETCDLOCK_E_NOT_HELD otherwise, nothing written): etcdlock_put's `if_held` for a
/// task. A key under the queue's own `<name>/` is ETCDLOCK_E_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_put(task: *mut etcdlock_task, key: *const u8, key_len: usize, value: *const u8, value_len: usize) -> c_int {
    ffi::status(|| {
        let t = unsafe { ffi::arg(task, "task") }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        let value = unsafe { ffi::bytes(value, value_len, "value") }?.to_vec();
        let task = t.task.clone();
        ffi::block(async move { task.put(&key, &value).await.map(drop) })
    })
}

/// Deletes `key` only while the claim holds (ETCDLOCK_E_NOT_HELD otherwise, nothing deleted).
/// A key under the queue's own `<name>/` is ETCDLOCK_E_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_delete(task: *mut etcdlock_task, key: *const u8, key_len: usize) -> c_int {
    ffi::status(|| {
        let t = unsafe { ffi::arg(task, "task") }?;
        let key = unsafe { ffi::bytes(key, key_len, "key") }?.to_vec();
        let task = t.task.clone();
        ffi::block(async move { task.delete(&key).await.map(drop) })
    })
}

/// An etcdlock_op's kind: a put of `value` at `key`.
pub const ETCDLOCK_OP_PUT: c_int = 0;
/// An etcdlock_op's kind: a delete of `key` (`value` unused).
pub const ETCDLOCK_OP_DELETE: c_int = 1;

/// One write of the caller's own in a fenced transaction: an ack's (etcdlock_task_ack_with), a
/// pool holding's (etcdlock_pool_held_txn) or a lock set's (etcdlock_lock_set_held_txn).
#[repr(C)]
pub struct etcdlock_op {
    /// ETCDLOCK_OP_PUT or ETCDLOCK_OP_DELETE.
    pub kind: c_int,
    /// The key (`key_len` bytes, not NUL-terminated).
    pub key: *const u8,
    /// The length of `key` in bytes.
    pub key_len: usize,
    /// The put's value (NULL only with `value_len` 0).
    pub value: *const u8,
    /// The length of `value` in bytes.
    pub value_len: usize,
}

/// `n_ops` etcdlock_ops at `ops` (NULL only with 0), converted and checked for their kinds.
pub(crate) unsafe fn ops_of(ops: *const etcdlock_op, n_ops: usize) -> ffi::FfiResult<Vec<etcdlock::Op>> {
    let raw: &[etcdlock_op] = if ops.is_null() {
        if n_ops != 0 {
            return Err(invalid("ops is NULL with a non-zero count"));
        }
        &[]
    } else {
        // SAFETY: the caller gives `n_ops` readable ops at `ops`.
        unsafe { std::slice::from_raw_parts(ops, n_ops) }
    };
    let mut list = Vec::with_capacity(raw.len());
    for op in raw {
        let key = unsafe { ffi::bytes(op.key, op.key_len, "an op's key") }?.to_vec();
        list.push(match op.kind {
            ETCDLOCK_OP_PUT => etcdlock::Op::put(key, unsafe { ffi::bytes(op.value, op.value_len, "an op's value") }?.to_vec()),
            ETCDLOCK_OP_DELETE => etcdlock::Op::delete(key),
            k => return Err(invalid(format!("an op's kind must be ETCDLOCK_OP_PUT or ETCDLOCK_OP_DELETE, got {k}"))),
        });
    }
    Ok(list)
}

/// Acks the task: deletes the item and its claim in one transaction that applies only while the
/// claim holds. ETCDLOCK_E_NOT_HELD with nothing changed if the claim was lost (the item is
/// claimable again) or the task already acked or nacked. `revision` (nullable): on success, the
/// ack's etcd revision. Disarms the lost callback.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_ack(task: *mut etcdlock_task, revision: *mut i64) -> c_int {
    unsafe { etcdlock_task_ack_with(task, std::ptr::null(), 0, revision) }
}

/// etcdlock_task_ack with `n_ops` writes of the caller's own (`ops`, NULL only with 0) in the
/// same transaction: the result stored and the item acked together, or neither. A key under the
/// queue's own `<name>/`, an empty key or an unknown kind is ETCDLOCK_E_INVALID_ARGUMENT, nothing
/// changed (the task still held).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_ack_with(task: *mut etcdlock_task, ops: *const etcdlock_op, n_ops: usize, revision: *mut i64) -> c_int {
    ffi::status(|| {
        let t = unsafe { ffi::arg(task, "task") }?;
        let list = unsafe { ops_of(ops, n_ops) }?;
        let task = t.task.clone();
        let r = ffi::block(async move { task.ack_with(&list).await });
        if !r.as_ref().is_err_and(|e| e.status == crate::status::ETCDLOCK_E_INVALID_ARGUMENT) {
            t.end(&r);
        }
        let rev = r?;
        if let Some(out) = unsafe { revision.as_mut() } {
            *out = rev;
        }
        Ok(())
    })
}

/// Gives the item back: claimable at once (`delay_ms` 0) or not before `delay_ms` (timed by an
/// etcd lease: whole seconds, rounded up). After its last delivery (the queue's
/// `max_attempts`) it goes to the dead letters instead. ETCDLOCK_E_NOT_HELD if the claim was
/// lost or the task already acked or nacked; a negative delay is ETCDLOCK_E_INVALID_ARGUMENT.
/// Disarms the lost callback.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_nack(task: *mut etcdlock_task, delay_ms: i64) -> c_int {
    ffi::status(|| {
        let t = unsafe { ffi::arg(task, "task") }?;
        if delay_ms < 0 {
            return Err(invalid(format!("delay_ms must be >= 0, got {delay_ms}")));
        }
        let task = t.task.clone();
        let r = ffi::block(async move { task.nack_after(Duration::from_millis(delay_ms as u64)).await });
        t.end(&r);
        r
    })
}

impl etcdlock_task {
    /// After an ack or a nack: no lost callback from here on (unless the call was refused on a
    /// library thread, which changed nothing).
    fn end<T>(&self, r: &ffi::FfiResult<T>) {
        if !matches!(r, Err(f) if f.status == crate::status::ETCDLOCK_E_WRONG_THREAD) {
            self.lost.disarm();
        }
    }
}

/// Frees the task. One neither acked nor nacked is given back first, as by etcdlock_task_nack
/// with no delay (in the background when called from a library thread). No lost callback runs
/// after this returns. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_task_free(task: *mut etcdlock_task) {
    ffi::void(|| {
        let Some(t) = (unsafe { ffi::from_raw(task) }) else { return };
        t.lost.disarm();
        // Acked, nacked or lost: nothing to give back (a lost claim's key goes with the drop).
        if t.task.is_held() && ffi::may_block() && !t.client.is_closed() {
            let task = t.task.clone();
            let _ = ffi::block(async move { task.nack().await });
        }
    })
}
