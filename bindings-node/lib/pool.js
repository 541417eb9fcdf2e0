'use strict';
// Pools of named slots (the core's `sync::pool`): Pool, from `client.pool()`, and the
// PoolHolding an acquire resolves to. The slots a holding has live on its client's lease for the
// pool's TTL (kept alive while held): a holder that dies loses them when etcd ends the lease, and
// each rests the pool's reuse delay (timed by an etcd lease) before it is handed out again; a
// clean release frees them at once.

/** @import { Client } from './client.js' */
/** @import { LostReason } from './lost.js' */
/** @import { Health } from './health.js' */

const native = require('./addon.js');
const log = require('../log.js');
const { invalid, fromNative, abortError } = require('./errors.js');
const { describe, toBytes, toOptions, toMillis, toSignal, toTtl } = require('./args.js');
const { LostCallbacks } = require('./lost.js');
const { Fence } = require('./fence.js');
const internal = require('./internal.js');
const trace = require('./trace.js');
const { toHealth } = require('./health.js');

/** TTL in seconds of the lease a pool's slots are held on, when `pool()` is not given `ttl` (the core's default). */
const DEFAULT_POOL_TTL = 10;
/**
 * The most slots a pool may have (1024, the core's `MAX_POOL_SLOTS`).
 * @type {number}
 */
const MAX_POOL_SLOTS = native.maxPoolSlots();
/**
 * The most slots one acquire may take (30, the core's `MAX_POOL_COUNT`).
 * @type {number}
 */
const MAX_POOL_COUNT = native.maxPoolCount();

/**
 * Options of {@link Client#pool}: `slots` or `size`, not both.
 * @typedef {object} PoolOptions
 * @property {string[]} [slots] the slot ids (1 to 1024, each 1 to 128 bytes without `/` or a newline, no duplicates); every participant must give the same
 * @property {number} [size] instead of `slots`: this many slots, named `'0'` to `String(size - 1)`
 * @property {number} [ttl] TTL in whole seconds of the lease the slots are held on, kept alive while held (default 10): how long a dead holder keeps its slots
 * @property {number} [reuseDelay] ms a slot whose holder died rests before it is handed out again (timed by an etcd lease: whole seconds, rounded up, at least etcd's minimum TTL unless 0); default 0: at once. Every participant must give the same
 */

/**
 * Options of {@link Pool#acquire}.
 * @typedef {object} PoolAcquireOptions
 * @property {number} [count] slots to take at once, 1 to the pool's size (at most 30; default 1)
 * @property {string} [owner] with an owner, an acquire while this client has a live holding acquired with the same owner from this pool resolves to that holding instead of taking more (a retried call gets what it has); stored in the slot keys for `slots()` to show; at most 4096 bytes
 * @property {number} [timeout] ms to wait; 0 = try once (`WOULD_BLOCK` if the slots are not free now); omitted = forever
 * @property {AbortSignal} [signal] aborting rejects with an AbortError and leaves nothing behind
 */

/**
 * One slot of a pool as etcd has it (from {@link Pool#slots}).
 * @typedef {object} SlotInfo
 * @property {string} id
 * @property {'free' | 'held' | 'resting' | 'dead'} state `free`: can be handed out now; `held`;
 *   `resting`: its holder died and it rests the reuse delay; `dead`: its holder died and no
 *   request has seen it yet (it rests the reuse delay first)
 * @property {bigint | null} token held: the slot's fencing token
 * @property {bigint | null} lease held: the holder's lease; resting: the lease it rests on
 * @property {number | null} ttl seconds that lease has left (null: gone, or free or dead)
 * @property {bigint | null} acquisition held: the acquisition's fencing token
 * @property {string | null} owner held: the acquisition's `owner` (null without one)
 */

/**
 * Slots held from a pool, from {@link Pool#acquire}: each slot is nobody else's while this
 * holding lives. Release it with {@link PoolHolding#release} (or `await using`): every slot is
 * free for the next request at once. Fenced writes: `client.put(key, value, { ifHeld: held })`.
 * Like a held lock, a holding that is dropped without release stays held until its client is
 * closed or the process exits: garbage collection never releases it behind your back. A close
 * or exit ends it by revoking its lease, which the pool counts as a death: its slots then rest
 * the reuse delay (a release frees them at once).
 */
class PoolHolding {
  /** @type {any} */ #native;
  /** @type {Client} */ #client;
  /** @type {Buffer} */ #pool;
  /** @type {string[]} */ #slots;
  /** @type {[string, bigint][]} */ #tokens;
  /** @type {bigint} */ #token;
  #released = false;
  /** @type {LostCallbacks | null} */ #lost = null;

  /**
   * Not constructed directly: {@link Pool#acquire} returns one.
   * @private
   * @param {any} nativeHolding
   * @param {Client} client
   * @param {Buffer} pool
   */
  constructor(nativeHolding, client, pool) {
    this.#native = nativeHolding;
    this.#client = client;
    this.#pool = pool;
    this.#tokens = nativeHolding.tokens;
    this.#slots = this.#tokens.map(([s]) => s);
    this.#token = nativeHolding.fencingToken;
  }

  static {
    internal.holdingNative = (/** @type {PoolHolding} */ h) => h.#native;
    internal.holdingOf = (/** @type {PoolHolding} */ h, /** @type {Buffer} */ pool, /** @type {bigint} */ token) => h.#token === token && h.#pool.equals(pool);
  }

  /** The slot ids held, in the pool's order (a new array each time). @type {string[]} */
  get slots() {
    return [...this.#slots];
  }

  /**
   * Each slot's fencing token (its key's create revision: larger for every later holder of
   * that slot), as an object slot id → token (a new object each time).
   * @type {Record<string, bigint>}
   */
  get tokens() {
    return Object.fromEntries(this.#tokens);
  }

  /** The acquisition's fencing token: larger for every later acquisition from this pool. @type {bigint} */
  get fencingToken() {
    return this.#token;
  }

  /** The `owner` it was acquired with, or null. @type {string | null} */
  get owner() {
    return this.#native.owner ?? null;
  }

  /** ID of the lease the slots are held on (this client's shared lease for the pool's TTL). @type {bigint} */
  get leaseId() {
    return this.#native.leaseId;
  }

  /**
   * Cheap local check: not released, and not known to be lost.
   * @returns {boolean}
   */
  isHeld() {
    return this.#native.isHeld();
  }

  /** Why the holding was lost, or null. @returns {LostReason | null} */
  lostReason() {
    return /** @type {LostReason | null} */ (this.#native.lostReason());
  }

  /**
   * One call's view of the holding (`ok` while held and not in doubt): what a readiness probe
   * answers. Local reads only.
   * @returns {Health}
   */
  health() {
    return toHealth(this.#native.health());
  }

  /**
   * Calls `cb(reason)` once, on the JS thread, when the holding is lost (its lease ended: stop
   * using the slots; not when it is released); at once if it already is. Does not keep the
   * process alive. Returns a function that removes `cb`.
   * @param {(reason: LostReason) => void} cb
   * @returns {() => void}
   */
  onLost(cb) {
    const n = this.#native;
    if (this.#lost === null) this.#lost = new LostCallbacks((f) => n.onLost(f));
    return this.#lost.add(cb);
  }

  /**
   * Gives every slot back at once (each free for the next request), in one transaction that
   * applies only while they are this holding's. Rejects `NOT_HELD` if it was already released
   * or lost.
   * @returns {Promise<void>}
   */
  async release() {
    this.#released = true;
    return trace.release(this, () => internal.releaseNative(this.#client, this, this.#native), this.#pool.toString(), { slots: this.#slots.join(',') });
  }

  /**
   * The {@link Fence} of slot `slot` of this holding (kind `'k'`: the slot's key
   * `<pool>/slot/<id>` at the slot's token, `tokens[slot]`), for a database to check
   * (`etcdlock/fencing`; each slot has its own mark) or {@link Client#checkFence}. Rejects
   * `INVALID_ARGUMENT` for a slot this holding does not hold. After the release it still
   * resolves, to a fence that no longer checks.
   * @param {string} slot
   * @returns {Promise<Fence>}
   */
  async fence(slot) {
    if (typeof slot !== 'string') throw invalid(`slot must be a slot id (a string), got ${describe(slot)}`);
    try {
      return Fence.parse(await this.#native.fence(slot));
    } catch (e) {
      throw fromNative(e);
    }
  }

  /** `await using held = await pool.acquire()` releases it at the end of the block (unless already released). */
  async [Symbol.asyncDispose]() {
    if (!this.#released) await this.release();
  }
}

/** A list of slot ids: an array of strings (the core checks each). */
function toSlotIds(v, what) {
  if (!Array.isArray(v)) throw invalid(`${what} must be an array of slot ids (strings), got ${describe(v)}`);
  for (const s of v) {
    if (typeof s !== 'string') throw invalid(`${what} must be an array of slot ids (strings), got an element of type ${describe(s)}`);
  }
  return [...v];
}

/** A whole number that fits in 32 bits, unsigned. */
function toUint32(v, what) {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 2 ** 32 - 1) {
    throw invalid(`${what} must be a whole number, got ${describe(v)}`);
  }
  return v;
}

/**
 * The pool `name`, from {@link Client#pool}: named slots (worker ids, devices, test clusters)
 * that are never handed out to two holders at once. Requests are served in the order etcd
 * committed them; a request for `count` slots waits at the head until that many are free, and
 * later requests wait behind it. The first acquire stores the definition (the slot ids and the
 * reuse delay) if the pool has none; one that gives another rejects `INVALID_ARGUMENT`. Creating
 * it sends nothing.
 */
class Pool {
  /** @type {Client} */ #client;
  /** @type {Buffer} */ #name;
  /** @type {string[] | undefined} */ #slots;
  /** @type {number | undefined} */ #size;
  /** @type {number} */ #ttl;
  /** @type {number} */ #reuseDelay;
  /** @type {any} */ #native = null;

  /**
   * Not constructed directly: {@link Client#pool} returns one.
   * @private
   * @param {Client} client
   * @param {{ n: Buffer, slots: string[] | undefined, size: number | undefined, ttl: number, reuseDelay: number }} checked
   */
  constructor(client, checked) {
    this.#client = client;
    this.#name = checked.n;
    this.#slots = checked.slots;
    this.#size = checked.size;
    this.#ttl = checked.ttl;
    this.#reuseDelay = checked.reuseDelay;
  }

  /** The pool's name. @type {Buffer} */
  get name() {
    return Buffer.from(this.#name);
  }

  /** The core's pool handle, made once the client is connected (rejects `CLOSED` once closed). */
  async #pool() {
    const c = await internal.clientNative(this.#client);
    if (this.#native === null) {
      try {
        this.#native = c.pool(this.#name, this.#slots, this.#size, this.#ttl, this.#reuseDelay);
      } catch (e) {
        throw fromNative(e);
      }
    }
    return this.#native;
  }

  /**
   * Takes `count` slots; resolves to the {@link PoolHolding} once they are this caller's.
   * Rejects `LOCK_TIMEOUT` (timeout passed), `WOULD_BLOCK` (timeout 0 and not free now), an
   * AbortError (signal aborted), `INVALID_ARGUMENT` (a bad count or owner, or a definition that
   * is not the stored one: the message says how to change it), `CLOSED`; nothing is left behind
   * in any of these cases (a holding that completes as the signal fires is released).
   * @param {PoolAcquireOptions} [options]
   * @returns {Promise<PoolHolding>}
   */
  async acquire(options) {
    return trace.acquire('acquire', this.#name, () => this.#acquire(options), (held) => ({ slots: held.slots.join(',') }));
  }

  /** @param {PoolAcquireOptions} [options] @returns {Promise<PoolHolding>} */
  async #acquire(options) {
    log.refresh(native);
    const o = toOptions(options, 'options');
    const count = o.count === undefined || o.count === null ? 1 : toUint32(o.count, 'count');
    let owner;
    if (o.owner !== undefined && o.owner !== null) {
      if (typeof o.owner !== 'string') throw invalid(`owner must be a string, got ${describe(o.owner)}`);
      owner = o.owner;
    }
    const timeout = toMillis(o.timeout, 'timeout');
    const signal = toSignal(o.signal);
    if (signal && signal.aborted) throw abortError(signal, 'The pool acquisition');
    const p = await this.#pool();
    let token;
    let onAbort;
    if (signal) {
      token = new native.CancelToken();
      onAbort = () => token.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    let n;
    try {
      n = await p.acquire(count, owner, timeout, token);
    } catch (e) {
      if (signal && signal.aborted && e && e.code === 'CANCELLED') throw abortError(signal, 'The pool acquisition');
      throw fromNative(e);
    } finally {
      if (signal) signal.removeEventListener('abort', onAbort);
    }
    // An owner's live holding comes back as the same object.
    const fencingToken = n.fencingToken;
    const same = owner === undefined ? undefined : internal.findOwned(this.#client, (h) => h instanceof PoolHolding && internal.holdingOf(h, this.#name, fencingToken));
    const held = same ?? new PoolHolding(n, this.#client, this.#name);
    if (signal && signal.aborted) {
      // Completed as the signal fired: give the slots back (unless it is a holding the caller
      // had before), leaving nothing behind.
      if (same === undefined) await held.release().catch(() => {});
      throw abortError(signal, 'The pool acquisition');
    }
    internal.own(this.#client, held);
    return held;
  }

  /**
   * Adds slots (ids not in the pool yet); resolves to the pool's slots after. Waiting requests
   * see them at once. Rejects `INVALID_ARGUMENT` for an id already in the pool, a bad id, or a
   * pool not defined yet (acquire from it once first).
   * @param {string[]} ids
   * @returns {Promise<string[]>}
   */
  async addSlots(ids) {
    const s = toSlotIds(ids, 'ids');
    const p = await this.#pool();
    try {
      return await p.addSlots(s);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Removes slots; resolves to the pool's slots after. A held slot goes when its holder
   * releases it (it is not handed out meanwhile). Rejects `INVALID_ARGUMENT` for an id not in
   * the pool, or if no slot would be left.
   * @param {string[]} ids
   * @returns {Promise<string[]>}
   */
  async removeSlots(ids) {
    const s = toSlotIds(ids, 'ids');
    const p = await this.#pool();
    try {
      return await p.removeSlots(s);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Every slot of the pool as etcd has it now, in the pool's order: free, held (by which
   * acquisition and owner, its token, its lease's seconds left) or resting. Empty while the
   * pool is not defined (no acquire yet). Changes nothing.
   * @returns {Promise<SlotInfo[]>}
   */
  async slots() {
    const p = await this.#pool();
    try {
      return await p.slots();
    } catch (e) {
      throw fromNative(e);
    }
  }
}

/**
 * `client.pool()`'s name and options, checked as the core checks them (throws INVALID_ARGUMENT).
 * @param {unknown} name
 * @param {unknown} options
 */
function checkPool(name, options) {
  // A copy: the handle keeps the name, which the caller's Buffer must not change later.
  const n = Buffer.from(toBytes(name, 'name'));
  const o = toOptions(options, 'options');
  const hasSlots = o.slots !== undefined && o.slots !== null;
  const hasSize = o.size !== undefined && o.size !== null;
  if (hasSlots === hasSize) throw invalid('a pool takes either slots (an array of ids) or size (a number of slots), not both and not neither');
  const slots = hasSlots ? toSlotIds(o.slots, 'slots') : undefined;
  let size;
  if (hasSize) {
    if (typeof o.size !== 'number' || !Number.isInteger(o.size) || o.size < 1 || o.size > MAX_POOL_SLOTS) {
      throw invalid(`size must be a whole number from 1 to ${MAX_POOL_SLOTS}, got ${describe(o.size)}`);
    }
    size = o.size;
  }
  const ttl = o.ttl === undefined ? DEFAULT_POOL_TTL : toTtl(o.ttl, 'ttl');
  const reuseDelay = o.reuseDelay === undefined || o.reuseDelay === null ? 0 : o.reuseDelay;
  if (typeof reuseDelay !== 'number' || !Number.isFinite(reuseDelay) || reuseDelay < 0) {
    throw invalid(`reuseDelay must be a finite number of milliseconds >= 0, got ${describe(reuseDelay)}`);
  }
  try {
    native.checkPool(n, slots, size, ttl, reuseDelay);
  } catch (e) {
    throw fromNative(e);
  }
  return { n, slots, size, ttl, reuseDelay };
}

module.exports = { Pool, PoolHolding, checkPool, MAX_POOL_SLOTS, MAX_POOL_COUNT };
