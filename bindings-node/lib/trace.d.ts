/**
 * Runs `fn` (an acquire resolving to a Lock) in the `acquire` or `campaign` channel, then opens
 * the lock's `hold` or `lead`. Costs nothing more than `fn()` when nobody subscribes.
 * @template {{ fencingToken: bigint, onLost: (cb: (r: string) => void) => () => void }} L
 * @param {'acquire' | 'campaign'} kind
 * @param {Buffer} name
 * @param {() => Promise<L>} fn
 * @returns {Promise<L>}
 */
export function acquire<L extends {
    fencingToken: bigint;
    onLost: (cb: (r: string) => void) => () => void;
}>(kind: "acquire" | "campaign", name: Buffer, fn: () => Promise<L>): Promise<L>;
/**
 * Runs `fn` (a release) in the `release` channel and ends the lock's hold.
 * @param {{ fencingToken: bigint, key: Buffer, lostReason: () => string | null }} lock
 * @param {() => Promise<void>} fn
 * @returns {Promise<void>}
 */
export function release(lock: {
    fencingToken: bigint;
    key: Buffer;
    lostReason: () => string | null;
}, fn: () => Promise<void>): Promise<void>;
/** The channel names, for `diagnostics_channel.tracingChannel(name)`. */
export const names: Readonly<{
    acquire: "etcdlock:acquire";
    campaign: "etcdlock:campaign";
    hold: "etcdlock:hold";
    lead: "etcdlock:lead";
    release: "etcdlock:release";
}>;
