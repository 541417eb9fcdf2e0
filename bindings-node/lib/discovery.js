'use strict';
// A service's instances as etcd has them (the service registry's reading side), and the
// endpoint values of Go's gRPC resolver.

/** @import { Bytes } from './args.js' */

const native = require('./addon.js');
const { invalid, fromNative, abortError } = require('./errors.js');
const { describe, toBytes } = require('./args.js');

/**
 * One registered instance, as etcd has it.
 * @typedef {object} Instance
 * @property {Buffer} name the instance's name: its key after `<service>/` (`name.toString()` for text)
 * @property {Buffer} value what it registered (for Go gRPC clients: {@link grpcEndpoint}'s value)
 * @property {bigint} lease the lease its key is on (0n for a key put without one, e.g. by hand)
 * @property {bigint} modRevision the revision of the registration's latest put
 */

/**
 * A service's instances at one revision.
 * @typedef {object} Instances
 * @property {Instance[]} instances ordered by name (bytewise)
 * @property {bigint} revision the etcd revision this set is the state at
 */

/**
 * @typedef {object} DiscoverOptions
 * @property {AbortSignal} [signal] aborting closes the discovery: a pending or later `next()`
 *   rejects with an AbortError (so a `for await` loop throws it)
 */

/**
 * A service's instance sets, from {@link Client#discover}: `for await (const set of
 * discovery)`, each an {@link Instances} — the current set first, then the whole set after each
 * change (changes that arrive together come as one set; every set is the state at its
 * `revision`), across reconnects and compaction. Ends when closed (`close()`, leaving the loop)
 * or when the client closes; a pending `next()` keeps the process alive, as an iterated watch
 * does. Sends nothing until iterated.
 * @implements {AsyncIterableIterator<Instances>}
 */
class Discovery {
  /** @type {any} */ #native = null;
  /** @type {Promise<void>} */ #ready;
  #closed = false;
  /** @type {unknown} */ #error = null;
  /** One native read at a time, in the order next() was called. @type {Promise<unknown>} */
  #chain = Promise.resolve();
  /** @type {AbortSignal | undefined} */ #signal;
  /** @type {(() => void) | undefined} */ #onAbort;

  /**
   * Not constructed directly: {@link Client#discover} returns one.
   * @private
   * @param {Promise<any>} nativeDiscovery
   * @param {AbortSignal | undefined} signal
   */
  constructor(nativeDiscovery, signal) {
    this.#ready = nativeDiscovery.then(
      (d) => {
        this.#native = d;
        if (this.#closed) d.close();
      },
      (e) => {
        this.#error = this.#error || fromNative(e);
      },
    );
    if (signal) {
      if (signal.aborted) {
        this.#abort(signal);
      } else {
        this.#signal = signal;
        this.#onAbort = () => this.#abort(signal);
        signal.addEventListener('abort', this.#onAbort, { once: true });
      }
    }
  }

  /** @param {AbortSignal} signal */
  #abort(signal) {
    if (this.#closed) return;
    this.#error = abortError(signal, 'The discovery');
    this.close();
  }

  /**
   * The next set (the current one on the first call); done once closed or the client closed.
   * Rejects `CLOSED` if the client was closed before the discovery started, an AbortError once
   * its signal fired.
   * @returns {Promise<IteratorResult<Instances, undefined>>}
   */
  next() {
    const r = this.#chain.then(() => this.#read());
    this.#chain = r.catch(() => {});
    return r;
  }

  /** @returns {Promise<IteratorResult<Instances, undefined>>} */
  async #read() {
    await this.#ready;
    if (this.#error) throw this.#error;
    if (this.#closed) return { value: undefined, done: true };
    let set;
    try {
      set = await this.#native.next();
    } catch (e) {
      this.#error = this.#error || fromNative(e);
      this.close();
      throw this.#error;
    }
    if (this.#error) throw this.#error;
    if (set == null || this.#closed) {
      this.close();
      return { value: undefined, done: true };
    }
    return { value: set, done: false };
  }

  /**
   * Ends a `for await` loop early: closes the discovery.
   * @returns {Promise<IteratorReturnResult<undefined>>}
   */
  async return() {
    this.close();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  /** Stops following (its watch is closed); a pending `next()` resolves done. Idempotent. */
  close() {
    this.#closed = true;
    if (this.#signal) this.#signal.removeEventListener('abort', /** @type {() => void} */ (this.#onAbort));
    this.#signal = undefined;
    if (this.#native) this.#native.close();
  }

  async [Symbol.asyncDispose]() {
    this.close();
  }
}

/**
 * The value etcd's Go endpoints manager (`client/v3/naming/endpoints`) writes for a gRPC server
 * at `addr` (`{"Op":0,"Addr":"<addr>","Metadata":null}`): register it as an instance's value and
 * Go gRPC clients dialing `etcd:///<service>` (the `naming/resolver` package) reach it.
 * @param {string} addr `host:port`
 * @returns {string}
 */
function grpcEndpoint(addr) {
  if (typeof addr !== 'string') throw invalid(`addr must be a string (host:port), got ${describe(addr)}`);
  return native.grpcEndpoint(addr);
}

/**
 * The address in an endpoint value written by Go's endpoints manager or {@link grpcEndpoint}
 * (an {@link Instance}'s `value`), or null for any other value.
 * @param {Bytes} value
 * @returns {string | null}
 */
function grpcEndpointAddr(value) {
  return native.grpcEndpointAddr(toBytes(value, 'value')) ?? null;
}

module.exports = { Discovery, grpcEndpoint, grpcEndpointAddr };
