'use strict';
// The prefix cache: a local copy of every key under a prefix, kept in step with etcd by the core
// (`etcdlock::Cache`), and its events as an async iterator.

/** @import { Bytes } from './args.js' */

const native = require('./addon.js');
const { fromNative, abortError, invalid } = require('./errors.js');
const { describe, toBytes, toOptions, toMillis, toRevision, toSignal } = require('./args.js');
const { Follower } = require('./follower.js');

/**
 * One key of a cache's copy.
 * @typedef {object} CacheEntry
 * @property {Buffer} key
 * @property {Buffer} value
 * @property {bigint} createRevision
 * @property {bigint} modRevision the revision of its latest put
 * @property {bigint} version
 * @property {bigint} lease 0n when none
 */

/**
 * A cache's whole copy and the revision it is at, read together.
 * @typedef {object} CacheSnapshot
 * @property {CacheEntry[]} entries every key under the prefix as etcd had it at `revision`, in key order (bytewise)
 * @property {bigint} revision
 */

/**
 * One change of a cache's copy.
 * @typedef {object} CacheEvent
 * @property {'put' | 'delete' | 'resynced'} type `'resynced'`: the copy was read again (after a
 *   compaction of the history it needed, or for a reader that fell more than 4096 events
 *   behind); the events just before it say what changed, and `snapshot()` is the copy now
 * @property {Buffer} key empty for `'resynced'`
 * @property {Buffer} value the new value; empty for a delete and for `'resynced'`
 * @property {Buffer} [prevValue] the value the copy had before; absent if it did not have the key
 * @property {bigint} revision the change's revision (for `'resynced'`, the one the copy was read at)
 */

/**
 * @typedef {object} CacheWaitOptions
 * @property {number} [timeout] milliseconds; rejects `TIMEOUT` once they pass (default: no limit)
 * @property {AbortSignal} [signal] aborting stops the wait: it rejects with an AbortError
 */

/**
 * @typedef {object} CacheEventsOptions
 * @property {AbortSignal} [signal] aborting ends the iteration: a pending or later `next()`
 *   rejects with an AbortError (so a `for await` loop throws it)
 */

/**
 * A local copy of every key under a prefix, from {@link Client#cache}: loaded at one revision,
 * then changed a whole revision at a time by a watch that resumes across disconnects; after a
 * compaction of the history it needs, it reads the prefix again (a `'resynced'` event). Reads
 * are answered from memory, at once, and may be behind etcd: {@link Cache#waitFor} a write's
 * revision to read it back. Each read throws `CLOSED` once the cache or its client is closed.
 * `await using cache = await client.cache(prefix)` closes it.
 */
class Cache {
  /** @type {any} */ #native;

  /**
   * Not constructed directly: {@link Client#cache} returns one.
   * @private
   * @param {any} nativeCache
   */
  constructor(nativeCache) {
    this.#native = nativeCache;
  }

  /** @template T @param {() => T} f @returns {T} */
  #call(f) {
    try {
      return f();
    } catch (e) {
      throw fromNative(e);
    }
  }

  /** The prefix it copies. @returns {Buffer} */
  get prefix() {
    return this.#native.prefix();
  }

  /** The revision the copy is at: every change up to it is in. @returns {bigint} */
  get revision() {
    return this.#call(() => this.#native.revision());
  }

  /** How many keys the copy has. @returns {number} */
  get size() {
    return this.#call(() => this.#native.size());
  }

  /**
   * The value of `key` in the copy, or null.
   * @param {Bytes} key
   * @returns {Buffer | null}
   */
  get(key) {
    const k = toBytes(key, 'key');
    return this.#call(() => this.#native.get(k)) ?? null;
  }

  /** The whole copy and its revision, read together. @returns {CacheSnapshot} */
  snapshot() {
    return this.#call(() => this.#native.snapshot());
  }

  /**
   * Resolves once the copy is at `revision` or later (read-your-writes: pass the revision
   * `client.put` resolved to). Rejects `TIMEOUT` after `timeout` ms, an AbortError once `signal`
   * fires, `CLOSED` if the cache or the client is closed meanwhile, `INVALID_ARGUMENT` for a bad
   * revision or option. A revision of a write outside the prefix arrives only with etcd's
   * progress notices (etcd >= 3.5.8).
   * @param {bigint | number} revision
   * @param {CacheWaitOptions} [options]
   * @returns {Promise<void>}
   */
  async waitFor(revision, options) {
    const r = toRevision(revision, 'revision');
    if (r === undefined) throw invalid(`revision must be a bigint or a number, got ${describe(revision)}`);
    const o = toOptions(options, 'options');
    const timeout = toMillis(o.timeout, 'timeout');
    const signal = toSignal(o.signal);
    if (signal && signal.aborted) throw abortError(signal, 'The wait');
    let token;
    let onAbort;
    if (signal) {
      token = new native.CancelToken();
      onAbort = () => token.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    try {
      await this.#native.waitFor(r, timeout, token);
    } catch (e) {
      if (signal && signal.aborted && e && e.code === 'CANCELLED') throw abortError(signal, 'The wait');
      throw fromNative(e);
    } finally {
      if (signal) signal.removeEventListener('abort', /** @type {() => void} */ (onAbort));
    }
  }

  /**
   * The copy's changes from now on: `for await (const ev of cache.events())`, each a
   * {@link CacheEvent}, in revision order, none missed. Ends when closed (`close()`, leaving the
   * loop), or when the cache or the client is closed. Throws `CLOSED` if already closed.
   * @param {CacheEventsOptions} [options]
   * @returns {CacheEvents}
   */
  events(options) {
    const signal = toSignal(toOptions(options, 'options').signal);
    return new CacheEvents(this.#call(() => this.#native.events()), this, signal);
  }

  /** Stops following etcd (idempotent): reads throw `CLOSED`, iterations end, waits reject `CLOSED`. */
  close() {
    this.#native.close();
  }

  /** `await using cache = await client.cache(prefix)` closes it. */
  async [Symbol.asyncDispose]() {
    this.close();
  }
}

/**
 * A cache's events, from {@link Cache#events}: an async iterable of {@link CacheEvent}s.
 * @implements {AsyncIterableIterator<CacheEvent>}
 */
class CacheEvents extends Follower {
  /** Kept reachable while iterated: a cache nobody holds stops when collected. */
  #cache;

  /**
   * Not constructed directly: {@link Cache#events} returns one.
   * @private
   * @param {any} nativeEvents
   * @param {Cache} cache
   * @param {AbortSignal | undefined} signal
   */
  constructor(nativeEvents, cache, signal) {
    super(Promise.resolve(nativeEvents), (ev) => ev, signal, "The cache's events");
    this.#cache = cache;
  }

  /** The cache these events are of. @returns {Cache} */
  get cache() {
    return this.#cache;
  }

  /**
   * The next event; done once closed, or the cache or the client closed. Rejects with an
   * AbortError once its signal fired.
   * @returns {Promise<IteratorResult<CacheEvent, undefined>>}
   */
  next() {
    return super.next();
  }
}

module.exports = { Cache, CacheEvents };
