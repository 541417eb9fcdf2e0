'use strict';
// A held lock (also what a semaphore's permit, a read-write lock's read or write, and an
// election's leadership are).

/** @import { Client } from './client.js' */
/** @import { Bytes } from './args.js' */
/** @import { LostReason } from './lost.js' */
/** @import { Lease } from './lease.js' */
/** @import { Health } from './health.js' */

const { fromNative } = require('./errors.js');
const { Fence } = require('./fence.js');
const { toBytes, toOptions } = require('./args.js');
const { LostCallbacks } = require('./lost.js');
const { checkLease } = require('./lease.js');
const internal = require('./internal.js');
const trace = require('./trace.js');
const { toHealth } = require('./health.js');

/**
 * A held lock, from {@link Client#lock}. Release it with {@link Lock#release} (or `await using`).
 * A Lock that is dropped without release stays held until its client is closed or the process
 * exits: garbage collection never releases it behind your back.
 */
class Lock {
  /** @type {any} */ #native;
  /** @type {Client} */ #client;
  /** @type {bigint} */ #token;
  /** @type {Buffer | null} */ #key = null;
  #released = false;
  /** @type {LostCallbacks | null} */ #lost = null;

  /**
   * Not constructed directly: {@link Client#lock} returns one (protected: {@link Leadership} is one too).
   * @protected
   * @param {any} nativeLock
   * @param {Client} client
   */
  constructor(nativeLock, client) {
    this.#native = nativeLock;
    this.#client = client;
    // Only the token is read eagerly: lock/release loops should pay for nothing else.
    this.#token = nativeLock.fencingToken;
  }

  static {
    internal.lockNative = (/** @type {Lock} */ lock) => lock.#native;
  }

  /** The fencing token: strictly greater than every earlier holder's (create revision of the key). */
  get fencingToken() {
    return this.#token;
  }

  /** This holder's queue key in etcd (`<name>/<lease hex>`). */
  get key() {
    if (this.#key === null) this.#key = this.#native.key;
    return Buffer.from(this.#key);
  }

  /** ID of the lease the key is attached to, shared by the client's locks with the same TTL. @type {bigint} */
  get leaseId() {
    return this.#native.leaseId;
  }

  /**
   * Cheap local check: not released, not lost, lease not past its conservative deadline.
   * @returns {boolean}
   */
  isHeld() {
    return this.#native.isHeld();
  }

  /** Why the lock was lost, or null. @returns {LostReason | null} */
  lostReason() {
    return /** @type {LostReason | null} */ (this.#native.lostReason());
  }

  /**
   * One call's view of the lock (`ok` while held and not in doubt): what a readiness probe
   * answers. Local reads only.
   * @returns {Health}
   */
  health() {
    return toHealth(this.#native.health());
  }

  /**
   * Calls `cb(reason)` once, on the JS thread, when the lock is lost (not when it is released);
   * at once if it already is. Does not keep the process alive. Returns a function that removes `cb`.
   * @param {(reason: LostReason) => void} cb
   * @returns {() => void}
   */
  onLost(cb) {
    const native = this.#native;
    if (this.#lost === null) this.#lost = new LostCallbacks((f) => native.onLost(f));
    return this.#lost.add(cb);
  }

  /**
   * Releases the lock (fenced: deletes the key only if it is still this acquisition's).
   * Rejects with `NOT_HELD` if it was already released or lost.
   * @returns {Promise<void>}
   */
  async release() {
    this.#released = true;
    return trace.release(this, () => internal.releaseNative(this.#client, this, this.#native));
  }

  /**
   * This acquisition's {@link Fence} (the lock's name, the fencing token and the etcd cluster's
   * ID; `String(fence)` to pass it on), for a database to check (`etcdlock/fencing`) or
   * {@link Client#checkFence}. Reads the cluster's ID on the client's first fence. Rejects
   * `NOT_HELD` once released or lost. A semaphore's permit or a read lock has one too, but they
   * are not exclusive: such a fence does not exclude other holders.
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
   * Writes `value` at `key` only if this lock is still held (atomically checked by etcd);
   * rejects with `NOT_HELD`, writing nothing, otherwise. Same as `client.put(key, value, { ifHeld: lock })`.
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

  /** `await using lock = await client.lock(...)` releases it (unless already released). */
  async [Symbol.asyncDispose]() {
    if (!this.#released) await this.release();
  }
}

module.exports = { Lock };
