/**
 * A queue's items by state, read at one revision.
 */
export type QueueStats = {
    /**
     * claimable now
     */
    pending: number;
    /**
     * `pending` by priority (only priorities that have pending items)
     */
    pendingByPriority: Record<number, number>;
    /**
     * put or given back with a delay that has not passed
     */
    delayed: number;
    /**
     * held by a worker
     */
    claimed: number;
    /**
     * in the dead letters
     */
    dead: number;
    /**
     * the etcd revision the counts were read at
     */
    revision: bigint;
};
/**
 * An item in the dead letters (it had its last delivery).
 */
export type DeadTask = {
    id: string;
    payload: Buffer;
    /**
     * the deliveries it had
     */
    attempts: number;
    priority: number;
};
/**
 * Options of {@link Client#queue}.
 */
export type QueueOptions = {
    /**
     * TTL in whole seconds of the lease a claim lives on (default 10): how long a dead worker's item stays claimed
     */
    ttl?: number;
    /**
     * deliveries before an item goes to the dead letters, at least 1 (default 5)
     */
    maxAttempts?: number;
    /**
     * ms after which a claim ends, held or not (its lost signal
     * fires, the item is claimable again): a hung handler cannot keep an item; more than 0
     * (default: no limit)
     */
    maxProcessing?: number;
};
export type PutTaskOptions = {
    /**
     * the item's id (default: a random one): a put with the id of an item
     * that exists (pending, delayed, claimed or dead) changes nothing. 1 to 256 bytes, no newline
     */
    id?: string;
    /**
     * higher first, a 32-bit integer (default 0); in one priority, in the order etcd committed the puts
     */
    priority?: number;
    /**
     * ms before it can be claimed (timed by an etcd lease: whole seconds, rounded up)
     */
    delay?: number;
};
export type ClaimOptions = {
    /**
     * ms to wait; 0 = try once (`WOULD_BLOCK` if nothing is available); omitted = forever
     */
    timeout?: number;
    /**
     * aborting rejects with an AbortError and leaves nothing behind
     */
    signal?: AbortSignal;
    /**
     * stored in the claim key (who works on it: a host, a pid); at most 4096 bytes
     */
    worker?: Bytes;
};
export type TasksOptions = {
    /**
     * ms each claim waits; the iteration ends when one times out (omitted: never)
     */
    timeout?: number;
    /**
     * aborting rejects the pending claim with an AbortError
     */
    signal?: AbortSignal;
    /**
     * as {@link ClaimOptions}
     */
    worker?: Bytes;
};
/**
 * The writes an ack commits with the item's deletion.
 */
export type AckOptions = {
    /**
     * keys and values to write
     */
    puts?: Record<string, Bytes> | Map<Bytes, Bytes> | Array<[Bytes, Bytes]>;
    /**
     * keys to delete
     */
    deletes?: Bytes[];
};
/**
 * A claimed item, from {@link TaskQueue#claim}: held while this client's lease lives (kept alive
 * in the background). End it with {@link Task#ack} (done: the item is deleted, with writes of
 * your own in the same transaction) or {@link Task#nack} (given back). `await using task =
 * await q.claim()` acks at the end of the block unless it was acked or nacked (nack in a
 * `catch` when the work fails). Fenced writes: `client.put(key, value, { ifHeld: task })`.
 * Like a held lock, a Task that is dropped without ack or nack stays claimed until its client
 * is closed or the process exits: garbage collection never gives it back behind your back.
 */
export class Task {
    /**
     * Not constructed directly: {@link TaskQueue#claim} returns one.
     * @private
     * @param {any} nativeTask
     * @param {Client} client
     * @param {Buffer} queueName
     */
    private constructor();
    /** The item's id (the one given to `put()`, or the random one it made). @type {string} */
    get id(): string;
    /** The item's payload. @type {Buffer} */
    get payload(): Buffer;
    /** @type {number} */
    get priority(): number;
    /** Deliveries of this item so far, this one included. @type {number} */
    get attempts(): number;
    /** The claim key's create revision: larger for every later claim of any item. @type {bigint} */
    get fencingToken(): bigint;
    /**
     * Cheap local check: neither acked nor nacked, and not known to be lost.
     * @returns {boolean}
     */
    isHeld(): boolean;
    /** Why the claim was lost, or null. @returns {LostReason | null} */
    lostReason(): LostReason | null;
    /**
     * One call's view of the claim (`ok` while held and not in doubt): what a readiness probe
     * answers. Local reads only.
     * @returns {Health}
     */
    health(): Health;
    /**
     * Calls `cb(reason)` once, on the JS thread, when the claim is lost (not when it is acked or
     * nacked); at once if it already is. Does not keep the process alive. Returns a function that
     * removes `cb`.
     * @param {(reason: LostReason) => void} cb
     * @returns {() => void}
     */
    onLost(cb: (reason: LostReason) => void): () => void;
    /**
     * The claim's {@link Fence}: on the claim's lock (named `<queue>/claim/<item's slot>`, the
     * default resource of a database's mark, so each item has its own; every later claim of the
     * item has a larger token). Rejects `NOT_HELD` once the claim ended or was lost.
     * @returns {Promise<Fence>}
     */
    fence(): Promise<Fence>;
    /**
     * Done: deletes the item, with `puts` and `deletes` of your own in the same transaction, only
     * while the claim holds; rejects `NOT_HELD`, writing nothing, if it was lost (the item is
     * claimable again) or already acked or nacked. `INVALID_ARGUMENT` for a write under the
     * queue's own keys or more than 100 of them (the task is still held then).
     * @param {AckOptions} [options]
     * @returns {Promise<bigint>} the revision of the ack
     */
    ack(options?: AckOptions): Promise<bigint>;
    /**
     * Gives the item back: claimable at once, or not before `delay` ms (timed by an etcd lease:
     * whole seconds, rounded up, at least etcd's minimum TTL); after its last delivery
     * (`maxAttempts`), to the dead letters. Rejects `NOT_HELD` if the claim was lost or already
     * ended.
     * @param {{ delay?: number }} [options]
     * @returns {Promise<void>}
     */
    nack(options?: {
        delay?: number;
    }): Promise<void>;
    /** `await using task = await q.claim()` acks at the end of the block, unless acked or nacked already. */
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
/**
 * The task queue `name`, from {@link Client#queue}: a durable work queue in etcd. Items are
 * claimed highest priority first, then in the order they were put; a claim lives on the
 * worker's lease, so a worker that dies loses it within the queue's TTL and the item is
 * delivered again (`attempts` counts the deliveries; after `maxAttempts` it goes to the dead
 * letters). Workers waiting to claim are served in the order they began. Creating it sends
 * nothing.
 */
export class TaskQueue {
    /**
     * Not constructed directly: {@link Client#queue} returns one.
     * @private
     * @param {Client} client
     * @param {Buffer} name
     * @param {number} ttl
     * @param {number} maxAttempts
     * @param {number} [maxProcessing] ms
     */
    private constructor();
    /** The queue's name. @type {Buffer} */
    get name(): Buffer;
    /**
     * Adds an item; resolves to its id. With `id`, a put of an item that exists (pending, delayed,
     * claimed or dead) changes nothing and resolves to the id. Rejects `INVALID_ARGUMENT`,
     * writing nothing, for a payload over {@link MAX_TASK_PAYLOAD_LEN} bytes, an empty id, one
     * with a newline or over 256 bytes, a priority that is not a 32-bit integer, a delay < 0 or
     * beyond etcd's largest lease TTL.
     * @param {Bytes} payload
     * @param {PutTaskOptions} [options]
     * @returns {Promise<string>}
     */
    put(payload: Bytes, options?: PutTaskOptions): Promise<string>;
    /**
     * Claims the oldest available item of the highest priority; resolves to the {@link Task}.
     * Rejects `LOCK_TIMEOUT` (timeout passed), `WOULD_BLOCK` (timeout 0 and nothing available),
     * an AbortError (signal aborted), `CLOSED`; nothing is left behind in any of these cases (a
     * claim that completes as the signal fires is given back).
     * @param {ClaimOptions} [options]
     * @returns {Promise<Task>}
     */
    claim(options?: ClaimOptions): Promise<Task>;
    /**
     * Claims one task after another: `for await (const task of q.tasks({ timeout }))`. Ends when
     * a claim times out (never without a timeout); rejects as `claim()` otherwise. Ack or nack
     * each (or `await using` it). Throws `INVALID_ARGUMENT` for bad options at once.
     * @param {TasksOptions} [options]
     * @returns {AsyncGenerator<Task, void, undefined>}
     */
    tasks(options?: TasksOptions): AsyncGenerator<Task, void, undefined>;
    /**
     * Counts of the queue's items by state, read at one revision.
     * @returns {Promise<QueueStats>}
     */
    stats(): Promise<QueueStats>;
    /**
     * The dead letters, in id order.
     * @returns {Promise<DeadTask[]>}
     */
    dead(): Promise<DeadTask[]>;
    /**
     * Puts a dead item back at the end of its priority, its attempts at 0; resolves false if no
     * dead item has that id.
     * @param {string} id
     * @returns {Promise<boolean>}
     */
    requeueDead(id: string): Promise<boolean>;
    /**
     * Deletes a dead item; resolves false if no dead item has that id.
     * @param {string} id
     * @returns {Promise<boolean>}
     */
    deleteDead(id: string): Promise<boolean>;
    #private;
}
/**
 * `client.queue()`'s name and options, checked as the core checks them (throws INVALID_ARGUMENT).
 * @param {unknown} name
 * @param {unknown} options
 * @param {number} defaultTtl
 */
export function checkQueue(name: unknown, options: unknown, defaultTtl: number): {
    n: Buffer<ArrayBuffer>;
    ttl: number;
    maxAttempts: number;
    maxProcessing: number;
};
/**
 * The largest payload a task may have: 1536 KiB - 8 KiB (the core's `MAX_TASK_PAYLOAD_LEN`).
 * @type {number}
 */
export const MAX_TASK_PAYLOAD_LEN: number;
import type { Bytes } from './args.js';
import type { LostReason } from './lost.js';
import type { Health } from './health.js';
import { Fence } from "./fence.js";
