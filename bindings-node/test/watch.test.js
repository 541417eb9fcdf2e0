'use strict';
// Watches: async iteration, event fields, prefix, startRevision replay, close(), COMPACTED.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, prefix, etcdctl } = require('./helpers');
const { Client, Watch, EtcdlockError } = require('..');

function client(t) {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  return c;
}

/** The next `n` events of `w`, bounded in time. */
async function take(w, n, ms = 5000) {
  const out = [];
  const timer = setTimeout(() => w.close(), ms);
  try {
    for await (const ev of w) {
      out.push(ev);
      if (out.length === n) break;
    }
  } finally {
    clearTimeout(timer);
  }
  return out;
}

// covers: WATCH-BASIC-001 (prefix)
test('a prefix watch is an async iterable of put/delete events with bigint revisions', async (t) => {
  const c = client(t);
  const p = prefix('watch');
  const w = c.watch(`${p}/`, { prefix: true });
  assert.ok(w instanceof Watch);
  assert.equal(typeof w[Symbol.asyncIterator], 'function');
  await w.ready;
  const r1 = await c.put(`${p}/a`, 'one');
  await c.put(`${p}-outside`, 'ignored');
  const r2 = await c.put(Buffer.from(`${p}/b`), Buffer.from([1, 2]));
  await c.delete(`${p}/a`);
  const r3 = etcdRevision(); // >= the delete's revision (other test files write too)
  const evs = await take(w, 3);
  assert.deepEqual(
    evs.map((e) => [e.type, e.key.toString(), e.value.toString('hex')]),
    [['put', `${p}/a`, Buffer.from('one').toString('hex')], ['put', `${p}/b`, '0102'], ['delete', `${p}/a`, '']],
  );
  for (const e of evs) {
    assert.equal(typeof e.revision, 'bigint');
    assert.ok(Buffer.isBuffer(e.key) && Buffer.isBuffer(e.value));
  }
  assert.equal(evs[0].revision, r1);
  assert.equal(evs[1].revision, r2);
  assert.ok(evs[2].revision > r2 && evs[2].revision <= r3, `delete at ${evs[2].revision}`);
  assert.equal(evs[0].createRevision, r1);
  assert.equal(evs[0].version, 1n);
  assert.equal(evs[0].lease, 0n);
  // break closed it
  assert.deepEqual(await w.next(), { value: undefined, done: true });
});

function etcdRevision() {
  return BigInt(JSON.parse(etcdctl('get', 'x', '-w', 'json')).header.revision);
}

// covers: WATCH-BASIC-001 (single key)
test('a single-key watch; close() ends a pending iteration', async (t) => {
  const c = client(t);
  const p = prefix('watch-key');
  const w = c.watch(p);
  await w.ready;
  await c.put(`${p}/child`, 'not this key');
  const r1 = await c.put(p, 'v');
  const r2 = await c.put(p, 'w');
  await c.delete(p);
  const r3 = etcdRevision();
  const evs = await take(w, 3);
  assert.deepEqual(
    evs.map((e) => [e.type, e.key.toString(), e.value.toString()]),
    [['put', p, 'v'], ['put', p, 'w'], ['delete', p, '']],
  );
  assert.equal(evs[0].revision, r1);
  assert.equal(evs[1].revision, r2);
  assert.ok(evs[2].revision > r2 && evs[2].revision <= r3, `delete at ${evs[2].revision}`);
  const w2 = c.watch(p);
  await w2.ready;
  const pending = w2.next();
  setTimeout(() => w2.close(), 100);
  assert.deepEqual(await pending, { value: undefined, done: true });
  w2.close(); // idempotent
  assert.deepEqual(await w2.next(), { value: undefined, done: true });
});

// covers: WATCH-START-001
test('startRevision replays history (bigint or number), prevKv gives prevValue', async (t) => {
  const c = client(t);
  const p = prefix('watch-start');
  const r1 = await c.put(`${p}/k`, 'a');
  await c.put(`${p}/k`, 'b');
  for (const startRevision of [r1, Number(r1)]) {
    const w = c.watch(`${p}/`, { prefix: true, startRevision, prevKv: true });
    const evs = await take(w, 2);
    assert.deepEqual(evs.map((e) => e.value.toString()), ['a', 'b']);
    assert.equal(evs[0].revision, r1);
    assert.equal(evs[1].prevValue.toString(), 'a');
    assert.equal(evs[1].version, 2n);
  }
});

test('many events arrive in order, none lost or repeated', async (t) => {
  const c = client(t);
  const p = prefix('watch-many');
  const w = c.watch(`${p}/`, { prefix: true });
  await w.ready;
  const N = 500;
  const writes = [];
  for (let i = 0; i < N; i++) writes.push(c.put(`${p}/${i % 7}`, String(i)));
  await Promise.all(writes);
  const evs = await take(w, N, 20000);
  assert.equal(evs.length, N);
  for (let i = 1; i < N; i++) assert.ok(evs[i].revision > evs[i - 1].revision);
  assert.deepEqual(new Set(evs.map((e) => e.value.toString())).size, N);
});

// covers: WATCH-COMPACT-001
test('a compacted startRevision rejects COMPACTED with the compact revision', async (t) => {
  const c = client(t);
  const p = prefix('watch-compacted');
  const old = await c.put(`${p}/k`, '1');
  await c.put(`${p}/k`, '2');
  const now = await c.put(`${p}/k`, '3');
  etcdctl('compact', now.toString());
  const w = c.watch(`${p}/`, { prefix: true, startRevision: old });
  await w.ready;
  const err = await w.next().then(() => null, (e) => e);
  assert.ok(err instanceof EtcdlockError);
  assert.equal(err.code, 'COMPACTED');
  assert.equal(typeof err.compactRevision, 'bigint');
  assert.ok(err.compactRevision >= now);
  await assert.rejects(w.next(), { code: 'COMPACTED' }); // stays failed
  // A for-await loop sees the same error.
  const w2 = c.watch(`${p}/`, { prefix: true, startRevision: old });
  await assert.rejects(async () => {
    for await (const _ of w2);
  }, { code: 'COMPACTED' });
});
