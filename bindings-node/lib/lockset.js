'use strict';
// Lock sets (the core's `sync::lockset`): several lock names held together, all or none, with one
// fencing token. One transaction puts a key in every member's queue (so the keys share one
// create revision: the token), then each key waits by its own queue's rule; every wait is for an
// older key, so callers listing the same names in any order never deadlock.

/** @import { Client } from './client.js' */
/** @import { Bytes } from './args.js' */
/** @import { LostReason } from './lost.js' */
/** @import { Lease } from './lease.js' */
/** @import { Health } from './health.js' */

const native = require('./addon.js');
const { invalid, fromNative } = require('./errors.js');
const { describe, toBytes, toOptions, toPermits } = require('./args.js');
const { LostCallbacks } = require('./lost.js');
const { Fence } = require('./fence.js');
const { checkLease } = require('./lease.js');
const internal = require('./internal.js');
const trace = require('./trace.js');
const { toHealth } = require('./health.js');

/**
 * The most names a lock set may have (64, the core's `MAX_LOCK_SET`).
 * @type {number}
 */
const MAX_LOCK_SET = native.maxLockSet();

/**
 * How a lock set holds one name: alone (`'exclusive'`, as `client.lock()`), as a read-write
 * lock's reader or writer, or one permit of a semaphore (`'permit'`).
 * @typedef {'exclusive' | 'read' | 'write' | 'permit'} SetMode
 */

/**
 * One member given to {@link Client#lockSet}: a name (held exclusively), `{ name, mode }`, or
 * `{ name, permits }` (one of the `permits` of the semaphore `name`).
 * @typedef {Bytes | { name: Bytes, mode?: 'exclusive' | 'read' | 'write' } | { name: Bytes, permits: number, mode?: 'permit' }} SetMemberSpec
 */

/**
 * One member of a held set, as given (a plain name is `'exclusive'`).
 * @typedef {object} SetMember
 * @property {Buffer} name
 * @property {SetMode} mode
 * @property {number} [permits] for `'permit'`: the semaphore's count
 */

/**
 * Options of {@link Client#lockSet}.
 * @typedef {object} LockSetOptions
 * @property {number} [ttl] TTL in whole seconds of the lease every member's key is on (default 10)
 * @property {number} [timeout] ms to wait for the whole set; 0 = try once (`WOULD_BLOCK` if a member is held or has waiters); omitted = forever
 * @property {AbortSignal} [signal] aborting rejects with an AbortError and leaves no key in any queue
 * @property {Bytes} [value] stored in every member's queue key for `inspect()` to show; at most 4096 bytes
 */

const MODES = ['exclusive', 'read', 'write', 'permit'];
const MEMBER_KEYS = ['name', 'mode', 'permits'];

/** @param {unknown} v @returns {string} */
function shown(v) {
  return typeof v === 'string' ? JSON.stringify(v) : describe(v);
}

/**
 * A member as the native side takes it: `{ name, mode, permits? }` (how many, none twice and
 * none under another are the core's to check).
 * @param {unknown} m
 * @param {string} what
 * @returns {SetMember}
 */
function toMember(m, what) {
  if (typeof m === 'string' || m instanceof Uint8Array) return { name: Buffer.from(toBytes(m, what)), mode: 'exclusive' };
  if (m === null || typeof m !== 'object' || Array.isArray(m)) {
    throw invalid(`${what} must be a name or a { name, mode } / { name, permits } object, got ${describe(m)}`);
  }
  const o = /** @type {Record<string, any>} */ (m);
  for (const k of Object.keys(o)) {
    if (!MEMBER_KEYS.includes(k)) throw invalid(`${what}.${k} is not an option (a member takes ${MEMBER_KEYS.join(', ')})`);
  }
  // A copy: the set keeps the name, which the caller's Buffer must not change later.
  const name = Buffer.from(toBytes(o.name, `${what}.name`));
  const hasPermits = o.permits !== undefined && o.permits !== null;
  const mode = o.mode === undefined || o.mode === null ? (hasPermits ? 'permit' : 'exclusive') : o.mode;
  if (!MODES.includes(mode)) throw invalid(`${what}.mode must be one of ${MODES.map((x) => `'${x}'`).join(', ')}, got ${shown(mode)}`);
  if (mode === 'permit') return { name, mode, permits: toPermits(o.permits, `${what}.permits`) };
  if (hasPermits) throw invalid(`${what}.permits is for a permit member, not a ${mode} one`);
  return { name, mode };
}

/**
 * `lockSet()`'s members, checked for their types (INVALID_ARGUMENT otherwise).
 * @param {unknown} v
 * @returns {SetMember[]}
 */
function toMembers(v) {
  if (!Array.isArray(v)) throw invalid(`members must be an array of names or member objects, got ${describe(v)}`);
  return v.map((m, i) => toMember(m, `members[${i}]`));
}

/**
 * A held lock set, from {@link Client#lockSet}: every member held, with one fencing token.
 * Release it with {@link LockSet#release} (or `await using`): one transaction releases every
 * member. Fenced writes: `client.put(key, value, { ifHeld: locks })` commits only while every
 * member is still this set's. Like a held lock, a set that is dropped without release stays
 * held until its client is closed or the process exits.
 */
class LockSet {
  /** @type {any} */ #native;
  /** @type {Client} */ #client;
  /** @type {bigint} */ #token;
  /** @type {SetMember[]} */ #members;
  #released = false;
  /** @type {LostCallbacks | null} */ #lost = null;

  /**
   * Not constructed directly: {@link Client#lockSet} returns one.
   * @private
   * @param {any} nativeSet
   * @param {Client} client
   * @param {SetMember[]} members
   */
  constructor(nativeSet, client, members) {
    this.#native = nativeSet;
    this.#client = client;
    this.#members = members;
    this.#token = nativeSet.fencingToken;
  }

  static {
    internal.lockSetNative = (/** @type {LockSet} */ s) => s.#native;
  }

  /** The set's fencing token: the create revision every member's key shares, larger than every earlier holder's token of each name. @type {bigint} */
  get fencingToken() {
    return this.#token;
  }

  /** The members' names, in the order given (new Buffers each time). @type {Buffer[]} */
  get names() {
    return this.#members.map((m) => Buffer.from(m.name));
  }

  /** The members, in the order given (new objects each time). @type {SetMember[]} */
  get members() {
    return this.#members.map((m) => ({ ...m, name: Buffer.from(m.name) }));
  }

  /** Each member's queue key in etcd (`<name>/<lease hex>[-n]`), in the set's order. @type {Buffer[]} */
  get keys() {
    return this.#native.keys;
  }

  /** ID of the lease every member's key is on (the client's shared lease for the set's TTL). @type {bigint} */
  get leaseId() {
    return this.#native.leaseId;
  }

  /**
   * Cheap local check: not released, and no member known to be lost.
   * @returns {boolean}
   */
  isHeld() {
    return this.#native.isHeld();
  }

  /** Why the set was lost (its first member lost), or null. @returns {LostReason | null} */
  lostReason() {
    return /** @type {LostReason | null} */ (this.#native.lostReason());
  }

  /**
   * One call's view of the set (`ok` while held and not in doubt): what a readiness probe
   * answers. Local reads only.
   * @returns {Health}
   */
  health() {
    return toHealth(this.#native.health());
  }

  /**
   * Calls `cb(reason)` once, on the JS thread, when a member is lost (not when the set is
   * released); at once if it already is. Does not keep the process alive. Returns a function
   * that removes `cb`.
   * @param {(reason: LostReason) => void} cb
   * @returns {() => void}
   */
  onLost(cb) {
    const n = this.#native;
    if (this.#lost === null) this.#lost = new LostCallbacks((f) => n.onLost(f));
    return this.#lost.add(cb);
  }

  /**
   * Releases every member in one transaction (each key deleted only if it is still this
   * set's). Rejects `NOT_HELD` if it was already released, or a member was lost (the other
   * keys are deleted anyway).
   * @returns {Promise<void>}
   */
  async release() {
    this.#released = true;
    return trace.release(this, () => internal.releaseNative(this.#client, this, this.#native), this.#members.map((m) => m.name.toString()).join(','));
  }

  /**
   * Writes `value` at `key` only while every member is held (checked by etcd in the same
   * transaction); rejects `NOT_HELD`, writing nothing, otherwise. Same as
   * `client.put(key, value, { ifHeld: locks })`.
   * @param {Bytes} key
   * @param {Bytes} value
   * @param {{ lease?: Lease }} [options]
   * @returns {Promise<bigint>} the revision of the write
   */
  async put(key, value, options) {
    const k = toBytes(key, 'key');
    const v = toBytes(value, 'value');
    const o = toOptions(options, 'options');
    const lease = o.lease === undefined || o.lease === null ? undefined : checkLease(o.lease).id;
    try {
      return await this.#native.put(k, v, lease);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Member `name`'s {@link Fence} at the set's token (its queue key's create revision,
   * `fencingToken`), for a database to check (`etcdlock/fencing`; each member has its own mark)
   * or {@link Client#checkFence}. Rejects `NOT_HELD` once released or lost (as a lock's
   * `fence()`), `INVALID_ARGUMENT` if `name` is not a member. A read or permit member has one
   * too, but is not exclusive: its fence does not exclude other holders.
   * @param {Bytes} name
   * @returns {Promise<Fence>}
   */
  async fence(name) {
    const n = toBytes(name, 'name');
    try {
      return Fence.parse(await this.#native.fence(n));
    } catch (e) {
      throw fromNative(e);
    }
  }

  /** `await using locks = await client.lockSet(...)` releases it (unless already released). */
  async [Symbol.asyncDispose]() {
    if (!this.#released) await this.release();
  }
}

module.exports = { LockSet, toMembers, MAX_LOCK_SET };
