/**
 * An election's leader as etcd has it: the candidate with the lowest create revision.
 */
export type Leader = {
    /**
     * the proposal: the value given to `campaign()` or the last `proclaim()`
     */
    value: Buffer;
    /**
     * the leader's key, `<name>/<lease hex>`
     */
    key: Buffer;
    /**
     * the key's create revision: the leader's fencing token, greater than every earlier leader's
     */
    revision: bigint;
    /**
     * the lease the key is bound to
     */
    lease: bigint;
};
export type CampaignOptions = {
    /**
     * ms to wait; 0 = only if nobody leads or campaigns (`WOULD_BLOCK` otherwise); omitted = forever
     */
    timeout?: number;
    /**
     * aborting rejects with an AbortError and removes the candidate's key
     */
    signal?: AbortSignal;
};
export type AcquireOptions = {
    /**
     * ms to wait; 0 = try once (`WOULD_BLOCK` if taken); omitted = forever
     */
    timeout?: number;
    /**
     * aborting rejects with an AbortError and removes the queue key
     */
    signal?: AbortSignal;
    /**
     * stored in the queue key for `inspect()` to show; at most 4096 bytes
     */
    value?: Bytes;
};
/**
 * An election's leader as etcd has it: the candidate with the lowest create revision.
 * @typedef {object} Leader
 * @property {Buffer} value the proposal: the value given to `campaign()` or the last `proclaim()`
 * @property {Buffer} key the leader's key, `<name>/<lease hex>`
 * @property {bigint} revision the key's create revision: the leader's fencing token, greater than every earlier leader's
 * @property {bigint} lease the lease the key is bound to
 */
/**
 * Leading an election, from {@link Election#campaign}: a {@link Lock} that is held while this
 * candidate leads (fencing token, `onLost`, `ifHeld` guarded writes), plus `proclaim()` and
 * `resign()`. `await using` resigns at the end of the block.
 */
export class Leadership extends Lock {
    /**
     * Cheap local check: still leading (not resigned, not known lost). Same as `isHeld()`.
     * @returns {boolean}
     */
    isLeader(): boolean;
    /**
     * Replaces the leader's value (what `leader()`, observers and `etcdctl elect -l` see), only
     * while still leading: rejects `NOT_HELD`, writing nothing, otherwise.
     * @param {Bytes} value at most 4096 bytes
     * @returns {Promise<bigint>} the revision of the write
     */
    proclaim(value: Bytes): Promise<bigint>;
    /**
     * Steps down (fenced: deletes the leader's key only if it is still this one's; the next
     * candidate leads). Rejects `NOT_HELD` if already resigned or lost. Same as `release()`.
     * @returns {Promise<void>}
     */
    resign(): Promise<void>;
}
/**
 * @typedef {object} CampaignOptions
 * @property {number} [timeout] ms to wait; 0 = only if nobody leads or campaigns (`WOULD_BLOCK` otherwise); omitted = forever
 * @property {AbortSignal} [signal] aborting rejects with an AbortError and removes the candidate's key
 */
/**
 * The election `name`, from {@link Client#election}: campaign, read the leader, observe it.
 * Candidates are queue keys of the fair lock (`<name>/<lease hex>`, the proposal as the value),
 * the same keys as etcd's Go `concurrency.Election` and `etcdctl elect`. Creating it sends
 * nothing.
 */
export class Election {
    /**
     * Not constructed directly: {@link Client#election} returns one.
     * @private
     * @param {Client} client
     * @param {Buffer} name
     * @param {number} ttl
     */
    private constructor();
    /** The election's name. @type {Buffer} */
    get name(): Buffer;
    /**
     * Waits to lead, proposing `value`; resolves to the {@link Leadership}. Rejects
     * `LOCK_TIMEOUT` (timeout passed), `WOULD_BLOCK` (timeout 0 and someone leads or
     * campaigns), `LOCK_LOST` (this candidate's lease or key went while it waited), an
     * AbortError (signal aborted), `CLOSED`; in every case the candidate's key is gone by then.
     * @param {Bytes} value the proposal, at most 4096 bytes
     * @param {CampaignOptions} [options]
     * @returns {Promise<Leadership>}
     */
    campaign(value: Bytes, options?: CampaignOptions): Promise<Leadership>;
    /**
     * The current leader, or null when nobody campaigns. Changes nothing.
     * @returns {Promise<Leader | null>}
     */
    leader(): Promise<Leader | null>;
    /**
     * Follows the leader: an async iterable of {@link Leader} (or null when nobody leads),
     * starting with the current state, then one per change (a new leader, a proclamation, null
     * when the last candidate goes; a new candidate behind the leader is no change), across
     * reconnects and compaction. Ends when closed (`close()`, leaving a `for await` loop) or when
     * the client closes. Sends nothing until iterated.
     * @returns {Observer}
     */
    observe(): Observer;
    #private;
}
/**
 * Leader changes of an election, from {@link Election#observe}: `for await (const leader of
 * observer)`, each a {@link Leader} or null (no leader). Changes that come faster than they are
 * read may be merged into the latest state, which is never skipped.
 * @implements {AsyncIterableIterator<Leader | null>}
 */
export class Observer extends Follower implements AsyncIterableIterator<Leader | null> {
    /**
     * Not constructed directly: {@link Election#observe} returns one.
     * @private
     * @param {Promise<any>} nativeObserver
     */
    private constructor();
    /**
     * The next change (the current leader on the first call); done once closed or the client
     * closed. Rejects `CLOSED` if the client was closed before the observer started.
     * @returns {Promise<IteratorResult<Leader | null, undefined>>}
     */
    next(): Promise<IteratorResult<Leader | null, undefined>>;
}
/**
 * @typedef {object} AcquireOptions
 * @property {number} [timeout] ms to wait; 0 = try once (`WOULD_BLOCK` if taken); omitted = forever
 * @property {AbortSignal} [signal] aborting rejects with an AbortError and removes the queue key
 * @property {Bytes} [value] stored in the queue key for `inspect()` to show; at most 4096 bytes
 */
/**
 * The read-write lock `name`, from {@link Client#rwlock}: readers hold together, a writer
 * alone, served in arrival order (a reader never overtakes a writer that queued first). A
 * plain `client.lock(name)` (or `etcdctl lock`) on the same name counts as a writer. Creating it
 * sends nothing.
 */
export class RwLock {
    /**
     * Not constructed directly: {@link Client#rwlock} returns one.
     * @private
     * @param {Client} client
     * @param {Buffer} name
     * @param {number} ttl
     */
    private constructor();
    /** The lock's name. @type {Buffer} */
    get name(): Buffer;
    /**
     * Acquires a read; resolves to the held {@link Lock} once no writer holds or waits ahead of
     * it. Rejects as `client.lock()` does.
     * @param {AcquireOptions} [options]
     * @returns {Promise<Lock>}
     */
    read(options?: AcquireOptions): Promise<Lock>;
    /**
     * Acquires the write; resolves to the held {@link Lock} once everyone ahead of it is gone.
     * Rejects as `client.lock()` does.
     * @param {AcquireOptions} [options]
     * @returns {Promise<Lock>}
     */
    write(options?: AcquireOptions): Promise<Lock>;
    #private;
}
import type { Bytes } from './args.js';
import { Lock } from "./lock.js";
import { Follower } from "./follower.js";
