'use strict';
// A resilient watch as an async iterator.

const { fromNative } = require('./errors.js');

/**
 * One change seen by a watch.
 * @typedef {object} WatchEvent
 * @property {'put' | 'delete'} type
 * @property {Buffer} key
 * @property {Buffer} value empty for deletes
 * @property {bigint} revision the revision of this change
 * @property {bigint} createRevision
 * @property {bigint} version
 * @property {bigint} lease 0n when none
 * @property {Buffer} [prevValue] with `prevKv: true`
 */

/**
 * A watch from {@link Client#watch}: an async iterable of {@link WatchEvent}s that resumes
 * across disconnects without gaps or duplicates. Ends when closed; throws `COMPACTED` if the
 * history it needs is gone, `CLOSED` if the client is closed.
 * @implements {AsyncIterableIterator<WatchEvent>}
 */
class Watch {
  /** @type {any} */ #native = null;
  /** @type {Promise<void>} */ #ready;
  /** @type {WatchEvent[]} */ #buffer = [];
  #head = 0;
  #closed = false;
  /** @type {unknown} */ #error = null;
  /** @type {Promise<void> | null} */ #filling = null;

  /**
   * Not constructed directly: {@link Client#watch} returns one.
   * @private
   * @param {Promise<any>} nativeWatch
   */
  constructor(nativeWatch) {
    this.#ready = nativeWatch.then(
      (w) => {
        this.#native = w;
        if (this.#closed) w.close();
      },
      (e) => {
        this.#error = fromNative(e);
        throw this.#error;
      },
    );
    // The error is reported by next() (and by `ready` to whoever awaits it).
    this.#ready.catch(() => {});
  }

  /**
   * Resolves once etcd has confirmed the watch: without `startRevision`, every change made after
   * this resolves is delivered. Rejects if the watch could not be created (errors met later,
   * such as `COMPACTED` for a `startRevision` etcd no longer has, come from `next()`).
   * @returns {Promise<void>}
   */
  get ready() {
    return this.#ready;
  }

  /** @returns {Promise<IteratorResult<WatchEvent, undefined>>} */
  async next() {
    for (;;) {
      if (this.#head < this.#buffer.length) {
        const value = this.#buffer[this.#head];
        this.#buffer[this.#head++] = undefined;
        return { value, done: false };
      }
      if (this.#error) throw this.#error;
      if (this.#closed) return { value: undefined, done: true };
      // One native read at a time; concurrent next() calls share it.
      if (!this.#filling) this.#filling = this.#fill().finally(() => (this.#filling = null));
      await this.#filling;
    }
  }

  async #fill() {
    try {
      await this.#ready;
      const batch = await this.#native.next();
      if (batch == null || this.#closed) {
        this.#closed = true;
        return;
      }
      this.#buffer = batch;
      this.#head = 0;
    } catch (e) {
      this.#error = this.#error || fromNative(e);
      this.#closed = true;
    }
  }

  /**
   * Ends a `for await` loop early: closes the watch.
   * @returns {Promise<IteratorReturnResult<undefined>>}
   */
  async return() {
    this.close();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  /** Stops the watch; a pending `next()` resolves done. Idempotent. */
  close() {
    if (this.#closed && this.#native === null) return;
    this.#closed = true;
    this.#buffer = [];
    this.#head = 0;
    if (this.#native) this.#native.close();
  }

  async [Symbol.asyncDispose]() {
    this.close();
  }
}

/**
 * @typedef {object} WatchOptions
 * @property {boolean} [prefix] watch every key that starts with `key`
 * @property {bigint | number} [startRevision] first revision to deliver (default: changes from now on)
 * @property {boolean} [prevKv] include each event's previous value as `prevValue`
 */

module.exports = { Watch };
