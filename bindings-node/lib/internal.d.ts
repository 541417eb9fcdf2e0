export = internal;
/** @import { Client } from './client.js' */
/** @import { Lock } from './lock.js' */
/** @import { Lease } from './lease.js' */
/** @import { Registration } from './registration.js' */
/** @import { Task } from './tasks.js' */
/** @import { OnceSlot } from './once.js' */
/** @import { PoolHolding } from './pool.js' */
/** @import { LockSet } from './lockset.js' */
/**
 * @typedef {object} Internal
 * @property {(client: Client, obj: object) => void} forget set by Client: `obj` (released, revoked, closed, done) is no longer the client's to keep
 * @property {(client: Client, obj: object, held: { release(): Promise<void> }) => Promise<void>} releaseNative set by Client: releases `held` (the native handle of `obj`: a lock, a lock set, a pool holding), with the library's errors, and forgets `obj` whatever the outcome
 * @property {(client: Client, obj: object) => void} own set by Client: `obj` (a claimed task) is the client's to keep reachable
 * @property {(client: Client) => Promise<any>} clientNative set by Client: its native client once connected (rejects `CLOSED` once closed)
 * @property {(client: Client) => any[]} metricItems set by Client: its native metric items (zeros before the connection)
 * @property {<L extends Lock>(client: Client, signal: AbortSignal | undefined, start: (c: any, token: any) => Promise<any>, wrap: (n: any) => L) => Promise<L>} acquireWith set by Client: any acquire
 * @property {(lock: Lock) => any} lockNative set by Lock: its native lock
 * @property {(lease: Lease) => any} leaseNative set by Lease: its native lease
 * @property {(task: Task) => any} taskNative set by Task: its native task
 * @property {(slot: OnceSlot) => any} onceNative set by OnceSlot: its native slot
 * @property {(held: PoolHolding) => any} holdingNative set by PoolHolding: its native holding
 * @property {(set: LockSet) => any} lockSetNative set by LockSet: its native set
 * @property {(held: PoolHolding, pool: Buffer, token: bigint) => boolean} holdingOf set by PoolHolding: whether it is the acquisition `token` of the pool named `pool`
 * @property {(client: Client, pred: (obj: object) => boolean) => any} findOwned set by Client: the first object it keeps that `pred` accepts, or undefined
 * @property {(reg: Registration) => void} registrationEnded set by Registration: its client closed
 */
/** @type {Internal} */
declare const internal: Internal;
declare namespace internal {
    export { Internal };
}
type Internal = {
    /**
     * set by Client: `obj` (released, revoked, closed, done) is no longer the client's to keep
     */
    forget: (client: Client, obj: object) => void;
    /**
     * set by Client: releases `held` (the native handle of `obj`: a lock, a lock set, a pool holding), with the library's errors, and forgets `obj` whatever the outcome
     */
    releaseNative: (client: Client, obj: object, held: {
        release(): Promise<void>;
    }) => Promise<void>;
    /**
     * set by Client: `obj` (a claimed task) is the client's to keep reachable
     */
    own: (client: Client, obj: object) => void;
    /**
     * set by Client: its native client once connected (rejects `CLOSED` once closed)
     */
    clientNative: (client: Client) => Promise<any>;
    /**
     * set by Client: its native metric items (zeros before the connection)
     */
    metricItems: (client: Client) => any[];
    /**
     * set by Client: any acquire
     */
    acquireWith: <L extends Lock>(client: Client, signal: AbortSignal | undefined, start: (c: any, token: any) => Promise<any>, wrap: (n: any) => L) => Promise<L>;
    /**
     * set by Lock: its native lock
     */
    lockNative: (lock: Lock) => any;
    /**
     * set by Lease: its native lease
     */
    leaseNative: (lease: Lease) => any;
    /**
     * set by Task: its native task
     */
    taskNative: (task: Task) => any;
    /**
     * set by OnceSlot: its native slot
     */
    onceNative: (slot: OnceSlot) => any;
    /**
     * set by PoolHolding: its native holding
     */
    holdingNative: (held: PoolHolding) => any;
    /**
     * set by LockSet: its native set
     */
    lockSetNative: (set: LockSet) => any;
    /**
     * set by PoolHolding: whether it is the acquisition `token` of the pool named `pool`
     */
    holdingOf: (held: PoolHolding, pool: Buffer, token: bigint) => boolean;
    /**
     * set by Client: the first object it keeps that `pred` accepts, or undefined
     */
    findOwned: (client: Client, pred: (obj: object) => boolean) => any;
    /**
     * set by Registration: its client closed
     */
    registrationEnded: (reg: Registration) => void;
};
import type { Client } from './client.js';
import type { Lock } from './lock.js';
import type { Lease } from './lease.js';
import type { Task } from './tasks.js';
import type { OnceSlot } from './once.js';
import type { PoolHolding } from './pool.js';
import type { LockSet } from './lockset.js';
import type { Registration } from './registration.js';
