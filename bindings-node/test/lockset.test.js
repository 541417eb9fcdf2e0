'use strict';
// Lock sets (`client.lockSet()`) against a real etcd: opposite orders never deadlock and never
// share a name, one token on every member's key, writes fenced by every member, a lost member,
// mixed modes, and timeouts, tries, aborts and bad input that leave no key. What etcd holds is
// read with etcdctl, not with the library under test.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, prefix, etcdctl, keysUnder, waitFor } = require('./helpers');
const etcdlock = require('..');
const { Client, LockSet, AbortError, Fence, StaleFence, MAX_LOCK_SET } = etcdlock;
const fencing = require('etcdlock/fencing'); // as test/fencing.test.js: the package's subpath export
const Sqlite = require('better-sqlite3');

const INVALID = { code: 'INVALID_ARGUMENT', name: 'EtcdlockError' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function client(t) {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  return c;
}

/** [create revision, lease] of `key` as etcd has it, or null (read from the JSON's text: a lease ID does not fit a double). */
function kv(key) {
  const out = etcdctl('get', key.toString(), '-w', 'json');
  const m = /"create_revision":(\d+),.*"lease":(\d+)/.exec(out);
  return m ? [BigInt(m[1]), BigInt(m[2])] : null;
}

/** Every key in the queues of `names`. */
function queues(...names) {
  return names.flatMap((n) => keysUnder(`${n}/`));
}

/** Whether `p` is still pending after `ms`. */
async function pendingAfter(p, ms) {
  const marker = Symbol('pending');
  return (await Promise.race([p.then(() => 'settled', () => 'settled'), sleep(ms).then(() => marker)])) === marker;
}

// covers: LOCKSET-ABBA-001
test('two clients taking {a, b} and {b, a} 200 times each: no deadlock, the counter exact', async (t) => {
  const p = prefix('ls-abba');
  const [a, b, counter] = [`${p}/a`, `${p}/b`, `${p}/counter`];
  const work = [[a, b], [b, a]].map(async (names) => {
    const c = client(t);
    for (let i = 0; i < 200; i++) {
      const locks = await c.lockSet(names, { ttl: 10, timeout: 10000 }); // LOCK_TIMEOUT here: deadlock?
      // Read, then write through the set: a second holder in between would lose an increment.
      const n = Number((await c.get(counter)) ?? 0);
      await c.put(counter, String(n + 1), { ifHeld: locks });
      await locks.release();
    }
  });
  let timer;
  const limit = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('deadlock')), 120000)));
  await Promise.race([Promise.all(work), limit]).finally(() => clearTimeout(timer));
  assert.equal(etcdctl('get', counter, '--print-value-only').trim(), '400');
  assert.deepEqual(queues(a, b), []);
});

// covers: LOCKSET-TOKEN-001
test('one token on every member key; writes fenced by every member; a deleted member key loses the set', async (t) => {
  const c = client(t);
  const p = prefix('ls-token');
  const names = [`${p}/x`, `${p}/y`, `${p}/z`];
  const data = `${p}/data`;
  const earlier = await c.lock(names[1]);
  const earlierToken = earlier.fencingToken;
  await earlier.release();
  const locks = await c.lockSet(names, { ttl: 10, timeout: 5000 });
  assert.ok(locks instanceof LockSet && locks.isHeld() && locks.lostReason() === null);
  assert.ok(locks.fencingToken > earlierToken);
  assert.deepEqual(locks.names.map(String), names);
  assert.deepEqual(locks.members.map((m) => m.mode), ['exclusive', 'exclusive', 'exclusive']);
  // One Txn put every key: one create revision (the token), one lease.
  assert.equal(locks.keys.length, 3);
  for (const key of locks.keys) assert.deepEqual(kv(key), [locks.fencingToken, locks.leaseId]);
  assert.ok((await c.put(data, '1', { ifHeld: locks })) > locks.fencingToken);
  await assert.rejects(c.put(`${names[2]}/x`, '1', { ifHeld: locks }), INVALID); // under a member's queue
  const reasons = [];
  locks.onLost((r) => reasons.push(r));
  // One member's key deleted by someone else: the set is lost, writes go nowhere.
  etcdctl('del', locks.keys[2].toString());
  await assert.rejects(c.put(data, '2', { ifHeld: locks }), { code: 'NOT_HELD' });
  await assert.rejects(locks.put(data, '2'), { code: 'NOT_HELD' });
  // Polled (a timer keeps the event loop alive): the callback may come a moment after the
  // refused writes, and a bare promise on it would let the test's event loop run empty.
  await waitFor(() => reasons.length > 0, 5000, 'the lost callback');
  assert.deepEqual(reasons, ['key_deleted']);
  assert.ok(!locks.isHeld());
  assert.equal(locks.lostReason(), 'key_deleted');
  assert.equal(etcdctl('get', data, '--print-value-only').trim(), '1');
  // The release says the set was lost, and deletes the keys left.
  await assert.rejects(locks.release(), { code: 'NOT_HELD' });
  assert.deepEqual(queues(...names), []);
});

// covers: LOCKSET-TOKEN-001
test("a member's fence: at the set's token, checks while held and passes the database; not a member is INVALID_ARGUMENT; NOT_HELD after the release", async (t) => {
  const c = client(t);
  const db = new Sqlite(':memory:');
  t.after(() => db.close());
  fencing.sqlite.install(db);
  const p = prefix('ls-fence');
  const [x, y] = [`${p}/x`, `${p}/y`];
  const locks = await c.lockSet([x, { name: y, mode: 'write' }], { ttl: 10, timeout: 5000 });
  const fx = await locks.fence(x);
  const fy = await locks.fence(Buffer.from(y));
  for (const [f, n] of [[fx, x], [fy, y]]) {
    assert.ok(f instanceof Fence);
    assert.equal(f.kind, 'q');
    assert.equal(f.name.toString(), n);
    assert.equal(f.token, locks.fencingToken);
    assert.ok(await c.checkFence(f));
    assert.ok(await c.checkFence(String(f)));
  }
  assert.deepEqual(locks.keys.map((k) => kv(k)[0]), [fx.token, fy.token]);
  assert.equal(fencing.sqlite.check(db, fx), fx.token);
  assert.equal(fencing.sqlite.check(db, fy), fy.token); // each member has its own mark
  await assert.rejects(locks.fence(`${p}/other`), INVALID); // not a member
  await assert.rejects(locks.fence(/** @type {any} */ (7)), INVALID);
  await locks.release();
  assert.equal(await c.checkFence(fx), false, "a released set's fence checked");
  assert.equal(await c.checkFence(fy), false, "a released set's fence checked");
  await assert.rejects(locks.fence(x), { code: 'NOT_HELD' });
  // The next holder of x: a larger token; the set's fence is refused at the database after it.
  const lone = await c.lock(x, { timeout: 5000 });
  const later = await lone.fence();
  assert.ok(later.token > fx.token);
  assert.equal(fencing.sqlite.check(db, later), later.token);
  assert.throws(() => fencing.sqlite.check(db, fx), (e) => e instanceof StaleFence && e.code === 'NOT_HELD');
  await lone.release();
  assert.deepEqual(queues(x, y), []);
});

// covers: LOCKSET-MIXED-001
test('mixed modes: two reading sets at once, a third without a permit, a writer waits for both', async (t) => {
  const c = client(t);
  const p = prefix('ls-mixed');
  const [cfg, gpus] = [`${p}/cfg`, `${p}/gpus`];
  const job = (j, timeout) => c.lockSet([{ name: cfg, mode: 'read' }, { name: `${p}/jobs/${j}`, mode: 'write' }, { name: gpus, permits: 2 }], { timeout });
  const s1 = await job('a', 5000);
  const s2 = await job('b', 5000); // two readers, two permits
  assert.deepEqual(s1.members.map((m) => [m.mode, m.permits]), [['read', undefined], ['write', undefined], ['permit', 2]]);
  await assert.rejects(job('c', 0), { code: 'WOULD_BLOCK' }); // no permit left: nothing kept
  assert.equal(queues(cfg).length, 2);
  assert.equal(queues(gpus).length, 2);
  assert.deepEqual(queues(`${p}/jobs/c`), []);
  // A writer of cfg waits for both reading sets; a reading set after it waits for it.
  const writer = c.rwlock(cfg).write({ timeout: 10000 });
  await waitFor(() => queues(cfg).length === 3, 5000, 'the writer to queue');
  assert.ok(await pendingAfter(writer, 300), 'the writer went in beside readers');
  const reader = () => c.lockSet([{ name: cfg, mode: 'read' }], { timeout: 300 });
  await assert.rejects(reader(), { code: 'LOCK_TIMEOUT' }, 'a reading set passed a waiting writer');
  await s1.release();
  assert.ok(await pendingAfter(writer, 200), 'the writer went in beside a reader');
  await s2.release();
  const w = await writer;
  await assert.rejects(reader(), { code: 'LOCK_TIMEOUT' }, 'a reading set went in beside the writer');
  await w.release();
  const r = await c.lockSet([{ name: cfg, mode: 'read' }], { timeout: 5000 });
  await r.release();
  assert.deepEqual(queues(cfg, gpus, `${p}/jobs/a`, `${p}/jobs/b`), []);
});

// covers: LOCKSET-BINDING-001
test('a timeout, a try and an abort leave no key in any queue; bad input is refused, nothing sent', async (t) => {
  const c = client(t);
  const p = prefix('ls-clean');
  const [a, b] = [`${p}/a`, `${p}/b`];
  const holder = await c.lock(b);
  const started = Date.now();
  await assert.rejects(c.lockSet([a, b], { timeout: 500 }), { code: 'LOCK_TIMEOUT' });
  const took = Date.now() - started;
  assert.ok(took >= 400 && took < 3000, `took ${took} ms`);
  assert.deepEqual(queues(a), []);
  assert.equal(queues(b).length, 1);
  await assert.rejects(c.lockSet([b, a], { timeout: 0 }), { code: 'WOULD_BLOCK' });
  assert.deepEqual(queues(a), []);
  // Aborted while it waits: it ends at once and leaves no key.
  const ac = new AbortController();
  const waiting = c.lockSet([a, b], { signal: ac.signal });
  await waitFor(() => queues(a).length === 1, 5000, 'the set to queue');
  const aborted = Date.now();
  ac.abort(new Error('stop'));
  await assert.rejects(waiting, (e) => e instanceof AbortError && e.name === 'AbortError' && e.cause.message === 'stop');
  assert.ok(Date.now() - aborted < 1000, 'the abort did not reach the core wait');
  assert.deepEqual(queues(a), []);
  await assert.rejects(c.lockSet([a], { signal: ac.signal }), { name: 'AbortError' }); // already aborted: nothing sent
  assert.deepEqual(queues(a), []);
  assert.equal(queues(b).length, 1);
  await holder.release();
  const disposed = await c.lockSet([a, b], { timeout: 0 });
  assert.ok(disposed.isHeld());
  await disposed[Symbol.asyncDispose](); // what `await using` (Node 24+) calls
  assert.ok(!disposed.isHeld());
  await disposed[Symbol.asyncDispose](); // released already: nothing more
  assert.deepEqual(queues(a, b), []);
  const twice = await c.lockSet([a, b]);
  await twice.release();
  await assert.rejects(twice.release(), { code: 'NOT_HELD' });
  // The largest set: 64 names.
  const many = Array.from({ length: MAX_LOCK_SET }, (_, i) => `${p}/m${i}`);
  const big = await c.lockSet(many, { timeout: 5000 });
  assert.equal(big.keys.length, 64);
  await big.release();
  assert.deepEqual(queues(many[0], many[63]), []);
  // Bad input.
  for (const bad of [[], [a, a], [a, `${a}/b`], [`${a}/b/c`, `${a}/b`], Array.from({ length: 65 }, (_, i) => `${p}/n${i}`), [''], [`${a}/`], ['x\0y']]) {
    await assert.rejects(c.lockSet(bad), INVALID, JSON.stringify(bad));
  }
  for (const bad of ['ab', Buffer.from('ab'), 7, null, undefined, [7], [null], [[a]], [{ name: 7 }], [{ name: a, mode: 'lurk' }], [{ name: a, mode: 'read', permits: 2 }], [{ name: a, permits: 0 }], [{ name: a, permits: 1025 }], [{ name: a, permits: '2' }], [{ name: a, mode: 'permit' }], [{ name: a, nme: 'x' }]]) {
    await assert.rejects(c.lockSet(bad), INVALID, String(bad));
  }
  for (const options of [{ ttl: 0 }, { ttl: -1 }, { ttl: 1.5 }, { ttl: '10' }, { timeout: -1 }, { timeout: 'x' }, { signal: {} }, { value: 'v'.repeat(4097) }, 'opts']) {
    await assert.rejects(c.lockSet([a], options), INVALID, JSON.stringify(options));
  }
  await assert.rejects(c.put(`${p}/x`, 'v', { ifHeld: [twice] }), INVALID);
  assert.deepEqual(queues(a, b), []);
  await c.close();
  await assert.rejects(c.lockSet([a]), { code: 'CLOSED' });
});

test('the ESM entry exports LockSet and MAX_LOCK_SET', async () => {
  const esm = await import('../index.mjs');
  assert.equal(esm.LockSet, LockSet);
  assert.equal(esm.MAX_LOCK_SET, 64);
});
