'use strict';
// `health()`: one call's view of a hold, for health endpoints and readiness probes.

/** @import { LostReason } from './lost.js' */

/**
 * One call's view of a hold: what `health()` of a {@link Lock} (a semaphore's permit, a read or
 * write, a {@link Leadership}), a lock set, a pool holding, a task or a once-per-period slot
 * returns. Taken by the core from the very state its lost signal is set from, so once `onLost`
 * fired, `ok` is false. Local reads only; nothing is sent to etcd. A readiness probe answers
 * 200 while `ok` and 503 otherwise.
 * @typedef {object} Health
 * @property {'held' | 'lost' | 'released' | 'idle'} state `held` (for a leadership: leading),
 *   `lost`, or `released` (ended by this process: released, resigned, acked, done)
 * @property {LostReason | null} lostReason why it was lost, when `state` is `lost`
 * @property {string} name the lock's name (a lock set's member names joined by `,`; a task's
 *   claim lock `<queue>/claim/<slot>`; a period's `<job>/slot/<n>`)
 * @property {bigint} fencingToken the hold's fencing token
 * @property {bigint} leaseId the lease the hold lives on
 * @property {number | null} exclusiveForMs milliseconds, from when the view was taken, that no
 *   other client can hold it; null when another may hold it already or it was released
 * @property {boolean} ok safe to act as the holder now: held, and its exclusivity not in doubt
 */

/**
 * The frozen plain object of a native view.
 * @param {any} n
 * @returns {Health}
 */
function toHealth(n) {
  return Object.freeze({
    state: n.state,
    lostReason: n.lostReason ?? null,
    name: n.name,
    fencingToken: n.fencingToken,
    leaseId: n.leaseId,
    exclusiveForMs: n.exclusiveForMs ?? null,
    ok: n.ok,
  });
}

module.exports = { toHealth };
