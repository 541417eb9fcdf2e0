'use strict';
// A lease kept alive by the core.

/** @import { Client } from './client.js' */
/** @import { LostReason } from './lost.js' */

const { invalid, fromNative } = require('./errors.js');
const { describe } = require('./args.js');
const { LostCallbacks } = require('./lost.js');
const internal = require('./internal.js');

/**
 * A lease from {@link Client#lease}, kept alive in the background until revoked, lost, or its
 * client is closed. Dropping the object does not revoke it.
 */
class Lease {
  /** @type {any} */ #native;
  /** @type {Client} */ #client;
  /** @type {bigint} */ #id;
  /** @type {LostCallbacks} */ #lost;

  /**
   * Not constructed directly: {@link Client#lease} returns one.
   * @private
   * @param {any} nativeLease
   * @param {Client} client
   */
  constructor(nativeLease, client) {
    this.#native = nativeLease;
    this.#client = client;
    this.#id = nativeLease.id;
    this.#lost = new LostCallbacks((f) => nativeLease.onLost(f));
  }

  static {
    internal.leaseNative = (/** @type {Lease} */ lease) => lease.#native;
  }

  /** The lease ID. */
  get id() {
    return this.#id;
  }

  /** The TTL etcd granted, in seconds. @type {number} */
  get ttl() {
    return this.#native.ttl;
  }

  /**
   * Cheap local check: not lost and not past its conservative local deadline.
   * @returns {boolean}
   */
  isAlive() {
    return this.#native.isAlive();
  }

  /**
   * Milliseconds left before the conservative local deadline (0 once lost).
   * @returns {number}
   */
  remaining() {
    return this.#native.remainingMs();
  }

  /** Why the lease was lost, or null. @returns {LostReason | null} */
  lostReason() {
    return /** @type {LostReason | null} */ (this.#native.lostReason());
  }

  /**
   * Calls `cb(reason)` once, on the JS thread, when the lease is lost ('revoked' after
   * {@link Lease#revoke}). Does not keep the process alive. Returns a function that removes `cb`.
   * @param {(reason: LostReason) => void} cb
   * @returns {() => void}
   */
  onLost(cb) {
    return this.#lost.add(cb);
  }

  /**
   * Revokes the lease, deleting every key attached to it. Idempotent.
   * @returns {Promise<void>}
   */
  async revoke() {
    try {
      await this.#native.revoke();
    } catch (e) {
      throw fromNative(e);
    } finally {
      internal.forget(this.#client, this);
    }
  }

  /** `await using lease = await client.lease(10)` revokes it. */
  async [Symbol.asyncDispose]() {
    await this.revoke();
  }
}

function checkLease(v) {
  if (!(v instanceof Lease)) throw invalid(`lease must be a Lease from client.lease(), got ${describe(v)}`);
  return v;
}

module.exports = { Lease, checkLease };
