/**
 * One key of a cache's copy.
 */
export type CacheEntry = {
    key: Buffer;
    value: Buffer;
    createRevision: bigint;
    /**
     * the revision of its latest put
     */
    modRevision: bigint;
    version: bigint;
    /**
     * 0n when none
     */
    lease: bigint;
};
/**
 * A cache's whole copy and the revision it is at, read together.
 */
export type CacheSnapshot = {
    /**
     * every key under the prefix as etcd had it at `revision`, in key order (bytewise)
     */
    entries: CacheEntry[];
    revision: bigint;
};
/**
 * One change of a cache's copy.
 */
export type CacheEvent = {
    /**
     * `'resynced'`: the copy was read again (after a
     * compaction of the history it needed, or for a reader that fell more than 4096 events
     * behind); the events just before it say what changed, and `snapshot()` is the copy now
     */
    type: "put" | "delete" | "resynced";
    /**
     * empty for `'resynced'`
     */
    key: Buffer;
    /**
     * the new value; empty for a delete and for `'resynced'`
     */
    value: Buffer;
    /**
     * the value the copy had before; absent if it did not have the key
     */
    prevValue?: Buffer;
    /**
     * the change's revision (for `'resynced'`, the one the copy was read at)
     */
    revision: bigint;
};
export type CacheWaitOptions = {
    /**
     * milliseconds; rejects `TIMEOUT` once they pass (default: no limit)
     */
    timeout?: number;
    /**
     * aborting stops the wait: it rejects with an AbortError
     */
    signal?: AbortSignal;
};
export type CacheEventsOptions = {
    /**
     * aborting ends the iteration: a pending or later `next()`
     * rejects with an AbortError (so a `for await` loop throws it)
     */
    signal?: AbortSignal;
};
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
export class Cache {
    /**
     * Not constructed directly: {@link Client#cache} returns one.
     * @private
     * @param {any} nativeCache
     */
    private constructor();
    /** The prefix it copies. @returns {Buffer} */
    get prefix(): Buffer;
    /** The revision the copy is at: every change up to it is in. @returns {bigint} */
    get revision(): bigint;
    /** How many keys the copy has. @returns {number} */
    get size(): number;
    /**
     * The value of `key` in the copy, or null.
     * @param {Bytes} key
     * @returns {Buffer | null}
     */
    get(key: Bytes): Buffer | null;
    /** The whole copy and its revision, read together. @returns {CacheSnapshot} */
    snapshot(): CacheSnapshot;
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
    waitFor(revision: bigint | number, options?: CacheWaitOptions): Promise<void>;
    /**
     * The copy's changes from now on: `for await (const ev of cache.events())`, each a
     * {@link CacheEvent}, in revision order, none missed. Ends when closed (`close()`, leaving the
     * loop), or when the cache or the client is closed. Throws `CLOSED` if already closed.
     * @param {CacheEventsOptions} [options]
     * @returns {CacheEvents}
     */
    events(options?: CacheEventsOptions): CacheEvents;
    /** Stops following etcd (idempotent): reads throw `CLOSED`, iterations end, waits reject `CLOSED`. */
    close(): void;
    /** `await using cache = await client.cache(prefix)` closes it. */
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
/**
 * A cache's events, from {@link Cache#events}: an async iterable of {@link CacheEvent}s.
 * @implements {AsyncIterableIterator<CacheEvent>}
 */
export class CacheEvents extends Follower implements AsyncIterableIterator<CacheEvent> {
    /**
     * Not constructed directly: {@link Cache#events} returns one.
     * @private
     * @param {any} nativeEvents
     * @param {Cache} cache
     * @param {AbortSignal | undefined} signal
     */
    private constructor();
    /** The cache these events are of. @returns {Cache} */
    get cache(): Cache;
    /**
     * The next event; done once closed, or the cache or the client closed. Rejects with an
     * AbortError once its signal fired.
     * @returns {Promise<IteratorResult<CacheEvent, undefined>>}
     */
    next(): Promise<IteratorResult<CacheEvent, undefined>>;
    #private;
}
import type { Bytes } from './args.js';
import { Follower } from "./follower.js";
