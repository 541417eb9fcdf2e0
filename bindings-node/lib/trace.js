'use strict';
// Spans on diagnostics_channel's TracingChannel: `etcdlock:acquire` and `etcdlock:campaign`
// around an acquire (the wait included), `etcdlock:hold` and `etcdlock:lead` from acquisition
// to release or loss, `etcdlock:release` around a release, `etcdlock:task.claim` around a task
// queue's claim (the wait included), `etcdlock:task.ack` around an ack, `etcdlock:register`
// around a registration. The same names and outcomes as the core's `tracing` spans
// (etcdlock.acquire, ...). Each publishes one context object per operation on the channel's
// start, end, asyncStart, asyncEnd (and error) events:
//   { name, fencingToken, outcome, errorCode, lostReason }  (a task's spans: also taskId)
// A pool's acquire, hold and release are on etcdlock:acquire, etcdlock:hold and etcdlock:release
// too, named by the pool, with `slots` (the slot ids held, comma-joined); a lock set's are named
// by its members' names, comma-joined.
// Nothing is built or published while a channel has no subscribers (`hasSubscribers`).

const dc = require('node:diagnostics_channel');

const channels = {
  acquire: dc.tracingChannel('etcdlock:acquire'),
  campaign: dc.tracingChannel('etcdlock:campaign'),
  hold: dc.tracingChannel('etcdlock:hold'),
  lead: dc.tracingChannel('etcdlock:lead'),
  release: dc.tracingChannel('etcdlock:release'),
  taskClaim: dc.tracingChannel('etcdlock:task.claim'),
  taskAck: dc.tracingChannel('etcdlock:task.ack'),
  register: dc.tracingChannel('etcdlock:register'),
};

/** @param {any} ch */
function active(ch) {
  if (typeof ch.hasSubscribers === 'boolean') return ch.hasSubscribers;
  return ch.start.hasSubscribers || ch.end.hasSubscribers || ch.asyncStart.hasSubscribers || ch.asyncEnd.hasSubscribers || ch.error.hasSubscribers;
}

/** The outcome of a failed wait (as the core's spans say it). @param {any} e */
function failedWait(e) {
  const code = e && e.code;
  if (code === 'LOCK_TIMEOUT' || code === 'WOULD_BLOCK') return 'timeout';
  if (code === 'ABORT_ERR' || code === 'CANCELLED') return 'cancelled';
  return 'error';
}

/** The outcome of a failed call that is not a wait. @param {any} e */
function failedCall(e) {
  const code = e && e.code;
  return code === 'ABORT_ERR' || code === 'CANCELLED' ? 'cancelled' : 'error';
}

/** @param {any} e */
function codeOf(e) {
  return e && typeof e.code === 'string' ? e.code : 'INTERNAL';
}

/**
 * Which hold or leadership each traced lock has open: its context and how to stop listening
 * for its loss.
 * @type {WeakMap<object, { ch: any, ctx: any, stop: () => void }>}
 */
const holds = new WeakMap();

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
function acquire(kind, name, fn, extra) {
  const wait = channels[kind];
  const holdCh = kind === 'acquire' ? channels.hold : channels.lead;
  const [tracingWait, tracingHold] = [active(wait), active(holdCh)];
  if (!tracingWait && !tracingHold) return fn();
  const text = name.toString();
  /** @type {any} */ const ctx = { name: text, fencingToken: undefined, outcome: undefined, errorCode: undefined };
  const run = async () => {
    try {
      const lock = await fn();
      ctx.outcome = 'acquired';
      ctx.fencingToken = lock.fencingToken;
      const more = extra ? extra(lock) : {};
      Object.assign(ctx, more);
      if (tracingHold && !holds.has(lock)) beginHold(holdCh, text, lock, more);
      return lock;
    } catch (e) {
      ctx.outcome = failedWait(e);
      ctx.errorCode = codeOf(e);
      throw e;
    }
  };
  return tracingWait ? wait.tracePromise(run, ctx) : run();
}

/** @param {any} ch @param {string} name @param {any} lock @param {Record<string, any>} more */
function beginHold(ch, name, lock, more) {
  const ctx = { name, fencingToken: lock.fencingToken, outcome: undefined, errorCode: undefined, lostReason: undefined, ...more };
  ch.start.publish(ctx);
  ch.end.publish(ctx);
  const entry = { ch, ctx, stop: () => {} };
  holds.set(lock, entry);
  entry.stop = lock.onLost((/** @type {string} */ reason) => endHold(lock, 'lost', reason));
}

/**
 * Ends `lock`'s hold (if it is traced and still open): `released` or `lost`.
 * @param {object} lock
 * @param {'released' | 'lost'} outcome
 * @param {string} [reason]
 */
function endHold(lock, outcome, reason) {
  const entry = holds.get(lock);
  if (!entry) return;
  holds.delete(lock);
  entry.stop();
  const { ch, ctx } = entry;
  ctx.outcome = outcome;
  if (outcome === 'lost') {
    ctx.errorCode = 'LOCK_LOST';
    ctx.lostReason = reason;
  }
  ch.asyncStart.publish(ctx);
  ch.asyncEnd.publish(ctx);
}

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
function release(lock, fn, name, extra) {
  const traced = holds.has(lock);
  if (traced) {
    const reason = lock.lostReason();
    endHold(lock, reason === null ? 'released' : 'lost', reason ?? undefined);
  }
  if (!active(channels.release)) return fn();
  if (name === undefined) {
    const key = /** @type {Buffer} */ (lock.key);
    name = key.subarray(0, key.lastIndexOf(0x2f)).toString();
  }
  const ctx = { name, fencingToken: lock.fencingToken, outcome: /** @type {string | undefined} */ (undefined), errorCode: /** @type {string | undefined} */ (undefined), ...extra };
  return channels.release.tracePromise(async () => {
    try {
      await fn();
      ctx.outcome = 'released';
    } catch (e) {
      ctx.outcome = 'error';
      ctx.errorCode = codeOf(e);
      throw e;
    }
  }, ctx);
}

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
function call(kind, wait, makeCtx, fn, done) {
  const ch = channels[kind];
  if (!active(ch)) return fn();
  /** @type {any} */ const ctx = { fencingToken: undefined, outcome: undefined, errorCode: undefined, ...makeCtx() };
  return ch.tracePromise(async () => {
    try {
      const r = await fn();
      done(ctx, r);
      return r;
    } catch (e) {
      ctx.outcome = wait ? failedWait(e) : failedCall(e);
      ctx.errorCode = codeOf(e);
      throw e;
    }
  }, ctx);
}

/** The channel names, for `diagnostics_channel.tracingChannel(name)`. */
const names = Object.freeze({
  acquire: 'etcdlock:acquire',
  campaign: 'etcdlock:campaign',
  hold: 'etcdlock:hold',
  lead: 'etcdlock:lead',
  release: 'etcdlock:release',
  taskClaim: 'etcdlock:task.claim',
  taskAck: 'etcdlock:task.ack',
  register: 'etcdlock:register',
});

module.exports = { acquire, release, call, names };
