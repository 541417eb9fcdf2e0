'use strict';
// The async iterator over a native follower (the core's stream of states, src/follow.rs): what
// the election's Observer (recipes.js) and the Discovery (discovery.js) share.

const { fromNative, abortError } = require('./errors.js');

/**
 * The states of a native follower as an async iterator: the current state first, then one per
 * change, across reconnects and compaction; ends when closed (`close()`, leaving a `for await`
 * loop, the signal if it has one) or when the client closes. Reads the native follower one
 * `next()` at a time, in the order they were called. Not used directly: the election's `Observer`
 * and the `Discovery` extend it, each declaring the type its `next()` yields (not as a type
 * argument: `Leader | null` would lose its null in the generated declarations).
 * @implements {AsyncIterableIterator<any>}
 */
class Follower {
  /** @type {any} */ #native = null;
  /** @type {Promise<void>} */ #ready;
  #closed = false;
  /** @type {unknown} */ #error = null;
  /** One native read at a time, in the order next() was called. @type {Promise<unknown>} */
  #chain = Promise.resolve();
  /** @type {AbortSignal | undefined} */ #signal;
  /** @type {(() => void) | undefined} */ #onAbort;
  /** @type {(item: any) => unknown} */ #map;
  /** @type {string} */ #what;

  /**
   * @protected
   * @param {Promise<any>} nativeFollower resolves to the native object (`next()`, `close()`)
   * @param {(item: any) => unknown} map what `next()` yields for a native item (never null)
   * @param {AbortSignal | undefined} signal aborting closes it: a pending or later `next()` rejects with an AbortError
   * @param {string} what names it in the AbortError's message (`<what> was aborted`)
   */
  constructor(nativeFollower, map, signal, what) {
    this.#map = map;
    this.#what = what;
    this.#ready = nativeFollower.then(
      (n) => {
        this.#native = n;
        if (this.#closed) n.close();
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
    this.#error = abortError(signal, this.#what);
    this.close();
  }

  /**
   * The next state (the current one on the first call); done once closed or the client closed.
   * Rejects `CLOSED` if the client was closed before it started, an AbortError once its signal
   * fired.
   * @returns {Promise<IteratorResult<any, undefined>>}
   */
  next() {
    const r = this.#chain.then(() => this.#read());
    this.#chain = r.catch(() => {});
    return r;
  }

  /** @returns {Promise<IteratorResult<any, undefined>>} */
  async #read() {
    await this.#ready;
    if (this.#error) throw this.#error;
    if (this.#closed) return { value: undefined, done: true };
    let item;
    try {
      item = await this.#native.next();
    } catch (e) {
      this.#error = this.#error || fromNative(e);
      this.close();
      throw this.#error;
    }
    if (this.#error) throw this.#error;
    if (item == null || this.#closed) {
      this.close();
      return { value: undefined, done: true };
    }
    return { value: this.#map(item), done: false };
  }

  /**
   * Ends a `for await` loop early: closes it.
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

module.exports = { Follower };
