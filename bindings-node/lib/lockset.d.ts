/**
 * How a lock set holds one name: alone (`'exclusive'`, as `client.lock()`), as a read-write
 * lock's reader or writer, or one permit of a semaphore (`'permit'`).
 */
export type SetMode = "exclusive" | "read" | "write" | "permit";
/**
 * One member given to {@link Client#lockSet}: a name (held exclusively), `{ name, mode }`, or
 * `{ name, permits }` (one of the `permits` of the semaphore `name`).
 */
export type SetMemberSpec = Bytes | {
    name: Bytes;
    mode?: "exclusive" | "read" | "write";
} | {
    name: Bytes;
    permits: number;
    mode?: "permit";
};
/**
 * One member of a held set, as given (a plain name is `'exclusive'`).
 */
export type SetMember = {
    name: Buffer;
    mode: SetMode;
    /**
     * for `'permit'`: the semaphore's count
     */
    permits?: number;
};
/**
 * Options of {@link Client#lockSet}.
 */
export type LockSetOptions = {
    /**
     * TTL in whole seconds of the lease every member's key is on (default 10)
     */
    ttl?: number;
    /**
     * ms to wait for the whole set; 0 = try once (`WOULD_BLOCK` if a member is held or has waiters); omitted = forever
     */
    timeout?: number;
    /**
     * aborting rejects with an AbortError and leaves no key in any queue
     */
    signal?: AbortSignal;
    /**
     * stored in every member's queue key for `inspect()` to show; at most 4096 bytes
     */
    value?: Bytes;
};
/**
 * A held lock set, from {@link Client#lockSet}: every member held, with one fencing token.
 * Release it with {@link LockSet#release} (or `await using`): one transaction releases every
 * member. Fenced writes: `client.put(key, value, { ifHeld: locks })` commits only while every
 * member is still this set's. Like a held lock, a set that is dropped without release stays
 * held until its client is closed or the process exits.
 */
export class LockSet {
    /**
     * Not constructed directly: {@link Client#lockSet} returns one.
     * @private
     * @param {any} nativeSet
     * @param {Client} client
     * @param {SetMember[]} members
     */
    private constructor();
    /** The set's fencing token: the create revision every member's key shares, larger than every earlier holder's token of each name. @type {bigint} */
    get fencingToken(): bigint;
    /** The members' names, in the order given (new Buffers each time). @type {Buffer[]} */
    get names(): Buffer[];
    /** The members, in the order given (new objects each time). @type {SetMember[]} */
    get members(): SetMember[];
    /** Each member's queue key in etcd (`<name>/<lease hex>[-n]`), in the set's order. @type {Buffer[]} */
    get keys(): Buffer[];
    /** ID of the lease every member's key is on (the client's shared lease for the set's TTL). @type {bigint} */
    get leaseId(): bigint;
    /**
     * Cheap local check: not released, and no member known to be lost.
     * @returns {boolean}
     */
    isHeld(): boolean;
    /** Why the set was lost (its first member lost), or null. @returns {LostReason | null} */
    lostReason(): LostReason | null;
    /**
     * One call's view of the set (`ok` while held and not in doubt): what a readiness probe
     * answers. Local reads only.
     * @returns {Health}
     */
    health(): Health;
    /**
     * Calls `cb(reason)` once, on the JS thread, when a member is lost (not when the set is
     * released); at once if it already is. Does not keep the process alive. Returns a function
     * that removes `cb`.
     * @param {(reason: LostReason) => void} cb
     * @returns {() => void}
     */
    onLost(cb: (reason: LostReason) => void): () => void;
    /**
     * Releases every member in one transaction (each key deleted only if it is still this
     * set's). Rejects `NOT_HELD` if it was already released, or a member was lost (the other
     * keys are deleted anyway).
     * @returns {Promise<void>}
     */
    release(): Promise<void>;
    /**
     * Writes `value` at `key` only while every member is held (checked by etcd in the same
     * transaction); rejects `NOT_HELD`, writing nothing, otherwise. Same as
     * `client.put(key, value, { ifHeld: locks })`.
     * @param {Bytes} key
     * @param {Bytes} value
     * @param {{ lease?: Lease }} [options]
     * @returns {Promise<bigint>} the revision of the write
     */
    put(key: Bytes, value: Bytes, options?: {
        lease?: Lease;
    }): Promise<bigint>;
    /**
     * Member `name`'s {@link Fence} at the set's token (its queue key's create revision,
     * `fencingToken`), for a database to check (`etcdlock/fencing`; each member has its own mark)
     * or {@link Client#checkFence}. Rejects `NOT_HELD` once released or lost (as a lock's
     * `fence()`), `INVALID_ARGUMENT` if `name` is not a member. A read or permit member has one
     * too, but is not exclusive: its fence does not exclude other holders.
     * @param {Bytes} name
     * @returns {Promise<Fence>}
     */
    fence(name: Bytes): Promise<Fence>;
    /** `await using locks = await client.lockSet(...)` releases it (unless already released). */
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
/**
 * `lockSet()`'s members, checked for their types (INVALID_ARGUMENT otherwise).
 * @param {unknown} v
 * @returns {SetMember[]}
 */
export function toMembers(v: unknown): SetMember[];
/**
 * The most names a lock set may have (64, the core's `MAX_LOCK_SET`).
 * @type {number}
 */
export const MAX_LOCK_SET: number;
import type { Bytes } from './args.js';
import type { LostReason } from './lost.js';
import type { Health } from './health.js';
import type { Lease } from './lease.js';
import { Fence } from "./fence.js";
