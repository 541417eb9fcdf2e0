'use strict';
// Access between the modules to what is not public: each function is set by a static block of
// the class whose private fields it reads (static blocks may), when that class is defined, so
// that no public method or property exposes them.

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
const internal = /** @type {any} */ ({});

module.exports = internal;
