'use strict';
// Spans on diagnostics_channel's TracingChannel (lib/trace.js): etcdlock:acquire around an
// acquire, etcdlock:hold from acquisition to release or loss, etcdlock:release around a release
// (etcdlock:campaign and etcdlock:lead for an election), each with one context object carrying
// the name, the fencing token, the outcome and the error code.
const test = require('node:test');
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const { ENDPOINTS, prefix, etcdctl, waitFor } = require('./helpers');
const { Client, traceChannels } = require('..');

/**
 * Subscribes to every event of the channel `name` until the test ends; returns what it saw,
 * as [event, context] pairs (the context as it was when the event was published).
 * @param {import('node:test').TestContext} t
 * @param {string} name
 */
function record(t, name) {
  /** @type {[string, any][]} */
  const seen = [];
  const ch = dc.tracingChannel(name);
  /** @type {any} */ const handlers = {};
  for (const ev of ['start', 'end', 'asyncStart', 'asyncEnd', 'error']) {
    handlers[ev] = (/** @type {any} */ ctx) => seen.push([ev, { ...ctx }]);
  }
  ch.subscribe(handlers);
  t.after(() => ch.unsubscribe(handlers));
  return seen;
}

/** The events seen for the operation on `name`. @param {[string, any][]} seen @param {string} name */
function of(seen, name) {
  return seen.filter(([, c]) => c.name === name);
}

test('the channel names', () => {
  assert.deepEqual({ ...traceChannels }, {
    acquire: 'etcdlock:acquire',
    campaign: 'etcdlock:campaign',
    hold: 'etcdlock:hold',
    lead: 'etcdlock:lead',
    release: 'etcdlock:release',
    taskClaim: 'etcdlock:task.claim',
    taskAck: 'etcdlock:task.ack',
    register: 'etcdlock:register',
  });
});

// covers: TRACE-SPANS-001
test('acquire, hold and release are traced with the name, token and outcome', async (t) => {
  const [acquire, hold, release] = [record(t, 'etcdlock:acquire'), record(t, 'etcdlock:hold'), record(t, 'etcdlock:release')];
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const name = prefix('trace-held');
  const lock = await c.lock(name);
  const token = lock.fencingToken;

  const a = of(acquire, name);
  assert.deepEqual(a.map(([ev]) => ev), ['start', 'end', 'asyncStart', 'asyncEnd']);
  assert.equal(a[0][1].outcome, undefined, 'start: no outcome yet');
  assert.equal(a[3][1].outcome, 'acquired');
  assert.equal(a[3][1].fencingToken, token);
  assert.deepEqual(of(hold, name).map(([ev]) => ev), ['start', 'end'], 'the hold is open while held');
  assert.equal(of(hold, name)[0][1].fencingToken, token);

  await lock.release();
  const h = of(hold, name);
  assert.deepEqual(h.map(([ev]) => ev), ['start', 'end', 'asyncStart', 'asyncEnd']);
  assert.equal(h[3][1].outcome, 'released');
  const r = of(release, name);
  assert.deepEqual(r.map(([ev]) => ev), ['start', 'end', 'asyncStart', 'asyncEnd']);
  assert.equal(r[3][1].outcome, 'released');
  assert.equal(r[3][1].fencingToken, token);
});

// covers: TRACE-SPANS-001
test('a timed-out acquire is traced with LOCK_TIMEOUT and opens no hold', async (t) => {
  const [acquire, hold] = [record(t, 'etcdlock:acquire'), record(t, 'etcdlock:hold')];
  const a = new Client({ endpoints: ENDPOINTS });
  const b = new Client({ endpoints: ENDPOINTS });
  t.after(() => Promise.all([a.close(), b.close()]));
  const name = prefix('trace-busy');
  const held = await a.lock(name);
  await assert.rejects(b.lock(name, { timeout: 300 }), { code: 'LOCK_TIMEOUT' });
  const waits = of(acquire, name).filter(([ev]) => ev === 'asyncEnd');
  assert.equal(waits.length, 2);
  assert.equal(waits[1][1].outcome, 'timeout');
  assert.equal(waits[1][1].errorCode, 'LOCK_TIMEOUT');
  assert.equal(waits[1][1].fencingToken, undefined);
  assert.ok(of(acquire, name).some(([ev]) => ev === 'error'), 'the error event fires');
  assert.equal(of(hold, name).filter(([ev]) => ev === 'start').length, 1, "only the holder's hold");
  await held.release();
});

// covers: TRACE-SPANS-001
test('a lost hold ends as lost with LOCK_LOST and its reason; the release after it fails NOT_HELD', async (t) => {
  const [hold, release] = [record(t, 'etcdlock:hold'), record(t, 'etcdlock:release')];
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const name = prefix('trace-lost');
  const lock = await c.lock(name);
  etcdctl('lease', 'revoke', lock.leaseId.toString(16));
  await waitFor(() => of(hold, name).some(([ev]) => ev === 'asyncEnd'), 5000, 'the hold to end');
  const end = of(hold, name).find(([ev]) => ev === 'asyncEnd');
  assert.equal(end[1].outcome, 'lost');
  assert.equal(end[1].errorCode, 'LOCK_LOST');
  assert.ok(['revoked', 'key_deleted'].includes(end[1].lostReason), end[1].lostReason);
  await assert.rejects(lock.release(), { code: 'NOT_HELD' });
  const r = of(release, name).find(([ev]) => ev === 'asyncEnd');
  assert.equal(r[1].outcome, 'error');
  assert.equal(r[1].errorCode, 'NOT_HELD');
  assert.equal(of(hold, name).filter(([ev]) => ev === 'asyncEnd').length, 1, 'the hold ends once');
});

// covers: TRACE-SPANS-001
test('a campaign and its leadership are traced on etcdlock:campaign and etcdlock:lead', async (t) => {
  const [campaign, lead, acquire] = [record(t, 'etcdlock:campaign'), record(t, 'etcdlock:lead'), record(t, 'etcdlock:acquire')];
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const name = prefix('trace-elect');
  const leading = await c.election(name).campaign('me');
  const won = of(campaign, name).find(([ev]) => ev === 'asyncEnd');
  assert.equal(won[1].outcome, 'acquired');
  assert.equal(won[1].fencingToken, leading.fencingToken);
  assert.equal(of(acquire, name).length, 0, 'a campaign is no acquire');
  await leading.resign();
  const ended = of(lead, name).find(([ev]) => ev === 'asyncEnd');
  assert.equal(ended[1].outcome, 'released');
});

// covers: TRACE-SPANS-002
test('a task claimed and acked is traced on etcdlock:task.claim and etcdlock:task.ack', async (t) => {
  const [claim, ack, acquire] = [record(t, 'etcdlock:task.claim'), record(t, 'etcdlock:task.ack'), record(t, 'etcdlock:acquire')];
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const name = prefix('trace-queue');
  const q = c.queue(name);
  const id = await q.put('job');
  const task = await q.claim({ timeout: 5000 });
  const claimed = of(claim, name);
  assert.deepEqual(claimed.map(([ev]) => ev), ['start', 'end', 'asyncStart', 'asyncEnd']);
  assert.deepEqual([claimed[3][1].outcome, claimed[3][1].taskId, claimed[3][1].fencingToken], ['acquired', id, task.fencingToken]);
  await task.ack();
  const acked = of(ack, name).filter(([ev]) => ev === 'asyncEnd');
  assert.deepEqual(acked.map(([, c]) => [c.outcome, c.taskId, c.fencingToken]), [['acked', id, task.fencingToken]]);
  await assert.rejects(task.ack(), { code: 'NOT_HELD' });
  const again = of(ack, name).filter(([ev]) => ev === 'asyncEnd');
  assert.deepEqual([again[1][1].outcome, again[1][1].errorCode], ['error', 'NOT_HELD']);
  // An empty queue's try: the claim times out (WOULD_BLOCK); the claim's own lock is not traced.
  await assert.rejects(q.claim({ timeout: 0 }), { code: 'WOULD_BLOCK' });
  const none = of(claim, name).filter(([ev]) => ev === 'asyncEnd');
  assert.deepEqual([none[1][1].outcome, none[1][1].errorCode, none[1][1].taskId], ['timeout', 'WOULD_BLOCK', undefined]);
  assert.equal(acquire.filter(([, c]) => c.name.startsWith(name)).length, 0);
});

// covers: TRACE-SPANS-002
test('a registration and one refused are traced on etcdlock:register', async (t) => {
  const register = record(t, 'etcdlock:register');
  const a = new Client({ endpoints: ENDPOINTS });
  const b = new Client({ endpoints: ENDPOINTS });
  t.after(() => Promise.all([a.close(), b.close()]));
  const svc = prefix('trace-reg');
  const reg = await a.register(svc, 'n1', 'a');
  await assert.rejects(b.register(svc, 'n1', 'b'), { code: 'WOULD_BLOCK' });
  const ends = of(register, `${svc}/n1`).filter(([ev]) => ev === 'asyncEnd');
  assert.deepEqual(ends.map(([, c]) => [c.outcome, c.errorCode]), [['registered', undefined], ['error', 'WOULD_BLOCK']]);
  await reg.close();
});

// covers: TRACE-SPANS-003
test("a pool's acquire, hold and release are traced with its name, the slots and the token", async (t) => {
  const [acquire, hold, release] = [record(t, 'etcdlock:acquire'), record(t, 'etcdlock:hold'), record(t, 'etcdlock:release')];
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const name = prefix('trace-pool');
  const pool = c.pool(name, { slots: ['a', 'b'] });
  const held = await pool.acquire({ count: 2 });
  const a = of(acquire, name).find(([ev]) => ev === 'asyncEnd');
  assert.deepEqual([a[1].outcome, a[1].slots, a[1].fencingToken], ['acquired', 'a,b', held.fencingToken]);
  assert.deepEqual(of(hold, name).map(([ev]) => ev), ['start', 'end'], 'the hold is open while held');
  await assert.rejects(c.pool(name, { slots: ['a', 'b'] }).acquire({ count: 1, timeout: 0 }), { code: 'WOULD_BLOCK' });
  const busy = of(acquire, name).filter(([ev]) => ev === 'asyncEnd')[1];
  assert.deepEqual([busy[1].outcome, busy[1].errorCode], ['timeout', 'WOULD_BLOCK']);
  await held.release();
  const h = of(hold, name).find(([ev]) => ev === 'asyncEnd');
  assert.deepEqual([h[1].outcome, h[1].slots, h[1].fencingToken], ['released', 'a,b', held.fencingToken]);
  const r = of(release, name).find(([ev]) => ev === 'asyncEnd');
  assert.deepEqual([r[1].outcome, r[1].slots, r[1].fencingToken], ['released', 'a,b', held.fencingToken]);
  assert.equal(of(hold, name).filter(([ev]) => ev === 'start').length, 1, 'one hold');
  // Lost: the lease it lives on revoked by an operator ends the hold.
  const lostName = prefix('trace-pool-lost');
  const lost = await c.pool(lostName, { slots: ['x'] }).acquire();
  etcdctl('lease', 'revoke', lost.leaseId.toString(16));
  await waitFor(() => of(hold, lostName).some(([ev]) => ev === 'asyncEnd'), 5000, 'the hold to end');
  const l = of(hold, lostName).find(([ev]) => ev === 'asyncEnd');
  assert.deepEqual([l[1].outcome, l[1].errorCode, l[1].slots], ['lost', 'LOCK_LOST', 'x']);
});

// covers: TRACE-SPANS-003
test("a lock set's acquire, hold and release are traced named by its members", async (t) => {
  const [acquire, hold, release] = [record(t, 'etcdlock:acquire'), record(t, 'etcdlock:hold'), record(t, 'etcdlock:release')];
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const [x, y] = [prefix('trace-set-x'), prefix('trace-set-y')];
  const name = `${x},${y}`;
  const held = await c.lockSet([x, y]);
  const a = of(acquire, name).find(([ev]) => ev === 'asyncEnd');
  assert.deepEqual([a[1].outcome, a[1].fencingToken], ['acquired', held.fencingToken]);
  assert.deepEqual(of(hold, name).map(([ev]) => ev), ['start', 'end']);
  etcdctl('del', x, '--prefix');
  await waitFor(() => of(hold, name).some(([ev]) => ev === 'asyncEnd'), 5000, 'the hold to end');
  const h = of(hold, name).find(([ev]) => ev === 'asyncEnd');
  assert.deepEqual([h[1].outcome, h[1].errorCode, h[1].lostReason], ['lost', 'LOCK_LOST', 'key_deleted']);
  await assert.rejects(held.release(), { code: 'NOT_HELD' });
  const r = of(release, name).find(([ev]) => ev === 'asyncEnd');
  assert.deepEqual([r[1].outcome, r[1].errorCode], ['error', 'NOT_HELD']);
});
