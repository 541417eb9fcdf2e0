'use strict';
// A registered instance of a service (the service registry's writing side).

/** @import { Client } from './client.js' */
/** @import { Bytes } from './args.js' */

const { EtcdlockError, codes, fromNative } = require('./errors.js');
const { toBytes, toCallback } = require('./args.js');
const internal = require('./internal.js');

/**
 * Why a registration was lost (it is being registered again by then).
 * @typedef {'expired' | 'revoked' | 'key_deleted'} RegistrationLostReason
 */

/**
 * @typedef {object} RegisterOptions
 * @property {number} [ttl] lease TTL in whole seconds (default 10): how long the instance stays
 *   listed after this process stops without closing it
 * @property {boolean} [replace] take the name over if another registrant holds it (whose
 *   registration then ends with 'takenOver'); without it that is `WOULD_BLOCK`
 * @property {AbortSignal} [signal] aborting while registering rejects with an AbortError and
 *   leaves nothing; aborting later closes the registration (as `server.listen({ signal })` closes
 *   a server)
 */

/**
 * An instance registered under a service, from {@link Client#register}: the key
 * `<service>/<instance>` with its value, on a lease of its own that the core keeps alive. When
 * the registration is lost (the lease expired or was revoked, the key deleted), the core
 * registers it again on a new lease as soon as etcd allows, and reports both
 * ({@link Registration#onLost}, {@link Registration#onRestored}); another registrant taking the
 * name over (`replace: true`) ends it ({@link Registration#onTakenOver}). `close()` (or
 * `await using`) deregisters. Like a held lock it does not keep the process alive, garbage
 * collection never closes it, and closing its client or exiting the process deregisters it.
 */
class Registration {
  /** @type {any} */ #native;
  /** @type {Client} */ #client;
  /** @type {Buffer | null} */ #key = null;
  #closed = false;
  #takenOver = false;
  /** @type {Set<(reason: RegistrationLostReason) => void>} */ #lost = new Set();
  /** @type {Set<(leaseId: bigint) => void>} */ #restored = new Set();
  /** @type {Set<() => void>} */ #takenOverCbs = new Set();
  /** @type {AbortSignal | undefined} */ #signal;
  /** @type {(() => void) | undefined} */ #onAbort;

  /**
   * Not constructed directly: {@link Client#register} returns one.
   * @private
   * @param {any} nativeRegistration
   * @param {Client} client
   * @param {AbortSignal | undefined} signal
   */
  constructor(nativeRegistration, client, signal) {
    this.#native = nativeRegistration;
    this.#client = client;
    // The core subscribed when it registered: every event from then on comes here, in order.
    nativeRegistration.onEvents((/** @type {any} */ e) => this.#event(e));
    if (signal && !signal.aborted) {
      this.#signal = signal;
      this.#onAbort = () => {
        this.close().catch(() => {});
      };
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  static {
    internal.registrationEnded = (/** @type {Registration} */ reg) => {
      // Its client closed (which revoked the lease): only the event forwarder is left to stop.
      if (reg.#closed) return;
      reg.#end();
      reg.#native.close().catch(() => {});
    };
  }

  /** @param {{ type: string, reason?: string | null, lease?: bigint | null }} e */
  #event(e) {
    if (this.#closed) return;
    if (e.type === 'lost') {
      for (const f of [...this.#lost]) f(/** @type {RegistrationLostReason} */ (e.reason));
    } else if (e.type === 'restored') {
      for (const f of [...this.#restored]) f(/** @type {bigint} */ (e.lease));
    } else if (e.type === 'takenOver') {
      this.#takenOver = true;
      const cbs = [...this.#takenOverCbs];
      this.#takenOverCbs.clear();
      for (const f of cbs) f();
    }
  }

  /** `<service>/<instance>`, the key in etcd. */
  get key() {
    if (this.#key === null) this.#key = this.#native.key;
    return Buffer.from(this.#key);
  }

  /**
   * The lease the key is on now; null while it is being registered again, once taken over and
   * once closed. A new one after each restore.
   * @type {bigint | null}
   */
  get leaseId() {
    return this.#native.leaseId ?? null;
  }

  /**
   * Whether the instance is registered now, as far as this process knows (cheap, local): false
   * while being registered again, once taken over, once closed.
   * @type {boolean}
   */
  get registered() {
    return this.#native.isRegistered();
  }

  /**
   * Calls `cb(reason)` on the JS thread each time the registration is lost from now on
   * ('expired', 'revoked', 'key_deleted'); the core is registering it again by then, and
   * {@link Registration#onRestored} follows (unless the name was taken over meanwhile). Not
   * called for `close()`. Returns a function that removes `cb`.
   * @param {(reason: RegistrationLostReason) => void} cb
   * @returns {() => void}
   */
  onLost(cb) {
    return this.#listen(this.#lost, cb);
  }

  /**
   * Calls `cb(leaseId)` on the JS thread each time the instance is registered again after a
   * loss, with the new lease's ID. Returns a function that removes `cb`.
   * @param {(leaseId: bigint) => void} cb
   * @returns {() => void}
   */
  onRestored(cb) {
    return this.#listen(this.#restored, cb);
  }

  /**
   * Calls `cb()` once, on the JS thread, when another registrant takes the name over: the
   * registration has ended (its key is the other's; `update()` rejects `NOT_HELD`); at once
   * (asynchronously) if it already was. Returns a function that removes `cb`.
   * @param {() => void} cb
   * @returns {() => void}
   */
  onTakenOver(cb) {
    toCallback(cb);
    if (this.#takenOver) {
      let live = true;
      setImmediate(() => live && cb());
      return () => {
        live = false;
      };
    }
    return this.#listen(this.#takenOverCbs, cb);
  }

  /**
   * @template {Function} F
   * @param {Set<F>} set
   * @param {F} cb
   * @returns {() => void}
   */
  #listen(set, cb) {
    toCallback(cb);
    set.add(cb);
    return () => {
      set.delete(cb);
    };
  }

  /**
   * Replaces the registered value (kept for every later re-registration too). Written only
   * while the key is on this registration's lease: rejects `NOT_HELD`, writing nothing, while
   * it is being registered again (the value is then used when it is), once taken over or closed.
   * @param {Bytes} value at most 4096 bytes
   * @returns {Promise<bigint>} the revision of the write
   */
  async update(value) {
    const v = toBytes(value, 'value');
    if (this.#client.closed) throw new EtcdlockError(codes.CLOSED, 'the client is closed');
    try {
      return await this.#native.update(v);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /** No more events, no more abort listener, not owned by the client. */
  #end() {
    this.#closed = true;
    if (this.#signal) this.#signal.removeEventListener('abort', /** @type {() => void} */ (this.#onAbort));
    this.#signal = undefined;
    this.#lost.clear();
    this.#restored.clear();
    this.#takenOverCbs.clear();
    internal.forget(this.#client, this);
  }

  /**
   * Deregisters: stops keeping it, deletes the key if it is still this registration's (a
   * taker's stays) and revokes the lease, both done when this resolves (if etcd is unreachable
   * the lease expires after its TTL at worst). Idempotent; resolves at once after the client
   * was closed, which deregistered it already.
   * @returns {Promise<void>}
   */
  async close() {
    this.#end();
    if (this.#client.closed) {
      // Only stops the event forwarder: the client's close revoked the lease.
      this.#native.close().catch(() => {});
      return;
    }
    // Idempotent in the core too: a second close sends nothing.
    try {
      await this.#native.close();
    } catch (e) {
      throw fromNative(e);
    }
  }

  /** `await using reg = await client.register(...)` closes it. */
  async [Symbol.asyncDispose]() {
    await this.close();
  }
}

module.exports = { Registration };
