/**
 * Options of {@link Client#pool}: `slots` or `size`, not both.
 */
export type PoolOptions = {
    /**
     * the slot ids (1 to 1024, each 1 to 128 bytes without `/` or a newline, no duplicates); every participant must give the same
     */
    slots?: string[];
    /**
     * instead of `slots`: this many slots, named `'0'` to `String(size - 1)`
     */
    size?: number;
    /**
     * TTL in whole seconds of the lease the slots are held on, kept alive while held (default 10): how long a dead holder keeps its slots
     */
    ttl?: number;
    /**
     * ms a slot whose holder died rests before it is handed out again (timed by an etcd lease: whole seconds, rounded up, at least etcd's minimum TTL unless 0); default 0: at once. Every participant must give the same
     */
    reuseDelay?: number;
};
/**
 * Options of {@link Pool#acquire}.
 */
export type PoolAcquireOptions = {
    /**
     * slots to take at once, 1 to the pool's size (at most 30; default 1)
     */
    count?: number;
    /**
     * with an owner, an acquire while this client has a live holding acquired with the same owner from this pool resolves to that holding instead of taking more (a retried call gets what it has); stored in the slot keys for `slots()` to show; at most 4096 bytes
     */
    owner?: string;
    /**
     * ms to wait; 0 = try once (`WOULD_BLOCK` if the slots are not free now); omitted = forever
     */
    timeout?: number;
    /**
     * aborting rejects with an AbortError and leaves nothing behind
     */
    signal?: AbortSignal;
};
/**
 * One slot of a pool as etcd has it (from {@link Pool#slots}).
 */
export type SlotInfo = {
    id: string;
    /**
     * `free`: can be handed out now; `held`;
     * `resting`: its holder died and it rests the reuse delay; `dead`: its holder died and no
     * request has seen it yet (it rests the reuse delay first)
     */
    state: "free" | "held" | "resting" | "dead";
    /**
     * held: the slot's fencing token
     */
    token: bigint | null;
    /**
     * held: the holder's lease; resting: the lease it rests on
     */
    lease: bigint | null;
    /**
     * seconds that lease has left (null: gone, or free or dead)
     */
    ttl: number | null;
    /**
     * held: the acquisition's fencing token
     */
    acquisition: bigint | null;
    /**
     * held: the acquisition's `owner` (null without one)
     */
    owner: string | null;
};
/**
 * The pool `name`, from {@link Client#pool}: named slots (worker ids, devices, test clusters)
 * that are never handed out to two holders at once. Requests are served in the order etcd
 * committed them; a request for `count` slots waits at the head until that many are free, and
 * later requests wait behind it. The first acquire stores the definition (the slot ids and the
 * reuse delay) if the pool has none; one that gives another rejects `INVALID_ARGUMENT`. Creating
 * it sends nothing.
 */
export class Pool {
    /**
     * Not constructed directly: {@link Client#pool} returns one.
     * @private
     * @param {Client} client
     * @param {{ n: Buffer, slots: string[] | undefined, size: number | undefined, ttl: number, reuseDelay: number }} checked
     */
    private constructor();
    /** The pool's name. @type {Buffer} */
    get name(): Buffer;
    /**
     * Takes `count` slots; resolves to the {@link PoolHolding} once they are this caller's.
     * Rejects `LOCK_TIMEOUT` (timeout passed), `WOULD_BLOCK` (timeout 0 and not free now), an
     * AbortError (signal aborted), `INVALID_ARGUMENT` (a bad count or owner, or a definition that
     * is not the stored one: the message says how to change it), `CLOSED`; nothing is left behind
     * in any of these cases (a holding that completes as the signal fires is released).
     * @param {PoolAcquireOptions} [options]
     * @returns {Promise<PoolHolding>}
     */
    acquire(options?: PoolAcquireOptions): Promise<PoolHolding>;
    /**
     * Adds slots (ids not in the pool yet); resolves to the pool's slots after. Waiting requests
     * see them at once. Rejects `INVALID_ARGUMENT` for an id already in the pool, a bad id, or a
     * pool not defined yet (acquire from it once first).
     * @param {string[]} ids
     * @returns {Promise<string[]>}
     */
    addSlots(ids: string[]): Promise<string[]>;
    /**
     * Removes slots; resolves to the pool's slots after. A held slot goes when its holder
     * releases it (it is not handed out meanwhile). Rejects `INVALID_ARGUMENT` for an id not in
     * the pool, or if no slot would be left.
     * @param {string[]} ids
     * @returns {Promise<string[]>}
     */
    removeSlots(ids: string[]): Promise<string[]>;
    /**
     * Every slot of the pool as etcd has it now, in the pool's order: free, held (by which
     * acquisition and owner, its token, its lease's seconds left) or resting. Empty while the
     * pool is not defined (no acquire yet). Changes nothing.
     * @returns {Promise<SlotInfo[]>}
     */
    slots(): Promise<SlotInfo[]>;
    #private;
}
/**
 * Options of {@link Client#pool}: `slots` or `size`, not both.
 * @typedef {object} PoolOptions
 * @property {string[]} [slots] the slot ids (1 to 1024, each 1 to 128 bytes without `/` or a newline, no duplicates); every participant must give the same
 * @property {number} [size] instead of `slots`: this many slots, named `'0'` to `String(size - 1)`
 * @property {number} [ttl] TTL in whole seconds of the lease the slots are held on, kept alive while held (default 10): how long a dead holder keeps its slots
 * @property {number} [reuseDelay] ms a slot whose holder died rests before it is handed out again (timed by an etcd lease: whole seconds, rounded up, at least etcd's minimum TTL unless 0); default 0: at once. Every participant must give the same
 */
/**
 * Options of {@link Pool#acquire}.
 * @typedef {object} PoolAcquireOptions
 * @property {number} [count] slots to take at once, 1 to the pool's size (at most 30; default 1)
 * @property {string} [owner] with an owner, an acquire while this client has a live holding acquired with the same owner from this pool resolves to that holding instead of taking more (a retried call gets what it has); stored in the slot keys for `slots()` to show; at most 4096 bytes
 * @property {number} [timeout] ms to wait; 0 = try once (`WOULD_BLOCK` if the slots are not free now); omitted = forever
 * @property {AbortSignal} [signal] aborting rejects with an AbortError and leaves nothing behind
 */
/**
 * One slot of a pool as etcd has it (from {@link Pool#slots}).
 * @typedef {object} SlotInfo
 * @property {string} id
 * @property {'free' | 'held' | 'resting' | 'dead'} state `free`: can be handed out now; `held`;
 *   `resting`: its holder died and it rests the reuse delay; `dead`: its holder died and no
 *   request has seen it yet (it rests the reuse delay first)
 * @property {bigint | null} token held: the slot's fencing token
 * @property {bigint | null} lease held: the holder's lease; resting: the lease it rests on
 * @property {number | null} ttl seconds that lease has left (null: gone, or free or dead)
 * @property {bigint | null} acquisition held: the acquisition's fencing token
 * @property {string | null} owner held: the acquisition's `owner` (null without one)
 */
/**
 * Slots held from a pool, from {@link Pool#acquire}: each slot is nobody else's while this
 * holding lives. Release it with {@link PoolHolding#release} (or `await using`): every slot is
 * free for the next request at once. Fenced writes: `client.put(key, value, { ifHeld: held })`.
 * Like a held lock, a holding that is dropped without release stays held until its client is
 * closed or the process exits: garbage collection never releases it behind your back. A close
 * or exit ends it by revoking its lease, which the pool counts as a death: its slots then rest
 * the reuse delay (a release frees them at once).
 */
export class PoolHolding {
    /**
     * Not constructed directly: {@link Pool#acquire} returns one.
     * @private
     * @param {any} nativeHolding
     * @param {Client} client
     * @param {Buffer} pool
     */
    private constructor();
    /** The slot ids held, in the pool's order (a new array each time). @type {string[]} */
    get slots(): string[];
    /**
     * Each slot's fencing token (its key's create revision: larger for every later holder of
     * that slot), as an object slot id → token (a new object each time).
     * @type {Record<string, bigint>}
     */
    get tokens(): Record<string, bigint>;
    /** The acquisition's fencing token: larger for every later acquisition from this pool. @type {bigint} */
    get fencingToken(): bigint;
    /** The `owner` it was acquired with, or null. @type {string | null} */
    get owner(): string | null;
    /** ID of the lease the slots are held on (this client's shared lease for the pool's TTL). @type {bigint} */
    get leaseId(): bigint;
    /**
     * Cheap local check: not released, and not known to be lost.
     * @returns {boolean}
     */
    isHeld(): boolean;
    /** Why the holding was lost, or null. @returns {LostReason | null} */
    lostReason(): LostReason | null;
    /**
     * One call's view of the holding (`ok` while held and not in doubt): what a readiness probe
     * answers. Local reads only.
     * @returns {Health}
     */
    health(): Health;
    /**
     * Calls `cb(reason)` once, on the JS thread, when the holding is lost (its lease ended: stop
     * using the slots; not when it is released); at once if it already is. Does not keep the
     * process alive. Returns a function that removes `cb`.
     * @param {(reason: LostReason) => void} cb
     * @returns {() => void}
     */
    onLost(cb: (reason: LostReason) => void): () => void;
    /**
     * Gives every slot back at once (each free for the next request), in one transaction that
     * applies only while they are this holding's. Rejects `NOT_HELD` if it was already released
     * or lost.
     * @returns {Promise<void>}
     */
    release(): Promise<void>;
    /**
     * The {@link Fence} of slot `slot` of this holding (kind `'k'`: the slot's key
     * `<pool>/slot/<id>` at the slot's token, `tokens[slot]`), for a database to check
     * (`etcdlock/fencing`; each slot has its own mark) or {@link Client#checkFence}. Rejects
     * `INVALID_ARGUMENT` for a slot this holding does not hold. After the release it still
     * resolves, to a fence that no longer checks.
     * @param {string} slot
     * @returns {Promise<Fence>}
     */
    fence(slot: string): Promise<Fence>;
    /** `await using held = await pool.acquire()` releases it at the end of the block (unless already released). */
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
/**
 * `client.pool()`'s name and options, checked as the core checks them (throws INVALID_ARGUMENT).
 * @param {unknown} name
 * @param {unknown} options
 */
export function checkPool(name: unknown, options: unknown): {
    n: Buffer<ArrayBuffer>;
    slots: any[];
    size: number;
    ttl: number;
    reuseDelay: number;
};
/**
 * The most slots a pool may have (1024, the core's `MAX_POOL_SLOTS`).
 * @type {number}
 */
export const MAX_POOL_SLOTS: number;
/**
 * The most slots one acquire may take (30, the core's `MAX_POOL_COUNT`).
 * @type {number}
 */
export const MAX_POOL_COUNT: number;
import type { LostReason } from './lost.js';
import type { Health } from './health.js';
import { Fence } from "./fence.js";
