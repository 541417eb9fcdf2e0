'use strict';
// The task queue (the core's `sync::tasks`): TaskQueue, from `client.queue()`, and the Task a
// claim resolves to. A claim lives on the client's lease for the queue's TTL (kept alive while
// held): a worker that dies or is cut off loses it when etcd ends the lease, and the item is
// claimable again.

/** @import { Client } from './client.js' */
/** @import { Bytes } from './args.js' */
/** @import { LostReason } from './lost.js' */
/** @import { Health } from './health.js' */

const native = require('./addon.js');
const log = require('../log.js');
const { invalid, fromNative, abortError } = require('./errors.js');
const { Fence } = require('./fence.js');
const { describe, toBytes, toOptions, toMillis, toSignal } = require('./args.js');
const { LostCallbacks } = require('./lost.js');
const internal = require('./internal.js');
const trace = require('./trace.js');
const { toHealth } = require('./health.js');

/** Deliveries of an item before it goes to the dead letters, when `queue()` is not given `maxAttempts`. */
const DEFAULT_MAX_ATTEMPTS = 5;
/**
 * The largest payload a task may have: 1536 KiB - 8 KiB (the core's `MAX_TASK_PAYLOAD_LEN`).
 * @type {number}
 */
const MAX_TASK_PAYLOAD_LEN = native.maxTaskPayloadLen();

/**
 * A queue's items by state, read at one revision.
 * @typedef {object} QueueStats
 * @property {number} pending claimable now
 * @property {Record<number, number>} pendingByPriority `pending` by priority (only priorities that have pending items)
 * @property {number} delayed put or given back with a delay that has not passed
 * @property {number} claimed held by a worker
 * @property {number} dead in the dead letters
 * @property {bigint} revision the etcd revision the counts were read at
 */

/**
 * An item in the dead letters (it had its last delivery).
 * @typedef {object} DeadTask
 * @property {string} id
 * @property {Buffer} payload
 * @property {number} attempts the deliveries it had
 * @property {number} priority
 */

/**
 * Options of {@link Client#queue}.
 * @typedef {object} QueueOptions
 * @property {number} [ttl] TTL in whole seconds of the lease a claim lives on (default 10): how long a dead worker's item stays claimed
 * @property {number} [maxAttempts] deliveries before an item goes to the dead letters, at least 1 (default 5)
 * @property {number} [maxProcessing] ms after which a claim ends, held or not (its lost signal
 *   fires, the item is claimable again): a hung handler cannot keep an item; more than 0
 *   (default: no limit)
 */

/**
 * @typedef {object} PutTaskOptions
 * @property {string} [id] the item's id (default: a random one): a put with the id of an item
 *   that exists (pending, delayed, claimed or dead) changes nothing. 1 to 256 bytes, no newline
 * @property {number} [priority] higher first, a 32-bit integer (default 0); in one priority, in the order etcd committed the puts
 * @property {number} [delay] ms before it can be claimed (timed by an etcd lease: whole seconds, rounded up)
 */

/**
 * @typedef {object} ClaimOptions
 * @property {number} [timeout] ms to wait; 0 = try once (`WOULD_BLOCK` if nothing is available); omitted = forever
 * @property {AbortSignal} [signal] aborting rejects with an AbortError and leaves nothing behind
 * @property {Bytes} [worker] stored in the claim key (who works on it: a host, a pid); at most 4096 bytes
 */

/**
 * @typedef {object} TasksOptions
 * @property {number} [timeout] ms each claim waits; the iteration ends when one times out (omitted: never)
 * @property {AbortSignal} [signal] aborting rejects the pending claim with an AbortError
 * @property {Bytes} [worker] as {@link ClaimOptions}
 */

/**
 * The writes an ack commits with the item's deletion.
 * @typedef {object} AckOptions
 * @property {Record<string, Bytes> | Map<Bytes, Bytes> | Array<[Bytes, Bytes]>} [puts] keys and values to write
 * @property {Bytes[]} [deletes] keys to delete
 */

/** A whole number that fits in 32 bits (signed with `signed`). */
function toInt32(v, what, signed) {
  const [lo, hi] = signed ? [-(2 ** 31), 2 ** 31 - 1] : [0, 2 ** 32 - 1];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) {
    throw invalid(`${what} must be a whole number from ${lo} to ${hi}, got ${describe(v)}`);
  }
  return v;
}

/** A delay in ms: undefined/null/0 = none; otherwise a finite number > 0. */
function toDelay(v) {
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
    throw invalid(`delay must be a finite number of milliseconds >= 0, got ${describe(v)}`);
  }
  return v;
}

/** A task id: a string (the core checks it is 1 to 256 bytes without a newline). */
function toId(v) {
  if (typeof v !== 'string') throw invalid(`id must be a string, got ${describe(v)}`);
  return v;
}

/** An ack's `puts` and `deletes` as the native side takes them. */
function toAckOps(options) {
  const o = toOptions(options, 'options');
  /** @type {Buffer[]} */ const keys = [];
  /** @type {Buffer[]} */ const values = [];
  /** @type {Buffer[]} */ const deletes = [];
  const puts = o.puts;
  if (puts !== undefined && puts !== null) {
    let entries;
    if (puts instanceof Map) entries = [...puts.entries()];
    else if (Array.isArray(puts)) entries = puts;
    else if (typeof puts === 'object') entries = Object.entries(puts);
    else throw invalid(`puts must be an object, a Map or an array of [key, value], got ${describe(puts)}`);
    for (const [i, e] of entries.entries()) {
      if (!Array.isArray(e) || e.length !== 2) throw invalid(`puts[${i}] must be a [key, value] pair`);
      keys.push(toBytes(e[0], 'a key of puts'));
      values.push(toBytes(e[1], 'a value of puts'));
    }
  }
  if (o.deletes !== undefined && o.deletes !== null) {
    if (!Array.isArray(o.deletes)) throw invalid(`deletes must be an array of keys, got ${describe(o.deletes)}`);
    for (const k of o.deletes) deletes.push(toBytes(k, 'a key of deletes'));
  }
  return { keys, values, deletes };
}

/**
 * A claimed item, from {@link TaskQueue#claim}: held while this client's lease lives (kept alive
 * in the background). End it with {@link Task#ack} (done: the item is deleted, with writes of
 * your own in the same transaction) or {@link Task#nack} (given back). `await using task =
 * await q.claim()` acks at the end of the block unless it was acked or nacked (nack in a
 * `catch` when the work fails). Fenced writes: `client.put(key, value, { ifHeld: task })`.
 * Like a held lock, a Task that is dropped without ack or nack stays claimed until its client
 * is closed or the process exits: garbage collection never gives it back behind your back.
 */
class Task {
  /** @type {any} */ #native;
  /** @type {Client} */ #client;
  /** @type {string} */ #id;
  /** @type {Buffer} */ #payload;
  /** @type {number} */ #priority;
  /** @type {number} */ #attempts;
  /** @type {bigint} */ #token;
  /** The queue's name, for the ack's span. @type {Buffer} */ #queueName;
  #ended = false;
  /** @type {LostCallbacks | null} */ #lost = null;

  /**
   * Not constructed directly: {@link TaskQueue#claim} returns one.
   * @private
   * @param {any} nativeTask
   * @param {Client} client
   * @param {Buffer} queueName
   */
  constructor(nativeTask, client, queueName) {
    this.#native = nativeTask;
    this.#client = client;
    this.#queueName = queueName;
    this.#id = nativeTask.id;
    this.#payload = nativeTask.payload;
    this.#priority = nativeTask.priority;
    this.#attempts = nativeTask.attempts;
    this.#token = nativeTask.fencingToken;
  }

  static {
    internal.taskNative = (/** @type {Task} */ task) => task.#native;
  }

  /** The item's id (the one given to `put()`, or the random one it made). @type {string} */
  get id() {
    return this.#id;
  }

  /** The item's payload. @type {Buffer} */
  get payload() {
    return this.#payload;
  }

  /** @type {number} */
  get priority() {
    return this.#priority;
  }

  /** Deliveries of this item so far, this one included. @type {number} */
  get attempts() {
    return this.#attempts;
  }

  /** The claim key's create revision: larger for every later claim of any item. @type {bigint} */
  get fencingToken() {
    return this.#token;
  }

  /**
   * Cheap local check: neither acked nor nacked, and not known to be lost.
   * @returns {boolean}
   */
  isHeld() {
    return this.#native.isHeld();
  }

  /** Why the claim was lost, or null. @returns {LostReason | null} */
  lostReason() {
    return /** @type {LostReason | null} */ (this.#native.lostReason());
  }

  /**
   * One call's view of the claim (`ok` while held and not in doubt): what a readiness probe
   * answers. Local reads only.
   * @returns {Health}
   */
  health() {
    return toHealth(this.#native.health());
  }

  /**
   * Calls `cb(reason)` once, on the JS thread, when the claim is lost (not when it is acked or
   * nacked); at once if it already is. Does not keep the process alive. Returns a function that
   * removes `cb`.
   * @param {(reason: LostReason) => void} cb
   * @returns {() => void}
   */
  onLost(cb) {
    const n = this.#native;
    if (this.#lost === null) this.#lost = new LostCallbacks((f) => n.onLost(f));
    return this.#lost.add(cb);
  }

  /**
   * The claim's {@link Fence}: on the claim's lock (named `<queue>/claim/<item's slot>`, the
   * default resource of a database's mark, so each item has its own; every later claim of the
   * item has a larger token). Rejects `NOT_HELD` once the claim ended or was lost.
   * @returns {Promise<Fence>}
   */
  async fence() {
    try {
      return Fence.parse(await this.#native.fence());
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Done: deletes the item, with `puts` and `deletes` of your own in the same transaction, only
   * while the claim holds; rejects `NOT_HELD`, writing nothing, if it was lost (the item is
   * claimable again) or already acked or nacked. `INVALID_ARGUMENT` for a write under the
   * queue's own keys or more than 100 of them (the task is still held then).
   * @param {AckOptions} [options]
   * @returns {Promise<bigint>} the revision of the ack
   */
  async ack(options) {
    const { keys, values, deletes } = toAckOps(options);
    return trace.call('taskAck', false, () => ({ name: this.#queueName.toString(), taskId: this.#id, fencingToken: this.#token }),
      () => this.#end(() => this.#native.ack(keys, values, deletes)), (ctx) => { ctx.outcome = 'acked'; });
  }

  /**
   * Gives the item back: claimable at once, or not before `delay` ms (timed by an etcd lease:
   * whole seconds, rounded up, at least etcd's minimum TTL); after its last delivery
   * (`maxAttempts`), to the dead letters. Rejects `NOT_HELD` if the claim was lost or already
   * ended.
   * @param {{ delay?: number }} [options]
   * @returns {Promise<void>}
   */
  async nack(options) {
    const o = toOptions(options, 'options');
    const delay = toDelay(o.delay);
    await this.#end(() => this.#native.nack(delay));
  }

  /** @template T @param {() => Promise<T>} call @returns {Promise<T>} */
  async #end(call) {
    this.#ended = true;
    try {
      const r = await call();
      internal.forget(this.#client, this);
      return r;
    } catch (e) {
      const err = fromNative(e);
      // Refused before anything was sent (a write under the queue's keys): still held.
      if (err && err.code === 'INVALID_ARGUMENT') this.#ended = false;
      else internal.forget(this.#client, this);
      throw err;
    }
  }

  /** `await using task = await q.claim()` acks at the end of the block, unless acked or nacked already. */
  async [Symbol.asyncDispose]() {
    if (!this.#ended) await this.ack();
  }
}

/**
 * The task queue `name`, from {@link Client#queue}: a durable work queue in etcd. Items are
 * claimed highest priority first, then in the order they were put; a claim lives on the
 * worker's lease, so a worker that dies loses it within the queue's TTL and the item is
 * delivered again (`attempts` counts the deliveries; after `maxAttempts` it goes to the dead
 * letters). Workers waiting to claim are served in the order they began. Creating it sends
 * nothing.
 */
class TaskQueue {
  /** @type {Client} */ #client;
  /** @type {Buffer} */ #name;
  /** @type {number} */ #ttl;
  /** @type {number} */ #maxAttempts;
  /** @type {number | undefined} */ #maxProcessing;
  /** @type {any} */ #native = null;

  /**
   * Not constructed directly: {@link Client#queue} returns one.
   * @private
   * @param {Client} client
   * @param {Buffer} name
   * @param {number} ttl
   * @param {number} maxAttempts
   * @param {number} [maxProcessing] ms
   */
  constructor(client, name, ttl, maxAttempts, maxProcessing) {
    this.#client = client;
    this.#name = name;
    this.#ttl = ttl;
    this.#maxAttempts = maxAttempts;
    this.#maxProcessing = maxProcessing;
  }

  /** The queue's name. @type {Buffer} */
  get name() {
    return Buffer.from(this.#name);
  }

  /** The core's queue handle, made once the client is connected (rejects `CLOSED` once closed). */
  async #queue() {
    const c = await internal.clientNative(this.#client);
    if (this.#native === null) {
      try {
        this.#native = c.queue(this.#name, this.#ttl, this.#maxAttempts, this.#maxProcessing);
      } catch (e) {
        throw fromNative(e);
      }
    }
    return this.#native;
  }

  /**
   * Adds an item; resolves to its id. With `id`, a put of an item that exists (pending, delayed,
   * claimed or dead) changes nothing and resolves to the id. Rejects `INVALID_ARGUMENT`,
   * writing nothing, for a payload over {@link MAX_TASK_PAYLOAD_LEN} bytes, an empty id, one
   * with a newline or over 256 bytes, a priority that is not a 32-bit integer, a delay < 0 or
   * beyond etcd's largest lease TTL.
   * @param {Bytes} payload
   * @param {PutTaskOptions} [options]
   * @returns {Promise<string>}
   */
  async put(payload, options) {
    const p = toBytes(payload, 'payload');
    const o = toOptions(options, 'options');
    const id = o.id === undefined || o.id === null ? undefined : toId(o.id);
    const priority = o.priority === undefined ? 0 : toInt32(o.priority, 'priority', true);
    const delay = toDelay(o.delay);
    const q = await this.#queue();
    try {
      return await q.put(p, id, priority, delay);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Claims the oldest available item of the highest priority; resolves to the {@link Task}.
   * Rejects `LOCK_TIMEOUT` (timeout passed), `WOULD_BLOCK` (timeout 0 and nothing available),
   * an AbortError (signal aborted), `CLOSED`; nothing is left behind in any of these cases (a
   * claim that completes as the signal fires is given back).
   * @param {ClaimOptions} [options]
   * @returns {Promise<Task>}
   */
  async claim(options) {
    return trace.call('taskClaim', true, () => ({ name: this.#name.toString(), taskId: undefined }), () => this.#claim(options), (ctx, task) => {
      ctx.outcome = 'acquired';
      ctx.taskId = task.id;
      ctx.fencingToken = task.fencingToken;
    });
  }

  /** @param {ClaimOptions} [options] @returns {Promise<Task>} */
  async #claim(options) {
    log.refresh(native);
    const o = toOptions(options, 'options');
    const timeout = toMillis(o.timeout, 'timeout');
    const signal = toSignal(o.signal);
    const worker = o.worker === undefined || o.worker === null ? undefined : toBytes(o.worker, 'worker');
    if (signal && signal.aborted) throw abortError(signal, 'The claim');
    const q = await this.#queue();
    let token;
    let onAbort;
    if (signal) {
      token = new native.CancelToken();
      onAbort = () => token.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    let task;
    try {
      task = new Task(await q.claim(timeout, token, worker), this.#client, this.#name);
    } catch (e) {
      if (signal && signal.aborted && e && e.code === 'CANCELLED') throw abortError(signal, 'The claim');
      throw fromNative(e);
    } finally {
      if (signal) signal.removeEventListener('abort', onAbort);
    }
    if (signal && signal.aborted) {
      // The claim completed as the signal fired: give the item back, leaving nothing behind.
      await task.nack().catch(() => {});
      throw abortError(signal, 'The claim');
    }
    internal.own(this.#client, task);
    return task;
  }

  /**
   * Claims one task after another: `for await (const task of q.tasks({ timeout }))`. Ends when
   * a claim times out (never without a timeout); rejects as `claim()` otherwise. Ack or nack
   * each (or `await using` it). Throws `INVALID_ARGUMENT` for bad options at once.
   * @param {TasksOptions} [options]
   * @returns {AsyncGenerator<Task, void, undefined>}
   */
  tasks(options) {
    const o = toOptions(options, 'options');
    const claim = { timeout: toMillis(o.timeout, 'timeout'), signal: toSignal(o.signal), worker: o.worker === undefined || o.worker === null ? undefined : toBytes(o.worker, 'worker') };
    const q = this;
    return (async function* tasks() {
      for (;;) {
        let task;
        try {
          task = await q.claim(claim);
        } catch (e) {
          if (e && e.code === 'LOCK_TIMEOUT') return;
          throw e;
        }
        yield task;
      }
    })();
  }

  /**
   * Counts of the queue's items by state, read at one revision.
   * @returns {Promise<QueueStats>}
   */
  async stats() {
    const q = await this.#queue();
    let s;
    try {
      s = await q.stats();
    } catch (e) {
      throw fromNative(e);
    }
    /** @type {Record<number, number>} */
    const byPriority = {};
    for (const [p, n] of s.pendingByPriority) byPriority[p] = n;
    return { pending: s.pending, pendingByPriority: byPriority, delayed: s.delayed, claimed: s.claimed, dead: s.dead, revision: s.revision };
  }

  /**
   * The dead letters, in id order.
   * @returns {Promise<DeadTask[]>}
   */
  async dead() {
    const q = await this.#queue();
    try {
      return await q.dead();
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Puts a dead item back at the end of its priority, its attempts at 0; resolves false if no
   * dead item has that id.
   * @param {string} id
   * @returns {Promise<boolean>}
   */
  async requeueDead(id) {
    const i = toId(id);
    const q = await this.#queue();
    try {
      return await q.requeueDead(i);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Deletes a dead item; resolves false if no dead item has that id.
   * @param {string} id
   * @returns {Promise<boolean>}
   */
  async deleteDead(id) {
    const i = toId(id);
    const q = await this.#queue();
    try {
      return await q.deleteDead(i);
    } catch (e) {
      throw fromNative(e);
    }
  }
}

/**
 * `client.queue()`'s name and options, checked as the core checks them (throws INVALID_ARGUMENT).
 * @param {unknown} name
 * @param {unknown} options
 * @param {number} defaultTtl
 */
function checkQueue(name, options, defaultTtl) {
  // A copy: the handle keeps the name, which the caller's Buffer must not change later.
  const n = Buffer.from(toBytes(name, 'name'));
  const o = toOptions(options, 'options');
  const ttl = o.ttl === undefined ? defaultTtl : o.ttl;
  if (typeof ttl !== 'number' || !Number.isSafeInteger(ttl)) throw invalid(`ttl must be a positive whole number of seconds, got ${describe(ttl)}`);
  const maxAttempts = o.maxAttempts === undefined ? DEFAULT_MAX_ATTEMPTS : toInt32(o.maxAttempts, 'maxAttempts', false);
  const maxProcessing = toMillis(o.maxProcessing, 'maxProcessing');
  try {
    native.checkQueue(n, ttl, maxAttempts, maxProcessing);
  } catch (e) {
    throw fromNative(e);
  }
  return { n, ttl, maxAttempts, maxProcessing };
}

module.exports = { Task, TaskQueue, checkQueue, MAX_TASK_PAYLOAD_LEN };
