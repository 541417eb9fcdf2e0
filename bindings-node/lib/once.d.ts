/**
 * Options of {@link Client#once}.
 */
export type OnceOptions = {
    /**
     * the period in ms, at least 1000 (e.g. `3_600_000`: hourly)
     */
    every: number;
    /**
     * TTL in whole seconds of the lease the claim lives on, kept alive while the job runs (default 10): how long a dead winner's period stays claimed
     */
    ttl?: number;
    /**
     * the trigger time, a Date or ms since the epoch (default: now); the period boundary nearest to it is the slot
     */
    at?: Date | number;
    /**
     * how many periods a done mark is kept, at least 2 (default 3)
     */
    keepPeriods?: number;
};
/**
 * The period's slot, won by this trigger (from {@link Client#once}): run the job, then
 * {@link OnceSlot#done} (later triggers in the period do nothing), or {@link OnceSlot#release}
 * when it failed (the next trigger in the period runs it). The claim lives on this client's
 * lease (kept alive in the background): a winner that dies or is cut off loses it when etcd
 * ends the lease, and the next trigger runs the job. `await using slot = await client.once(...)`
 * marks it done at the end of the block unless it was done or released (release in a `catch`
 * when the job fails). Fenced writes: `client.put(key, value, { ifHeld: slot })` writes only
 * while the claim holds. Like a held lock, a slot that is dropped without either stays claimed
 * until its client is closed or the process exits: garbage collection never releases it.
 */
export class OnceSlot {
    /**
     * Not constructed directly: {@link Client#once} returns one.
     * @private
     * @param {any} nativeSlot
     * @param {Client} client
     */
    private constructor();
    /** The slot's index: its period boundary is `slot * every` ms after the epoch. @type {number} */
    get slot(): number;
    /** The claim key's create revision: larger for every later claim. @type {bigint} */
    get fencingToken(): bigint;
    /**
     * Cheap local check: neither done nor released, and not known to be lost.
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
     * Calls `cb(reason)` once, on the JS thread, when the claim is lost while the job runs
     * (another trigger may run the job now; not when it is done or released); at once if it
     * already is. Does not keep the process alive. Returns a function that removes `cb`.
     * @param {(reason: LostReason) => void} cb
     * @returns {() => void}
     */
    onLost(cb: (reason: LostReason) => void): () => void;
    /**
     * The period's job is done: marks it done (later triggers in the period resolve null) and
     * ends the claim, in one transaction that applies only while the claim holds. Rejects
     * `NOT_HELD`, marking nothing, if the claim was lost (the next trigger runs the job) or the
     * slot was already done or released.
     * @returns {Promise<void>}
     */
    done(): Promise<void>;
    /**
     * The job failed: ends the claim without marking the period done, so the next trigger in the
     * period runs the job. Rejects `NOT_HELD` if the claim was lost or already ended.
     * @returns {Promise<void>}
     */
    release(): Promise<void>;
    /** `await using slot = await client.once(...)` marks the period done at the end of the block, unless done or released already. */
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
/**
 * `client.once()`'s name and options, checked as the core checks them (throws INVALID_ARGUMENT).
 * @param {unknown} name
 * @param {unknown} options
 * @param {number} defaultTtl
 */
export function checkOnce(name: unknown, options: unknown, defaultTtl: number): {
    n: Buffer<ArrayBuffer>;
    every: number;
    ttl: number;
    at: number;
    keepPeriods: number;
};
import type { LostReason } from './lost.js';
import type { Health } from './health.js';
