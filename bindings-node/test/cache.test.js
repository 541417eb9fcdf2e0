'use strict';
// The prefix cache (`client.cache`) against a real etcd: its copy is etcd's state at its
// revision, `waitFor` reads a write back, its events are etcd's history in order (an async
// iterable, with AbortSignal); cut off while the history it needs is compacted, it reads the
// prefix again and says so; closed (or its client closed), every call says so. etcd's state is
// read with etcdctl, not with the library under test; the compaction runs on an etcd of its own.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, startEtcd, prefix, etcdctlAt } = require('./helpers');
const { cutProxy } = require('./cutproxy');
const { Client, Cache, CacheEvents } = require('..');
const esm = import('../index.mjs');

const INVALID = { code: 'INVALID_ARGUMENT', name: 'EtcdlockError' };
const CLOSED = { code: 'CLOSED', name: 'EtcdlockError' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A client of `endpoints` (default: the shared test etcd), closed after the test. */
function client(t, endpoints = ENDPOINTS) {
  const c = new Client({ endpoints });
  t.after(() => c.close());
  return c;
}

/** etcd's own `get --prefix --rev=R` (etcdctl), as key -> value strings. */
function etcdAt(eps, p, rev) {
  const kvs = JSON.parse(etcdctlAt(eps.join(','), 'get', '--prefix', p, '--rev', String(rev), '-w', 'json')).kvs || [];
  return Object.fromEntries(kvs.map((kv) => [Buffer.from(kv.key, 'base64').toString(), Buffer.from(kv.value || '', 'base64').toString()]));
}

/** A snapshot's entries as key -> value strings. */
const values = (snap) => Object.fromEntries(snap.entries.map((e) => [e.key.toString(), e.value.toString()]));

/** The current revision of etcd at `eps` (etcdctl). */
const revisionAt = (eps) => BigInt(JSON.parse(etcdctlAt(eps.join(','), 'get', 'x', '-w', 'json')).header.revision);

/** The next `n` events of `events`, as `[type, key, value, prevValue, revision]`, within `ms`. */
async function take(events, n, ms = 10_000) {
  const out = [];
  let timer;
  const limit = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${out.length} of ${n} events in ${ms} ms`)), ms)));
  try {
    while (out.length < n) {
      const r = await Promise.race([events.next(), limit]);
      assert.equal(r.done, false, `the events ended after ${out.length} of ${n}`);
      const e = r.value;
      out.push([e.type, e.key.toString(), e.value.toString(), e.prevValue === undefined ? undefined : e.prevValue.toString(), e.revision]);
    }
  } finally {
    clearTimeout(timer);
  }
  return out;
}

// covers: CACHE-READ-001
test("a cache is etcd's state at its revision and reads its writes back, in order", async (t) => {
  const c = client(t);
  const p = `${prefix('cache')}/cfg/`;
  for (let i = 0; i < 30; i++) await c.put(`${p}k${String(i).padStart(2, '0')}`, `v${i}`);
  await c.put(`${p.slice(0, -1)}-outside`, 'x');
  const cache = await c.cache(p);
  t.after(() => cache.close());
  assert.ok(cache instanceof Cache);
  let snap = cache.snapshot();
  assert.equal(snap.entries.length, 30);
  assert.equal(cache.size, 30);
  assert.deepEqual(values(snap), etcdAt(ENDPOINTS, p, snap.revision), "the copy is not etcd's state at its revision");
  assert.equal(typeof snap.revision, 'bigint');
  assert.equal(cache.revision, snap.revision);
  assert.deepEqual(cache.prefix, Buffer.from(p));
  assert.deepEqual(cache.get(`${p}k03`), Buffer.from('v3'));
  assert.deepEqual(cache.get(Buffer.from(`${p}k03`)), Buffer.from('v3'));
  assert.equal(cache.get(`${p}none`), null);
  const events = cache.events();
  assert.ok(events instanceof CacheEvents && events.cache === cache);
  // Read-your-writes: each write is in the copy once waitFor its revision resolves.
  const r1 = await c.put(`${p}k01`, 'new');
  await cache.waitFor(r1, { timeout: 5000 });
  assert.deepEqual(cache.get(`${p}k01`), Buffer.from('new'));
  await c.put(`${p.slice(0, -1)}-outside`, 'y'); // outside the prefix: no event
  await c.delete(`${p}k02`);
  const r2 = revisionAt(ENDPOINTS);
  await cache.waitFor(Number(r2), { timeout: 5000 }); // a number works too
  assert.equal(cache.get(`${p}k02`), null);
  const r3 = await c.put(`${p}k99`, 'fresh');
  await cache.waitFor(r3); // no timeout: as long as it takes
  assert.deepEqual(cache.get(`${p}k99`), Buffer.from('fresh'));
  assert.deepEqual(await take(events, 3), [
    ['put', `${p}k01`, 'new', 'v1', r1],
    ['delete', `${p}k02`, '', 'v2', r2],
    ['put', `${p}k99`, 'fresh', undefined, r3],
  ]);
  await cache.waitFor(r1, { timeout: 500 }); // already there: at once
  const t0 = Date.now();
  await assert.rejects(cache.waitFor(r3 + 1000n, { timeout: 300 }), { code: 'TIMEOUT', name: 'EtcdlockError' });
  assert.ok(Date.now() - t0 < 3000);
  snap = cache.snapshot();
  assert.deepEqual(values(snap), etcdAt(ENDPOINTS, p, snap.revision));
  const e = snap.entries.find((x) => x.key.toString() === `${p}k01`);
  assert.equal(e.modRevision, r1);
  assert.equal(typeof e.createRevision, 'bigint');
});

// covers: CACHE-READ-001
test('for await, AbortSignal and asyncDispose on a cache and its events', async (t) => {
  const c = client(t);
  const p = `${prefix('cache-iter')}/`;
  const { Cache: EsmCache } = await esm;
  const cache = await c.cache(p);
  assert.ok(cache instanceof EsmCache);
  const seen = [];
  const loop = (async () => {
    for await (const ev of cache.events()) {
      seen.push(`${ev.type} ${ev.key} ${ev.value}`);
      if (seen.length === 2) break; // closes the iterator
    }
  })();
  await sleep(100);
  await c.put(`${p}a`, '1');
  await c.delete(`${p}a`);
  await loop;
  assert.deepEqual(seen, [`put ${p}a 1`, `delete ${p}a `]);
  // An aborted signal ends a `for await` loop with an AbortError, and stops a wait.
  const ac = new AbortController();
  const aborted = (async () => {
    for await (const ev of cache.events({ signal: ac.signal })) assert.fail(`an event after the abort: ${ev.type}`);
  })();
  const wait = assert.rejects(cache.waitFor(cache.revision + 1000n, { signal: ac.signal }), { name: 'AbortError' });
  await sleep(100);
  ac.abort();
  await assert.rejects(aborted, { name: 'AbortError' });
  await wait;
  await assert.rejects(cache.waitFor(1, { signal: ac.signal }), { name: 'AbortError' }); // already aborted
  assert.equal(cache.size, 0); // the cache goes on
  // `await using cache = ...` closes it.
  await cache[Symbol.asyncDispose]();
  assert.throws(() => cache.get(`${p}a`), CLOSED);
});

// covers: CACHE-RESYNC-001
test('cut off while compacted, a cache reads the prefix again and delivers the differences', async (t) => {
  const eps = [startEtcd(['--members', '1']).pop()];
  const proxy = await cutProxy(Number(new URL(eps[0]).port));
  t.after(() => proxy.close());
  const direct = client(t, eps);
  const p = 'rs/';
  for (const k of ['a', 'b', 'c']) await direct.put(`${p}${k}`, '1');
  const cut = client(t, [proxy.endpoint]);
  const cache = await cut.cache(p);
  const events = cache.events();
  assert.equal(cache.size, 3);
  // Cut off: the cache hears nothing while `a` is deleted and created again, `b` changed, `c`
  // deleted, `d` created, and the history compacted.
  proxy.cut();
  await direct.delete(`${p}a`);
  await direct.put(`${p}a`, '2');
  const rb = await direct.put(`${p}b`, '2');
  await direct.delete(`${p}c`);
  const head = await direct.put(`${p}d`, '1');
  etcdctlAt(eps[0], 'compact', String(head));
  proxy.restore();
  await cache.waitFor(head, { timeout: 30_000 });
  const got = await take(events, 6);
  assert.deepEqual(
    got.map(([type, key]) => `${type} ${key}`),
    [`delete ${p}a`, `put ${p}a`, `put ${p}b`, `delete ${p}c`, `put ${p}d`, 'resynced '],
  );
  assert.deepEqual(got[0].slice(3), ['1', head]);
  assert.deepEqual(got[1].slice(2, 4), ['2', undefined]);
  assert.deepEqual(got[2], ['put', `${p}b`, '2', '1', head]);
  assert.ok(rb < head);
  const snap = cache.snapshot();
  assert.ok(snap.revision >= head);
  assert.deepEqual(values(snap), etcdAt(eps, p, snap.revision));
  // And it follows on from there.
  const rev = await direct.put(`${p}e`, '1');
  await cache.waitFor(rev, { timeout: 10_000 });
  assert.deepEqual(await take(events, 1), [['put', `${p}e`, '1', undefined, rev]]);
});

// covers: CACHE-CLOSE-001
test('a closed cache or client refuses every call and ends its waits', async () => {
  const c = new Client({ endpoints: ENDPOINTS });
  const p = `${prefix('cache-closed')}/`;
  let cache = await c.cache(p);
  // Closing the cache: a waiting reader ends, reads and waits are CLOSED.
  let reader = cache.events().next();
  await sleep(100);
  cache.close();
  cache.close(); // idempotent
  assert.deepEqual(await reader, { value: undefined, done: true });
  for (const call of [() => cache.get('k'), () => cache.snapshot(), () => cache.revision, () => cache.size, () => cache.events()]) {
    assert.throws(call, CLOSED);
  }
  await assert.rejects(cache.waitFor(1, { timeout: 1000 }), CLOSED);
  // Closing the client: a waiting waitFor rejects CLOSED, a reader ends, then every call fails.
  cache = await c.cache(p);
  reader = cache.events().next();
  const wait = assert.rejects(cache.waitFor(cache.revision + 1000n), CLOSED);
  await sleep(100);
  await c.close();
  await wait;
  assert.deepEqual(await reader, { value: undefined, done: true });
  assert.throws(() => cache.get('k'), CLOSED);
  assert.throws(() => cache.events(), CLOSED);
  await assert.rejects(cache.waitFor(1, { timeout: 1000 }), CLOSED);
  await assert.rejects(c.cache(p), CLOSED);
});

// covers: CACHE-CLOSE-001
test('a cache checks its arguments before anything is sent', async (t) => {
  const c = client(t);
  for (const bad of [undefined, null, 5, {}]) await assert.rejects(c.cache(bad), INVALID);
  const cache = await c.cache(`${prefix('cache-args')}/`);
  t.after(() => cache.close());
  assert.throws(() => cache.get(5), INVALID);
  for (const bad of [undefined, '1', -1, 1.5, -1n, 2n ** 63n]) await assert.rejects(cache.waitFor(bad), INVALID);
  for (const bad of [-1, NaN, '5']) await assert.rejects(cache.waitFor(1, { timeout: bad }), INVALID);
  await assert.rejects(cache.waitFor(1, { signal: 'x' }), INVALID);
  await assert.rejects(cache.waitFor(1, 5), INVALID);
  assert.throws(() => cache.events({ signal: 5 }), INVALID);
});
