'use strict';
// Once-per-period jobs (the core's `sync::once`): the OnceSlot that `client.once()` resolves to
// when this trigger won the period. The period's slot is the boundary nearest the trigger time;
// the winner's claim lives on its client's lease while the job runs; `done()` marks the period
// done and ends the claim in one fenced transaction, `release()` ends it without marking it done
// (the next trigger in the period runs the job).

/** @import { Client } from './client.js' */
/** @import { LostReason } from './lost.js' */
/** @import { Health } from './health.js' */

const native = require('./addon.js');
const { invalid, fromNative } = require('./errors.js');
const { describe, toBytes, toOptions } = require('./args.js');
const { LostCallbacks } = require('./lost.js');
const internal = require('./internal.js');
const { toHealth } = require('./health.js');

/**
 * Options of {@link Client#once}.
 * @typedef {object} OnceOptions
 * @property {number} every the period in ms, at least 1000 (e.g. `3_600_000`: hourly)
 * @property {number} [ttl] TTL in whole seconds of the lease the claim lives on, kept alive while the job runs (default 10): how long a dead winner's period stays claimed
 * @property {Date | number} [at] the trigger time, a Date or ms since the epoch (default: now); the period boundary nearest to it is the slot
 * @property {number} [keepPeriods] how many periods a done mark is kept, at least 2 (default 3)
 */

/** How many periods a done mark is kept, when `once()` is not given `keepPeriods` (the core's default). */
const DEFAULT_KEEP_PERIODS = 3;

/**
 * The period's slot, won by this trigger (from {@link Client#once}): run the job, then
 * {@link OnceSlot#done} (later triggers in the period do nothing), or {@link OnceSlot#release}
 * when it failed (the next trigger in the period runs it). The claim lives on this client's
 * lease (kept alive in the background): a winner that dies or is cut off loses it when etcd
 * ends the lease, and the next trigger runs the job. `await using slot = await client.once(...)`
 * marks it done at the end of the block unless it was done or released (release in a `catch`
 * when the job fails). Fenced writes: `client.put(key, value, { ifHeld: slot })` writes only
 * while the claim holds. Like a held lock, a slot that is dropped without either stays claimed
 * until its client is closed or the process exits: garbage collection never releases it.
 */
class OnceSlot {
  /** @type {any} */ #native;
  /** @type {Client} */ #client;
  /** @type {number} */ #slot;
  /** @type {bigint} */ #token;
  #ended = false;
  /** @type {LostCallbacks | null} */ #lost = null;

  /**
   * Not constructed directly: {@link Client#once} returns one.
   * @private
   * @param {any} nativeSlot
   * @param {Client} client
   */
  constructor(nativeSlot, client) {
    this.#native = nativeSlot;
    this.#client = client;
    this.#slot = nativeSlot.slot;
    this.#token = nativeSlot.fencingToken;
  }

  static {
    internal.onceNative = (/** @type {OnceSlot} */ slot) => slot.#native;
  }

  /** The slot's index: its period boundary is `slot * every` ms after the epoch. @type {number} */
  get slot() {
    return this.#slot;
  }

  /** The claim key's create revision: larger for every later claim. @type {bigint} */
  get fencingToken() {
    return this.#token;
  }

  /**
   * Cheap local check: neither done nor released, and not known to be lost.
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
   * Calls `cb(reason)` once, on the JS thread, when the claim is lost while the job runs
   * (another trigger may run the job now; not when it is done or released); at once if it
   * already is. Does not keep the process alive. Returns a function that removes `cb`.
   * @param {(reason: LostReason) => void} cb
   * @returns {() => void}
   */
  onLost(cb) {
    const n = this.#native;
    if (this.#lost === null) this.#lost = new LostCallbacks((f) => n.onLost(f));
    return this.#lost.add(cb);
  }

  /**
   * The period's job is done: marks it done (later triggers in the period resolve null) and
   * ends the claim, in one transaction that applies only while the claim holds. Rejects
   * `NOT_HELD`, marking nothing, if the claim was lost (the next trigger runs the job) or the
   * slot was already done or released.
   * @returns {Promise<void>}
   */
  async done() {
    await this.#end(() => this.#native.done());
  }

  /**
   * The job failed: ends the claim without marking the period done, so the next trigger in the
   * period runs the job. Rejects `NOT_HELD` if the claim was lost or already ended.
   * @returns {Promise<void>}
   */
  async release() {
    await this.#end(() => this.#native.release());
  }

  /** @param {() => Promise<void>} call @returns {Promise<void>} */
  async #end(call) {
    this.#ended = true;
    try {
      await call();
    } catch (e) {
      throw fromNative(e);
    } finally {
      internal.forget(this.#client, this);
    }
  }

  /** `await using slot = await client.once(...)` marks the period done at the end of the block, unless done or released already. */
  async [Symbol.asyncDispose]() {
    if (!this.#ended) await this.done();
  }
}

/**
 * `client.once()`'s name and options, checked as the core checks them (throws INVALID_ARGUMENT).
 * @param {unknown} name
 * @param {unknown} options
 * @param {number} defaultTtl
 */
function checkOnce(name, options, defaultTtl) {
  // A copy: the claim is made after the connection is ready, and the caller's Buffer may change by then.
  const n = Buffer.from(toBytes(name, 'name'));
  const o = toOptions(options, 'options');
  if (o.every === undefined || o.every === null) throw invalid('every is required: the period in milliseconds (at least 1000)');
  if (typeof o.every !== 'number') throw invalid(`every must be a number of milliseconds (at least 1000), got ${describe(o.every)}`);
  const every = o.every;
  const ttl = o.ttl === undefined ? defaultTtl : o.ttl;
  if (typeof ttl !== 'number' || !Number.isSafeInteger(ttl)) throw invalid(`ttl must be a positive whole number of seconds, got ${describe(ttl)}`);
  /** @type {number | undefined} */
  let at;
  if (o.at instanceof Date) at = o.at.getTime();
  else if (typeof o.at === 'number') at = o.at;
  else if (o.at !== undefined && o.at !== null) throw invalid(`at must be a Date or a number of milliseconds since the epoch, got ${describe(o.at)}`);
  const keepPeriods = o.keepPeriods === undefined ? DEFAULT_KEEP_PERIODS : o.keepPeriods;
  if (typeof keepPeriods !== 'number' || !Number.isInteger(keepPeriods) || keepPeriods < 0 || keepPeriods > 2 ** 32 - 1) {
    throw invalid(`keepPeriods must be a whole number, at least 2, got ${describe(keepPeriods)}`);
  }
  try {
    native.checkOnce(n, every, ttl, at, keepPeriods);
  } catch (e) {
    throw fromNative(e);
  }
  return { n, every, ttl, at, keepPeriods };
}

module.exports = { OnceSlot, checkOnce };
