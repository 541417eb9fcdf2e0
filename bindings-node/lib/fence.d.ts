/**
 * What holds, for `client.checkFence` to look for: `'q'`, a key of a lock's queue (a lock, a
 * write lock, a leadership, a task's claim; a semaphore's permit or a read lock has one too, but
 * they are not exclusive); `'k'`, a single key (a pool's slot).
 */
export type FenceKind = "q" | "k";
/**
 * What holds, for `client.checkFence` to look for: `'q'`, a key of a lock's queue (a lock, a
 * write lock, a leadership, a task's claim; a semaphore's permit or a read lock has one too, but
 * they are not exclusive); `'k'`, a single key (a pool's slot).
 * @typedef {'q' | 'k'} FenceKind
 */
/**
 * An acquisition, as a database or another service checks it: the lock's name, the
 * acquisition's fencing token and the etcd cluster's ID. From `await lock.fence()` (or a claimed
 * task's); `String(fence)` is its stable string form (for a request header, an environment
 * variable, another language's etcdlock), {@link Fence.parse} reads it back. Immutable.
 */
export class Fence {
    /**
     * Reads a fence's string form (a Fence is returned as it is); `INVALID_ARGUMENT` if `s` is none.
     * @param {string | Fence} s
     * @returns {Fence}
     */
    static parse(s: string | Fence): Fence;
    /**
     * @param {FenceKind} kind
     * @param {Uint8Array | string} name the lock's name (bytes, or a string as UTF-8)
     * @param {bigint | number} token the fencing token (> 0)
     * @param {bigint | number} cluster the etcd cluster's ID (0 to 2^64 - 1)
     */
    constructor(kind: FenceKind, name: Uint8Array | string, token: bigint | number, cluster: bigint | number);
    /** @readonly @type {FenceKind} */
    readonly kind: FenceKind;
    /** The lock's name (for kind `'k'`, the key). A copy: changing it changes no fence. @readonly @type {Buffer} */
    readonly name: Buffer;
    /** The acquisition's fencing token: larger for every later acquisition of the name. @readonly @type {bigint} */
    readonly token: bigint;
    /** The etcd cluster's ID (tokens of two clusters are not comparable). @readonly @type {bigint} */
    readonly cluster: bigint;
    /** The default resource a database's mark is kept for: the lock's name, as UTF-8. @type {string} */
    get resource(): string;
    /** The fence's string form. @returns {string} */
    toString(): string;
    /** `JSON.stringify` writes the string form. @returns {string} */
    toJSON(): string;
    /**
     * Whether `other` names the same acquisition.
     * @param {Fence} other
     * @returns {boolean}
     */
    equals(other: Fence): boolean;
}
/**
 * The database refused a fence: a newer holder of the lock has written (or the fence is of
 * another etcd cluster). Nothing the transaction writes may commit: roll it back. Its `code` is
 * `NOT_HELD`, as for any write of a holder that no longer holds.
 */
export class StaleFence extends EtcdlockError {
    /** @param {string} message */
    constructor(message: string);
}
import { EtcdlockError } from "./errors.js";
