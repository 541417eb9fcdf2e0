'use strict';
// The whole API surface against a real etcd: KV with strings and bytes, leases, locks, fenced
// writes, bigint ids and revisions, close().
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, prefix, etcdctl, keysUnder, waitFor } = require('./helpers');
const etcdlock = require('..');
const { Client, Lock, Lease, EtcdlockError, codes } = etcdlock;

test('constructor form and Client.connect both work', async () => {
  const a = new Client({ endpoints: ENDPOINTS, timeout: 5000 });
  await a.ready;
  const b = await Client.connect({ endpoints: ENDPOINTS.join(',') });
  const p = prefix('connect');
  await a.put(`${p}/k`, 'v');
  assert.equal((await b.get(`${p}/k`)).toString(), 'v');
  await a.close();
  await b.close();
});

// covers: CONN-UNREACH-001
test('unreachable etcd rejects UNAVAILABLE within the connect timeout', async () => {
  const t0 = Date.now();
  const c = new Client({ endpoints: ['http://127.0.0.1:1'], timeout: 300 });
  await assert.rejects(c.ready, { code: 'UNAVAILABLE' });
  const took = Date.now() - t0;
  // 300 ms plus scheduling slack: no hang, no retrying past the timeout.
  assert.ok(took < 1300, `took ${took} ms`);
  await assert.rejects(c.get('x'), { code: 'UNAVAILABLE' });
  await c.close();
});

// covers: KV-BASIC-001
test('put/get/delete with string, Buffer and Uint8Array; revisions are bigint', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const p = prefix('kv');
  const r1 = await c.put(`${p}/s`, 'hello');
  assert.equal(typeof r1, 'bigint');
  const r2 = await c.put(Buffer.from(`${p}/b`), Buffer.from([0, 1, 255]));
  assert.ok(r2 > r1);
  await c.put(new TextEncoder().encode(`${p}/u`), new Uint8Array([7, 8, 9]).subarray(1));
  assert.equal((await c.get(`${p}/s`)).toString(), 'hello');
  assert.deepEqual([...(await c.get(`${p}/b`))], [0, 1, 255]);
  const u = await c.get(`${p}/u`);
  assert.ok(Buffer.isBuffer(u));
  assert.deepEqual([...u], [8, 9]);
  assert.equal(await c.get(`${p}/missing`), null);
  assert.equal(await c.delete(`${p}/s`), true);
  assert.equal(await c.delete(`${p}/s`), false);
  assert.equal(await c.get(`${p}/s`), null);
});

// covers: LEASE-REVOKE-001
test('lease: bigint id, ttl, isAlive, keys attached, revoke fires onLost("revoked")', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const p = prefix('lease');
  const lease = await c.lease(10);
  assert.ok(lease instanceof Lease);
  assert.equal(typeof lease.id, 'bigint');
  assert.ok(lease.id > 0n);
  assert.equal(lease.ttl, 10);
  assert.ok(lease.isAlive());
  assert.ok(lease.remaining() > 8000);
  assert.equal(lease.lostReason(), null);
  // etcdctl prints lease IDs in hex.
  assert.match(etcdctl('lease', 'timetolive', lease.id.toString(16)), /granted with TTL\(10s\)/);
  await c.put(`${p}/k`, 'v', { lease });
  const reasons = [];
  lease.onLost((r) => reasons.push(r));
  await lease.revoke();
  await lease.revoke(); // idempotent
  assert.equal(lease.isAlive(), false);
  await waitFor(() => reasons.length === 1, 5000, 'onLost');
  assert.deepEqual(reasons, ['revoked']);
  assert.equal(await c.get(`${p}/k`), null);
  await assert.rejects(c.put(`${p}/k2`, 'v', { lease }), { code: 'LOCK_LOST' });
});

test('lease keeps a key alive past its TTL (keepalive in the background)', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const p = prefix('keepalive');
  const lease = await c.lease(2);
  await c.put(`${p}/k`, 'v', { lease });
  await new Promise((r) => setTimeout(r, 3000));
  assert.ok(lease.isAlive());
  assert.equal((await c.get(`${p}/k`)).toString(), 'v');
  await lease.revoke();
});

// covers: LEASE-TTL-001
test('a TTL below the server minimum reports the TTL etcd granted (2 s)', async (t) => {
  // The test etcd runs etcd's default timing (100 ms heartbeat, 1 s election): minimum TTL 2 s.
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const lease = await c.lease(1);
  assert.equal(lease.ttl, 2);
  assert.match(etcdctl('lease', 'timetolive', lease.id.toString(16)), /granted with TTL\(2s\)/);
  await lease.revoke();
  // A lock's lease too.
  const lock = await c.lock(prefix('minttl'), { ttl: 1 });
  assert.match(etcdctl('lease', 'timetolive', lock.leaseId.toString(16)), /granted with TTL\(2s\)/);
  await lock.release();
});

// covers: LEASE-LOST-001
test('a lease revoked externally (etcdctl lease revoke): onLost fires once, never alive again', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const p = prefix('lease-ext');
  const lease = await c.lease(2); // keepalive every ~700 ms: several rounds in the checks below
  await c.put(`${p}/k`, 'v', { lease });
  const reasons = [];
  lease.onLost((r) => reasons.push(r));
  etcdctl('lease', 'revoke', lease.id.toString(16));
  await waitFor(() => reasons.length > 0, 10000, 'onLost');
  // 'expired': etcd no longer knows the lease ('revoked' is for our own revoke()).
  assert.deepEqual(reasons, ['expired']);
  assert.equal(lease.lostReason(), 'expired');
  // Past several keepalive intervals: still lost, never alive again, no second callback.
  const end = Date.now() + 2500;
  while (Date.now() < end) {
    assert.equal(lease.isAlive(), false);
    assert.equal(lease.remaining(), 0);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(reasons, ['expired']);
  assert.match(etcdctl('lease', 'timetolive', lease.id.toString(16)), /already expired/);
  assert.deepEqual(keysUnder(`${p}/`), []);
  await assert.rejects(c.put(`${p}/k2`, 'v', { lease }), { code: 'LOCK_LOST' });
  assert.deepEqual(keysUnder(`${p}/`), []);
});

// covers: LOCK-BASIC-001
// covers: LOCK-TOKEN-001
// covers: LOCK-RELEASE-001
test('lock: fencing token, key, isHeld, fenced release, NOT_HELD on second release', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const name = prefix('lock');
  const lock = await c.lock(name, { ttl: 10 });
  assert.ok(lock instanceof Lock);
  assert.equal(typeof lock.fencingToken, 'bigint');
  assert.ok(Buffer.isBuffer(lock.key));
  assert.equal(typeof lock.leaseId, 'bigint');
  // `<name>/<lease hex>`, the Go layout (`-<n>` follows for later acquisitions on one lease).
  assert.match(lock.key.toString(), new RegExp(`^${name}/${lock.leaseId.toString(16)}(-[0-9a-f]+)?$`));
  assert.ok(lock.isHeld());
  assert.deepEqual(keysUnder(`${name}/`), [lock.key.toString()]);
  // The token is the key's create revision, as etcd reports it.
  const kv = JSON.parse(etcdctl('get', lock.key.toString(), '-w', 'json')).kvs[0];
  assert.equal(BigInt(kv.create_revision), lock.fencingToken);
  await lock.release();
  assert.equal(lock.isHeld(), false);
  assert.deepEqual(keysUnder(`${name}/`), []);
  const err = await lock.release().then(() => null, (e) => e);
  assert.ok(err instanceof EtcdlockError);
  assert.ok(err instanceof Error);
  assert.equal(err.code, codes.NOT_HELD);
  // A second acquisition gets a larger token.
  const again = await c.lock(name);
  assert.ok(again.fencingToken > lock.fencingToken);
  // A stale release changes nothing: NOT_HELD, and the new holder's key stays.
  await assert.rejects(lock.release(), { code: 'NOT_HELD' });
  assert.deepEqual(keysUnder(`${name}/`), [again.key.toString()]);
  assert.ok(again.isHeld());
  await again.release();
  assert.deepEqual(keysUnder(`${name}/`), []);
});

test('lock name may be bytes', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const name = Buffer.concat([Buffer.from(prefix('bytes')), Buffer.from([0xff, 0x01])]);
  const lock = await c.lock(name);
  assert.ok(lock.key.subarray(0, name.length).equals(name));
  await lock.release();
});

// covers: LOCK-GUARD-001
test('put ifHeld writes while held, rejects NOT_HELD and writes nothing after release', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const name = prefix('fenced');
  const lock = await c.lock(name);
  const rev = await c.put(`${name}-data`, 'one', { ifHeld: lock });
  assert.equal(typeof rev, 'bigint');
  assert.equal((await c.get(`${name}-data`)).toString(), 'one');
  const lease = await c.lease(10);
  await lock.put(`${name}-leased`, 'x', { lease });
  await lease.revoke();
  assert.equal(await c.get(`${name}-leased`), null);
  await lock.release();
  await assert.rejects(c.put(`${name}-data`, 'two', { ifHeld: lock }), { code: 'NOT_HELD' });
  await assert.rejects(c.put(`${name}-other`, 'two', { ifHeld: lock }), { code: 'NOT_HELD' });
  assert.equal((await c.get(`${name}-data`)).toString(), 'one');
  assert.equal(await c.get(`${name}-other`), null);
});

// covers: LOCK-FENCED-001
test('a stale holder (key deleted, new holder in): writes rejected NOT_HELD, release spares the new key', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  const c2 = new Client({ endpoints: ENDPOINTS });
  t.after(() => Promise.all([c.close(), c2.close()]));
  const name = prefix('fenced-del');
  const lock = await c.lock(name);
  etcdctl('del', lock.key.toString());
  const next = await c2.lock(name, { timeout: 5000 });
  assert.deepEqual(keysUnder(`${name}/`), [next.key.toString()]);
  // No waiting for the watch: etcd itself checks the key in the same transaction.
  await assert.rejects(c.put(`${name}-data`, 'x', { ifHeld: lock }), { code: 'NOT_HELD' });
  await assert.rejects(lock.put(`${name}-data`, 'y'), { code: 'NOT_HELD' });
  assert.equal(await c.get(`${name}-data`), null);
  await assert.rejects(lock.release(), { code: 'NOT_HELD' });
  // The new holder is untouched: its key is there and its guarded write goes through.
  assert.deepEqual(keysUnder(`${name}/`), [next.key.toString()]);
  assert.ok(next.isHeld());
  await c2.put(`${name}-data`, 'z', { ifHeld: next });
  assert.equal(etcdctl('get', '--print-value-only', `${name}-data`).trim(), 'z');
  await next.release();
});

test('Symbol.asyncDispose releases locks, revokes leases, closes clients', async () => {
  assert.equal(typeof Symbol.asyncDispose, 'symbol');
  const c = new Client({ endpoints: ENDPOINTS });
  const name = prefix('dispose');
  const lock = await c.lock(name);
  await lock[Symbol.asyncDispose]();
  assert.equal(lock.isHeld(), false);
  assert.deepEqual(keysUnder(`${name}/`), []);
  const released = await c.lock(name);
  await released.release();
  await released[Symbol.asyncDispose](); // already released: no error
  const lease = await c.lease(5);
  await lease[Symbol.asyncDispose]();
  assert.equal(lease.lostReason(), 'revoked');
  await c[Symbol.asyncDispose]();
  assert.equal(c.closed, true);
});

// covers: CONN-CLOSED-001
// covers: LOCK-LOST-002
test('close() is idempotent; later calls reject CLOSED; held locks report "closed"', async () => {
  const c = new Client({ endpoints: ENDPOINTS });
  const name = prefix('close');
  const lock = await c.lock(name);
  const lease = await c.lease(30);
  const reasons = [];
  lock.onLost((r) => reasons.push(`lock:${r}`));
  lease.onLost((r) => reasons.push(`lease:${r}`));
  await Promise.all([c.close(), c.close()]);
  await c.close();
  await waitFor(() => reasons.length === 2, 5000, 'onLost');
  assert.deepEqual(reasons.sort(), ['lease:closed', 'lock:closed']);
  assert.equal(lock.isHeld(), false);
  // close() revoked the leases: the lock key is gone.
  assert.deepEqual(keysUnder(`${name}/`), []);
  for (const p of [c.get('x'), c.put('x', 'y'), c.delete('x'), c.lock(name), c.lease(5)]) {
    await assert.rejects(p, { code: 'CLOSED' });
  }
  const w = c.watch('x');
  await assert.rejects(w.next(), { code: 'CLOSED' });
  // Calls on the client's objects fail the same way.
  await assert.rejects(lock.put(`${name}-k`, 'v'), { code: 'CLOSED' });
  await assert.rejects(lock.release(), { code: 'CLOSED' });
  await assert.rejects(lease.revoke(), { code: 'CLOSED' });
  assert.deepEqual(keysUnder(`${name}-k`), []);
});

// covers: CONN-CLOSE-WAITER-001
test('pending operations reject CLOSED when the client is closed', async () => {
  const holder = new Client({ endpoints: ENDPOINTS });
  const c = new Client({ endpoints: ENDPOINTS });
  const name = prefix('pending');
  const held = await holder.lock(name);
  // Settlements are collected at once: they happen while this test awaits other things.
  const waiting = c.lock(name).then(() => null, (e) => e);
  const w = c.watch(`${name}-w`);
  await w.ready;
  const next = w.next().then(() => null, (e) => e);
  await waitFor(() => keysUnder(`${name}/`).length === 2, 5000, 'the waiter to queue');
  await c.close();
  assert.equal((await waiting).code, 'CLOSED');
  assert.equal((await next).code, 'CLOSED');
  assert.deepEqual(keysUnder(`${name}/`), [held.key.toString()]);
  await held.release();
  await holder.close();
});

test('ESM import works', async () => {
  const esm = await import('etcdlock');
  assert.equal(esm.Client, Client);
  assert.equal(esm.default, etcdlock);
});

// covers: CONN-CLOSE-WAITER-001 (repeated, for the race)
test('close() with an acquire waiting never leaves its queue key behind (repeated)', async () => {
  // Guards the binding's workaround for a core race (see Acquiring in src/client.rs).
  const holder = new Client({ endpoints: ENDPOINTS });
  const name = prefix('close-race');
  const held = await holder.lock(name);
  for (let i = 0; i < 8; i++) {
    const c = new Client({ endpoints: ENDPOINTS });
    const waiting = c.lock(name).then(() => null, (e) => e);
    await waitFor(() => keysUnder(`${name}/`).length === 2, 5000, 'the waiter to queue');
    await c.close();
    assert.equal((await waiting).code, 'CLOSED');
    assert.deepEqual(keysUnder(`${name}/`), [held.key.toString()], `round ${i}`);
  }
  await held.release();
  await holder.close();
});
