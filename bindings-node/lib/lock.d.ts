/**
 * A held lock, from {@link Client#lock}. Release it with {@link Lock#release} (or `await using`).
 * A Lock that is dropped without release stays held until its client is closed or the process
 * exits: garbage collection never releases it behind your back.
 */
export class Lock {
    /**
     * Not constructed directly: {@link Client#lock} returns one (protected: {@link Leadership} is one too).
     * @protected
     * @param {any} nativeLock
     * @param {Client} client
     */
    protected constructor();
    /** The fencing token: strictly greater than every earlier holder's (create revision of the key). */
    get fencingToken(): bigint;
    /** This holder's queue key in etcd (`<name>/<lease hex>`). */
    get key(): Buffer<ArrayBuffer>;
    /** ID of the lease the key is attached to, shared by the client's locks with the same TTL. @type {bigint} */
    get leaseId(): bigint;
    /**
     * Cheap local check: not released, not lost, lease not past its conservative deadline.
     * @returns {boolean}
     */
    isHeld(): boolean;
    /** Why the lock was lost, or null. @returns {LostReason | null} */
    lostReason(): LostReason | null;
    /**
     * One call's view of the lock (`ok` while held and not in doubt): what a readiness probe
     * answers. Local reads only.
     * @returns {Health}
     */
    health(): Health;
    /**
     * Calls `cb(reason)` once, on the JS thread, when the lock is lost (not when it is released);
     * at once if it already is. Does not keep the process alive. Returns a function that removes `cb`.
     * @param {(reason: LostReason) => void} cb
     * @returns {() => void}
     */
    onLost(cb: (reason: LostReason) => void): () => void;
    /**
     * Releases the lock (fenced: deletes the key only if it is still this acquisition's).
     * Rejects with `NOT_HELD` if it was already released or lost.
     * @returns {Promise<void>}
     */
    release(): Promise<void>;
    /**
     * This acquisition's {@link Fence} (the lock's name, the fencing token and the etcd cluster's
     * ID; `String(fence)` to pass it on), for a database to check (`etcdlock/fencing`) or
     * {@link Client#checkFence}. Reads the cluster's ID on the client's first fence. Rejects
     * `NOT_HELD` once released or lost. A semaphore's permit or a read lock has one too, but they
     * are not exclusive: such a fence does not exclude other holders.
     * @returns {Promise<Fence>}
     */
    fence(): Promise<Fence>;
    /**
     * Writes `value` at `key` only if this lock is still held (atomically checked by etcd);
     * rejects with `NOT_HELD`, writing nothing, otherwise. Same as `client.put(key, value, { ifHeld: lock })`.
     * @param {Bytes} key
     * @param {Bytes} value
     * @param {{ lease?: Lease }} [options]
     * @returns {Promise<bigint>} the revision of the write
     */
    put(key: Bytes, value: Bytes, options?: {
        lease?: Lease;
    }): Promise<bigint>;
    /** `await using lock = await client.lock(...)` releases it (unless already released). */
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
import type { LostReason } from './lost.js';
import type { Health } from './health.js';
import { Fence } from "./fence.js";
import type { Bytes } from './args.js';
import type { Lease } from './lease.js';
