'use strict';
// Settings of the runtime that the whole process shares (every client, every worker thread):
// the caller spin, and closing every client at process exit.

const { isMainThread } = require('node:worker_threads');
const native = require('./addon.js');
const { invalid, fromNative } = require('./errors.js');

/** Bound on revoking this process's leases at exit (see README "Exit policy"). */
const EXIT_REVOKE_MS = 1000;

/**
 * How long the JS thread may keep polling its event loop, instead of sleeping in it, while it
 * waits for the library's reply, for every later call in this process, in milliseconds: off (0)
 * by default; `ETCDLOCK_SPIN_US` sets it in microseconds. With it, the runtime's workers also
 * linger for the next call. It saves the wake-up of a sleeping thread when a local etcd answers
 * quickly, for CPU: worth it on a host with idle cores, not on a busy one. It happens only while
 * at most two calls are pending and recent replies came within it. INVALID_ARGUMENT (and no
 * change) below 0 or above 10.
 * @param {number} ms
 */
function setCallerSpin(ms) {
  if (typeof ms !== 'number') throw invalid('the caller spin must be a number of milliseconds');
  try {
    native.setCallerSpin(ms * 1000);
  } catch (e) {
    throw fromNative(e);
  }
}

/** The caller spin in effect, in milliseconds (see setCallerSpin). @returns {number} */
function callerSpin() {
  return native.callerSpin() / 1000;
}

let exitHookInstalled = false;
/**
 * At process exit, close every client (revoking its leases, so locks it still holds are freed at
 * once instead of after their TTL), bounded by EXIT_REVOKE_MS. Main thread only: the runtime is
 * shared by the whole process, and a worker thread exiting must not stop it.
 */
function installExitHook() {
  if (exitHookInstalled || !isMainThread) return;
  exitHookInstalled = true;
  process.once('exit', () => native.shutdown(EXIT_REVOKE_MS));
}

module.exports = { setCallerSpin, callerSpin, installExitHook };
