/**
 * Runs `fn` (an acquire resolving to a Lock, a PoolHolding or a LockSet) in the `acquire` or
 * `campaign` channel, then opens its `hold` or `lead`. `extra(held)` adds fields to both
 * contexts once acquired (a pool's `slots`). Costs nothing more than `fn()` when nobody
 * subscribes.
 * @template {{ fencingToken: bigint, onLost: (cb: (r: string) => void) => () => void }} L
 * @param {'acquire' | 'campaign'} kind
 * @param {Buffer | string} name
 * @param {() => Promise<L>} fn
 * @param {(held: L) => Record<string, any>} [extra]
 * @returns {Promise<L>}
 */
export function acquire<L extends {
    fencingToken: bigint;
    onLost: (cb: (r: string) => void) => () => void;
}>(kind: "acquire" | "campaign", name: Buffer | string, fn: () => Promise<L>, extra?: (held: L) => Record<string, any>): Promise<L>;
/**
 * Runs `fn` (a release) in the `release` channel and ends the lock's hold. A lock's name is
 * its key's without the last segment; a pool's holding or a lock set gives `name` (and
 * `extra` fields: a pool's `slots`).
 * @param {{ fencingToken: bigint, key?: Buffer, lostReason: () => string | null }} lock
 * @param {() => Promise<void>} fn
 * @param {string} [name]
 * @param {Record<string, any>} [extra]
 * @returns {Promise<void>}
 */
export function release(lock: {
    fencingToken: bigint;
    key?: Buffer;
    lostReason: () => string | null;
}, fn: () => Promise<void>, name?: string, extra?: Record<string, any>): Promise<void>;
/**
 * Runs `fn` (a claim, an ack, a registration) in the channel `kind` with the context `ctx`
 * (its `name` and what is known before the call); `done(ctx, result)` records a success's
 * outcome and attributes. A failure's outcome is `timeout` / `cancelled` / `error` for a wait
 * (`wait`), `cancelled` / `error` otherwise, with its code. Costs nothing more than `fn()` when
 * nobody subscribes.
 * @template T
 * @param {'taskClaim' | 'taskAck' | 'register'} kind
 * @param {boolean} wait
 * @param {() => Record<string, any>} makeCtx
 * @param {() => Promise<T>} fn
 * @param {(ctx: any, result: T) => void} done
 * @returns {Promise<T>}
 */
export function call<T>(kind: "taskClaim" | "taskAck" | "register", wait: boolean, makeCtx: () => Record<string, any>, fn: () => Promise<T>, done: (ctx: any, result: T) => void): Promise<T>;
/** The channel names, for `diagnostics_channel.tracingChannel(name)`. */
export const names: Readonly<{
    acquire: "etcdlock:acquire";
    campaign: "etcdlock:campaign";
    hold: "etcdlock:hold";
    lead: "etcdlock:lead";
    release: "etcdlock:release";
    taskClaim: "etcdlock:task.claim";
    taskAck: "etcdlock:task.ack";
    register: "etcdlock:register";
}>;
