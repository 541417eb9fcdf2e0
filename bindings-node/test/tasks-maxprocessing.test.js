'use strict';
// `client.queue(name, { maxProcessing })` against a real etcd: a claim whose handler outlives
// maxProcessing (ms) ends (its lost signal fires, its ack is refused) and the item is claimed
// again; a task acked in time is untouched; bad values are INVALID_ARGUMENT.
const test = require('node:test');
const assert = require('node:assert/strict');
const { performance } = require('node:perf_hooks');
const { ENDPOINTS, prefix, keysUnder } = require('./helpers');
const { Client } = require('..');

function client(t) {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  return c;
}

// covers: QUEUE-MAXPROC-001
test('a claim past maxProcessing ends: the lost signal fires, its ack fails, the item is claimed again', async (t) => {
  const c = client(t);
  const name = prefix('tq-maxproc');
  const q = c.queue(name, { ttl: 10, maxProcessing: 1000 });
  await q.put('hung', { id: 'hung' });
  const task = await q.claim({ timeout: 0 });
  const at = performance.now();
  const reason = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the claim outlived maxProcessing')), 5000);
    task.onLost((r) => {
      clearTimeout(timer);
      resolve(r);
    });
  });
  const took = performance.now() - at;
  assert.equal(reason, 'key_deleted');
  assert.ok(took >= 900, `ended after ${took.toFixed(0)} ms`);
  assert.equal(task.isHeld(), false);
  const again = await q.claim({ timeout: 5000 });
  assert.deepEqual([again.id, again.attempts], ['hung', 2]);
  await assert.rejects(task.ack(), { code: 'NOT_HELD' });
  await again.ack();
  // A task acked in time is not touched by its timer.
  await q.put('quick', { id: 'quick' });
  const quick = await q.claim({ timeout: 0 });
  await quick.ack();
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// covers: QUEUE-MAXPROC-001 (bad values)
test('maxProcessing that is not a number of ms > 0 is INVALID_ARGUMENT, nothing sent', async (t) => {
  const c = client(t);
  const name = prefix('tq-maxproc-input');
  for (const v of [-1, 0, NaN, '1000', 1e300]) {
    assert.throws(() => c.queue(name, { maxProcessing: v }), { code: 'INVALID_ARGUMENT' }, `maxProcessing ${String(v)}`);
  }
  // Absent, null or Infinity: no limit.
  for (const v of [undefined, null, Infinity]) c.queue(name, { maxProcessing: v });
  assert.deepEqual(keysUnder(name), []);
});
