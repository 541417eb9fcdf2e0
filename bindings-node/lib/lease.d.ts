/**
 * A lease from {@link Client#lease}, kept alive in the background until revoked, lost, or its
 * client is closed. Dropping the object does not revoke it.
 */
export class Lease {
    /**
     * Not constructed directly: {@link Client#lease} returns one.
     * @private
     * @param {any} nativeLease
     * @param {Client} client
     */
    private constructor();
    /** The lease ID. */
    get id(): bigint;
    /** The TTL etcd granted, in seconds. @type {number} */
    get ttl(): number;
    /**
     * Cheap local check: not lost and not past its conservative local deadline.
     * @returns {boolean}
     */
    isAlive(): boolean;
    /**
     * Milliseconds left before the conservative local deadline (0 once lost).
     * @returns {number}
     */
    remaining(): number;
    /** Why the lease was lost, or null. @returns {LostReason | null} */
    lostReason(): LostReason | null;
    /**
     * Calls `cb(reason)` once, on the JS thread, when the lease is lost ('revoked' after
     * {@link Lease#revoke}). Does not keep the process alive. Returns a function that removes `cb`.
     * @param {(reason: LostReason) => void} cb
     * @returns {() => void}
     */
    onLost(cb: (reason: LostReason) => void): () => void;
    /**
     * Revokes the lease, deleting every key attached to it. Idempotent.
     * @returns {Promise<void>}
     */
    revoke(): Promise<void>;
    /** `await using lease = await client.lease(10)` revokes it. */
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
export function checkLease(v: any): Lease;
import type { LostReason } from './lost.js';
