'use strict';
// Bad arguments throw (sync calls) or reject (async calls) with INVALID_ARGUMENT before anything
// is sent: nothing appears in etcd.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, prefix, keysUnder } = require('./helpers');
const { Client, EtcdlockError } = require('..');

const INVALID = { code: 'INVALID_ARGUMENT', name: 'EtcdlockError' };

// covers: CONN-BADURL-001 (empty endpoint list: rejected synchronously, before any connection)
test('constructor: bad options throw INVALID_ARGUMENT synchronously', () => {
  for (const opts of [
    undefined,
    null,
    42,
    {},
    { endpoints: [] },
    { endpoints: [1] },
    { endpoints: 'http://127.0.0.1:2379', timeout: NaN },
    { endpoints: 'http://127.0.0.1:2379', timeout: -1 },
    { endpoints: 'http://127.0.0.1:2379', timeout: '5000' },
    { endpoints: 'http://127.0.0.1:2379', timeout: 0 },
    { endpoints: 'http://127.0.0.1:2379', maxInFlight: 0 },
    { endpoints: 'http://127.0.0.1:2379', auth: { user: 'u' } },
  ]) {
    assert.throws(() => new Client(opts), INVALID, JSON.stringify(opts));
  }
});

// covers: CONN-BADURL-001 (malformed URLs)
test('malformed endpoint URLs reject INVALID_ARGUMENT (checked by core before connecting)', async () => {
  for (const ep of ['nope', 'ftp://127.0.0.1:2379', 'http://127.0.0.1:0']) {
    const c = new Client({ endpoints: [ep] });
    await assert.rejects(c.ready, INVALID, ep);
    await c.close();
  }
});

// covers: ERR-BADNAME-001
// covers: ERR-BADTTL-001
// covers: ERR-TYPE-001
test('lock: empty name, bad ttl, bad timeout, bad signal, wrong types', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const name = prefix('badlock');
  const bad = [
    ['', {}],
    [Buffer.alloc(0), {}],
    [`${name}/`, {}], // would share a queue with `${name}`
    [`a\0b`, {}],
    [42, {}],
    [null, {}],
    [{}, {}],
    [name, 'ttl=10'],
    [name, { ttl: 0 }],
    [name, { ttl: -1 }],
    [name, { ttl: NaN }],
    [name, { ttl: 1.5 }],
    [name, { ttl: '10' }],
    [name, { ttl: Infinity }],
    [name, { ttl: 10n }],
    [name, { ttl: 2 ** 53 }],
    [name, { ttl: 9_000_000_001 }], // above etcd's maximum lease TTL (core's check)
    [name, { timeout: NaN }],
    [name, { timeout: -5 }],
    [name, { timeout: '100' }],
    [name, { signal: {} }],
    [name, { signal: 'abort' }],
  ];
  for (const [n, o] of bad) {
    const err = await c.lock(n, o).then(() => null, (e) => e);
    assert.ok(err instanceof EtcdlockError, `${String(n)} ${String(o && o.ttl)}: ${err}`);
    assert.equal(err.code, 'INVALID_ARGUMENT', `${String(n)} ${String(o && o.ttl)}`);
  }
  assert.deepEqual(keysUnder(name), []);
});

// covers: ERR-BADKEY-001
// covers: ERR-BADTTL-001 (lease TTLs)
// covers: ERR-TYPE-001 (wrong types for keys, values, leases; revisions beyond 2^53 as number)
test('kv, lease and watch: bad keys, values, ttls and revisions', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const p = prefix('badkv');
  for (const k of ['', 1, null, undefined, {}, [1, 2]]) {
    await assert.rejects(c.get(k), INVALID);
    await assert.rejects(c.delete(k), INVALID);
    await assert.rejects(c.put(k, 'v'), INVALID);
  }
  await assert.rejects(c.put(`${p}/k`, 5), INVALID);
  await assert.rejects(c.put(`${p}/k`, null), INVALID);
  await assert.rejects(c.put(`${p}/k`, 'v', { lease: 123 }), INVALID);
  await assert.rejects(c.put(`${p}/k`, 'v', { lease: 123n }), INVALID);
  await assert.rejects(c.put(`${p}/k`, 'v', { ifHeld: {} }), INVALID);
  await assert.rejects(c.put(`${p}/k`, 'v', 'opts'), INVALID);
  for (const ttl of [0, -1, NaN, 1.5, '10', undefined, Infinity, 9_000_000_001]) {
    await assert.rejects(c.lease(ttl), INVALID, String(ttl));
  }
  for (const startRevision of [2 ** 53, 2 ** 60, -1, 1.5, NaN, '5', -1n, 1n << 63n]) {
    assert.throws(() => c.watch(p, { startRevision }), INVALID, String(startRevision));
  }
  assert.throws(() => c.watch(42), INVALID);
  assert.throws(() => c.watch(p, 'prefix'), INVALID);
  // An empty key is rejected by core unless prefix: true (which means "everything").
  const w = c.watch('');
  await assert.rejects(w.next(), INVALID);
  const lock = await c.lock(`${p}-lock`);
  await assert.rejects(lock.put('', 'v'), INVALID);
  await assert.rejects(lock.put(lock.key, 'v'), INVALID); // a guarded write must not touch the lock key
  assert.throws(() => lock.onLost('cb'), INVALID);
  await lock.release();
  assert.deepEqual(keysUnder(p), []);
});

test('64-bit values beyond 2^53 are accepted as bigint', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  // A start revision far in the future is valid: the watch simply waits for it.
  const w = c.watch(prefix('bigrev'), { startRevision: (1n << 62n) + 1n });
  await w.ready;
  w.close();
  const lease = await c.lease(5);
  assert.equal(typeof lease.id, 'bigint');
  await lease.revoke();
});
