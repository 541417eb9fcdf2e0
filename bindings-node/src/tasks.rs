//! The task queue (core `sync::tasks`): a queue handle that puts and claims, and a claimed task
//! (ack with the caller's writes, nack, the lost signal). Conversions only; the queue is the core's.

use crate::lock::CancelToken;
use crate::lost::{self, LostCallback};
use crate::promise;
use etcdlock::{CancellationToken, ClaimOptions, Error, ErrorKind, Op, QueueOptions, Task, TaskOptions, TaskQueue};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use std::sync::Arc;
use std::time::Duration;

/// A delay in milliseconds from JS (the wrapper has checked it is a finite number >= 0); one
/// too large for a `Duration` is refused here rather than saturated.
fn delay(what: &str, ms: Option<f64>) -> etcdlock::Result<Option<Duration>> {
    ms.map(|v| {
        Duration::try_from_secs_f64(v / 1000.0)
            .map_err(|_| Error::new(ErrorKind::InvalidArgument, format!("{what} must be a number of milliseconds >= 0 that etcd can time, not {v:?}")))
    })
    .transpose()
}

/// A queue's options from JS: `maxProcessingMs` absent = no limit.
pub(crate) fn queue_options(ttl: i64, max_attempts: u32, max_processing_ms: Option<f64>) -> etcdlock::Result<QueueOptions> {
    Ok(QueueOptions { ttl_secs: ttl, max_attempts, max_processing: delay("maxProcessing", max_processing_ms)? })
}

/// Checks a queue's name, TTL, max attempts and max processing time as core does (the
/// wrapper's synchronous `client.queue()` throws before anything is sent).
#[napi]
pub fn check_queue(env: Env, name: &[u8], ttl: i64, max_attempts: u32, max_processing_ms: Option<f64>) -> Result<()> {
    queue_options(ttl, max_attempts, max_processing_ms).and_then(|o| etcdlock::check_queue(name, &o)).map_err(|e| crate::error::to_js(&env, e))
}

/// The most bytes a task's payload may have (core `MAX_TASK_PAYLOAD_LEN`).
#[napi]
pub fn max_task_payload_len() -> u32 {
    etcdlock::MAX_TASK_PAYLOAD_LEN as u32
}

/// A queue's items by state, read at one revision.
#[napi(object)]
pub struct NativeQueueStats {
    pub pending: i64,
    /// `[priority, pending]` pairs, highest priority first.
    pub pending_by_priority: Vec<(i32, i64)>,
    pub delayed: i64,
    pub claimed: i64,
    pub dead: i64,
    pub revision: BigInt,
}

/// An item in the dead letters.
#[napi(object)]
pub struct NativeDeadTask {
    pub id: String,
    pub payload: Buffer,
    /// Deliveries it had.
    pub attempts: u32,
    pub priority: i32,
}

#[napi]
pub struct NativeTaskQueue {
    queue: TaskQueue,
}

impl NativeTaskQueue {
    pub fn new(queue: TaskQueue) -> Self {
        NativeTaskQueue { queue }
    }
}

#[napi]
impl NativeTaskQueue {
    /// Adds an item; resolves to its id. `delayMs` absent or 0: claimable at once.
    #[napi]
    pub fn put<'env>(&self, env: &'env Env, payload: &[u8], id: Option<String>, priority: i32, delay_ms: Option<f64>) -> Result<PromiseRaw<'env, String>> {
        let (q, payload) = (self.queue.clone(), payload.to_vec());
        let delay = delay("delay", delay_ms);
        promise::spawn(env, async move { q.put(&payload, TaskOptions { id, priority, delay: delay? }).await }, |_, id| Ok(id))
    }

    /// Claims the next item: `timeoutMs` absent = wait forever, 0 = try once (`WOULD_BLOCK`),
    /// otherwise `LOCK_TIMEOUT` when it passes; `CANCELLED` once `cancel` fires.
    #[napi]
    pub fn claim<'env>(&self, env: &'env Env, timeout_ms: Option<f64>, cancel: Option<&CancelToken>, worker: Option<&[u8]>) -> Result<PromiseRaw<'env, NativeTask>> {
        let q = self.queue.clone();
        let opts = ClaimOptions {
            timeout: timeout_ms.map(crate::client::ms),
            cancel: cancel.map(|c| c.token.clone()),
            worker: worker.map(<[u8]>::to_vec).unwrap_or_default(),
        };
        promise::spawn(env, async move { q.claim(opts).await }, |_, task| Ok(NativeTask::new(task)))
    }

    /// Counts of pending (by priority), delayed, claimed and dead items, read at one revision.
    #[napi]
    pub fn stats<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, NativeQueueStats>> {
        let q = self.queue.clone();
        promise::spawn(env, async move { q.stats().await }, |_, s| {
            Ok(NativeQueueStats {
                pending: s.pending as i64,
                pending_by_priority: s.pending_by_priority.into_iter().rev().map(|(p, n)| (p, n as i64)).collect(),
                delayed: s.delayed as i64,
                claimed: s.claimed as i64,
                dead: s.dead as i64,
                revision: BigInt::from(s.revision),
            })
        })
    }

    /// The dead letters, in id order.
    #[napi]
    pub fn dead<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Vec<NativeDeadTask>>> {
        let q = self.queue.clone();
        promise::spawn(env, async move { q.dead().await }, |_, dead| {
            Ok(dead.into_iter().map(|d| NativeDeadTask { id: d.id, payload: d.payload.into(), attempts: d.attempts, priority: d.priority }).collect())
        })
    }

    /// Puts a dead item back (attempts at 0); false if no dead item has that id.
    #[napi]
    pub fn requeue_dead<'env>(&self, env: &'env Env, id: String) -> Result<PromiseRaw<'env, bool>> {
        let q = self.queue.clone();
        promise::spawn(env, async move { q.requeue_dead(&id).await }, |_, done| Ok(done))
    }

    /// Deletes a dead item; false if no dead item has that id.
    #[napi]
    pub fn delete_dead<'env>(&self, env: &'env Env, id: String) -> Result<PromiseRaw<'env, bool>> {
        let q = self.queue.clone();
        promise::spawn(env, async move { q.delete_dead(&id).await }, |_, done| Ok(done))
    }
}

#[napi]
pub struct NativeTask {
    pub(crate) task: Arc<Task>,
    /// Stops the onLost forwarder once acked or nacked (or garbage-collected).
    stop: CancellationToken,
}

impl NativeTask {
    fn new(task: Task) -> Self {
        NativeTask { task: Arc::new(task), stop: CancellationToken::new() }
    }
}

impl Drop for NativeTask {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[napi]
impl NativeTask {
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.task.id().to_string()
    }

    #[napi(getter)]
    pub fn payload(&self) -> Buffer {
        self.task.payload().to_vec().into()
    }

    #[napi(getter)]
    pub fn priority(&self) -> i32 {
        self.task.priority()
    }

    /// Deliveries so far, this one included.
    #[napi(getter)]
    pub fn attempts(&self) -> u32 {
        self.task.attempts()
    }

    #[napi(getter)]
    pub fn fencing_token(&self) -> BigInt {
        BigInt::from(self.task.fencing_token())
    }

    #[napi]
    pub fn is_held(&self) -> bool {
        self.task.is_held()
    }

    #[napi]
    pub fn lost_reason(&self) -> Option<String> {
        self.task.lost_reason().map(|r| r.as_str().to_string())
    }

    /// One call's view of the hold (core `Health`).
    #[napi]
    pub fn health(&self) -> crate::health::NativeHealth {
        crate::health::to_js(self.task.health())
    }

    /// The claim's fence in its string form (on the claim's lock, `<queue>/claim/<slot>`);
    /// `NOT_HELD` once the claim ended or was lost.
    #[napi]
    pub fn fence<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, String>> {
        let task = self.task.clone();
        promise::spawn(
            env,
            async move {
                if !task.is_held() {
                    return Err(Error::new(ErrorKind::NotHeld, "the task's claim ended or was lost: a fence is for a holding claim"));
                }
                task.fence().await
            },
            |_, f| Ok(f.to_string()),
        )
    }

    /// Calls `cb(reason)` once on the JS thread when the claim is lost; never keeps the process alive.
    #[napi(ts_args_type = "cb: (reason: 'expired' | 'revoked' | 'key_deleted' | 'closed') => void")]
    pub fn on_lost(&self, cb: LostCallback) {
        lost::forward(self.task.lost(), self.stop.clone(), cb);
    }

    /// Deletes the item, with the puts (`putKeys[i]` = `putValues[i]`) and `deletes` in the same
    /// Txn, only while the claim holds. Resolves to the revision. The forwarder stops only when
    /// it succeeded (a failed ack means the claim had been lost, which onLost reports).
    #[napi]
    pub fn ack<'env>(&self, env: &'env Env, put_keys: Vec<Buffer>, put_values: Vec<Buffer>, deletes: Vec<Buffer>) -> Result<PromiseRaw<'env, BigInt>> {
        if put_keys.len() != put_values.len() {
            return Err(crate::error::to_js(env, Error::new(ErrorKind::InvalidArgument, "an ack's puts need one value per key")));
        }
        let ops: Vec<Op> = put_keys
            .iter()
            .zip(put_values.iter())
            .map(|(k, v)| Op::put(k.to_vec(), v.to_vec()))
            .chain(deletes.iter().map(|k| Op::delete(k.to_vec())))
            .collect();
        let (task, stop) = (self.task.clone(), self.stop.clone());
        promise::spawn(
            env,
            async move {
                let r = task.ack_with(&ops).await;
                if r.is_ok() {
                    stop.cancel();
                }
                r
            },
            |_, rev| Ok(BigInt::from(rev)),
        )
    }

    /// Gives the item back, claimable at once (`delayMs` absent or 0) or not before `delayMs`;
    /// after its last delivery, to the dead letters.
    #[napi]
    pub fn nack<'env>(&self, env: &'env Env, delay_ms: Option<f64>) -> Result<PromiseRaw<'env, ()>> {
        let (task, stop) = (self.task.clone(), self.stop.clone());
        let delay = delay("delay", delay_ms);
        promise::spawn(
            env,
            async move {
                let r = match delay? {
                    Some(d) => task.nack_after(d).await,
                    None => task.nack().await,
                };
                if r.is_ok() {
                    stop.cancel();
                }
                r
            },
            |_, ()| Ok(()),
        )
    }
}
