'use strict';
// Acquire semantics: try-once, timeout, AbortSignal (queue key gone when the promise settles),
// onLost reasons, callbacks on the JS thread, FIFO between clients.
const test = require('node:test');
const assert = require('node:assert/strict');
const { isMainThread } = require('node:worker_threads');
const { ENDPOINTS, prefix, etcdctl, keysUnder, waitFor } = require('./helpers');
const { Client, AbortError } = require('..');

/** A client for the test, closed after it. */
function client(t) {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  return c;
}

// covers: LOCK-SESSION-001
test("a client's locks with one TTL share one lease, across cycles; close() revokes it", async () => {
  const c = new Client({ endpoints: ENDPOINTS });
  const p = prefix('share');
  const a = await c.lock(`${p}a`, { ttl: 7 });
  const b = await c.lock(`${p}b`, { ttl: 7 });
  const other = await c.lock(`${p}c`, { ttl: 9 });
  assert.equal(a.leaseId, b.leaseId);
  assert.notEqual(a.leaseId, other.leaseId);
  await Promise.all([a.release(), b.release(), other.release()]);
  for (let i = 0; i < 3; i++) {
    const l = await c.lock(`${p}a`, { ttl: 7 });
    assert.equal(l.leaseId, a.leaseId); // no grant, no revoke per cycle
    await l.release();
  }
  const listed = () => etcdctl('lease', 'list').includes(a.leaseId.toString(16));
  assert.ok(listed());
  await c.close();
  assert.ok(!listed());
});

// covers: LOCK-TRY-001
test('timeout: 0 tries once: WOULD_BLOCK when taken, leaving no key; succeeds when free', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('try');
  const held = await a.lock(name, { timeout: 0 });
  const t0 = Date.now();
  await assert.rejects(b.lock(name, { timeout: 0 }), { code: 'WOULD_BLOCK' });
  assert.ok(Date.now() - t0 < 2000);
  assert.deepEqual(keysUnder(`${name}/`), [held.key.toString()]);
  await held.release();
  const got = await b.lock(name, { timeout: 0 });
  assert.ok(got.isHeld());
  await got.release();
});

// covers: LOCK-TIMEOUT-001
test('timeout: rejects LOCK_TIMEOUT after about that long, with no key and no lease left', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('timeout');
  const held = await a.lock(name);
  const t0 = Date.now();
  const pending = b.lock(name, { timeout: 1000 }).then(() => null, (e) => e);
  // The waiter's queue key names its lease: `<name>/<lease hex>`.
  await waitFor(() => keysUnder(`${name}/`).length === 2, 900, 'the waiter to queue');
  const waiterKey = keysUnder(`${name}/`).find((k) => k !== held.key.toString());
  const waiterLease = waiterKey.slice(`${name}/`.length).split('-')[0];
  assert.match(etcdctl('lease', 'timetolive', waiterLease), /granted with TTL/);
  const err = await pending;
  const took = Date.now() - t0;
  assert.equal(err.code, 'LOCK_TIMEOUT');
  assert.ok(err instanceof Error);
  assert.ok(took >= 980 && took < 4000, `took ${took} ms`);
  // Checked right when the promise settled: core removed the key and revoked the waiter's
  // lease before returning.
  assert.deepEqual(keysUnder(`${name}/`), [held.key.toString()]);
  assert.match(etcdctl('lease', 'timetolive', waiterLease), /already expired/);
  await held.release();
});

// covers: LOCK-CANCEL-001
test('AbortSignal: aborting a waiting acquire rejects AbortError and removes the queue key', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('abort');
  const held = await a.lock(name);
  const ac = new AbortController();
  const pending = b.lock(name, { signal: ac.signal }).then(() => null, (e) => e);
  await waitFor(() => keysUnder(`${name}/`).length === 2, 5000, 'the waiter to queue');
  const reason = new Error('stop');
  ac.abort(reason);
  const err = await pending;
  assert.ok(err instanceof AbortError);
  assert.ok(err instanceof Error);
  assert.equal(err.name, 'AbortError');
  assert.equal(err.cause, reason);
  assert.deepEqual(keysUnder(`${name}/`), [held.key.toString()]);
  await held.release();
});

test('AbortSignal: an already-aborted signal rejects AbortError and sends nothing', async (t) => {
  const c = client(t);
  const name = prefix('aborted');
  const err = await c.lock(name, { signal: AbortSignal.abort() }).then(() => null, (e) => e);
  assert.equal(err.name, 'AbortError');
  assert.deepEqual(keysUnder(`${name}/`), []);
  // Free lock, already-aborted signal: still rejected, still nothing left.
  await assert.rejects(c.lock(name, { timeout: 0, signal: AbortSignal.abort() }), { name: 'AbortError' });
  assert.deepEqual(keysUnder(`${name}/`), []);
});

test('AbortSignal.timeout() works as a deadline; an unused signal changes nothing', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('abort-timeout');
  const held = await a.lock(name);
  await assert.rejects(b.lock(name, { signal: AbortSignal.timeout(200) }), { name: 'AbortError' });
  assert.deepEqual(keysUnder(`${name}/`), [held.key.toString()]);
  await held.release();
  const ac = new AbortController();
  const got = await b.lock(name, { signal: ac.signal });
  ac.abort(); // after acquisition: no effect on the held lock
  assert.ok(got.isHeld());
  await got.release();
});

// covers: LOCK-LOST-001
// covers: LOCK-RELEASE-001 (release after loss)
test('onLost fires once with "key_deleted" when the key is deleted externally (etcdctl del)', async (t) => {
  const c = client(t);
  const name = prefix('lost-del');
  const lock = await c.lock(name);
  const reasons = [];
  let threadOk = true;
  let ranDuringSync = false;
  let inSync = false;
  lock.onLost((r) => {
    reasons.push(r);
    threadOk = threadOk && isMainThread;
    ranDuringSync = ranDuringSync || inSync;
  });
  const off = lock.onLost(() => reasons.push('removed callback ran'));
  off();
  etcdctl('del', lock.key.toString());
  // Busy JS for a while: the callback must wait for the JS thread, never run beside it.
  inSync = true;
  const end = Date.now() + 300;
  while (Date.now() < end);
  inSync = false;
  await waitFor(() => reasons.length > 0, 5000, 'onLost');
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(reasons, ['key_deleted']);
  assert.ok(threadOk);
  assert.equal(ranDuringSync, false);
  assert.equal(lock.isHeld(), false);
  assert.equal(lock.lostReason(), 'key_deleted');
  // Registered after the loss: called too (once).
  const late = [];
  lock.onLost((r) => late.push(r));
  await waitFor(() => late.length === 1, 2000, 'late onLost');
  assert.deepEqual(late, ['key_deleted']);
  await assert.rejects(lock.release(), { code: 'NOT_HELD' });
});

// covers: LOCK-LOST-002
test('onLost fires "closed" on client.close(), and never after a successful release', async () => {
  const c = new Client({ endpoints: ENDPOINTS });
  const name = prefix('lost-close');
  const released = await c.lock(`${name}-r`);
  const relReasons = [];
  released.onLost((r) => relReasons.push(r));
  await released.release();
  const lock = await c.lock(name);
  const reasons = [];
  lock.onLost((r) => reasons.push(r));
  await c.close();
  await waitFor(() => reasons.length === 1, 5000, 'onLost');
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(reasons, ['closed']);
  assert.deepEqual(relReasons, []);
});

test('onLost of a lock reports the lease being revoked externally', async (t) => {
  const c = client(t);
  const name = prefix('lost-revoke');
  const lock = await c.lock(name);
  const reasons = [];
  lock.onLost((r) => reasons.push(r));
  etcdctl('lease', 'revoke', lock.leaseId.toString(16));
  await waitFor(() => reasons.length === 1, 10000, 'onLost');
  // Either path may see it first: the key's deletion or the lease's end.
  assert.ok(['key_deleted', 'expired'].includes(reasons[0]), reasons[0]);
  assert.equal(lock.isHeld(), false);
});

// covers: LOCK-FIFO-001
// covers: LOCK-TOKEN-001
test('waiters are served first come, first served, with increasing tokens', async (t) => {
  const clients = [client(t), client(t), client(t), client(t)];
  const name = prefix('fifo');
  const first = await clients[0].lock(name);
  const order = [];
  const waiters = [];
  for (let i = 1; i < clients.length; i++) {
    waiters.push(
      clients[i].lock(name).then(async (l) => {
        order.push([i, l.fencingToken]);
        await new Promise((r) => setTimeout(r, 20));
        await l.release();
      }),
    );
    // Each waiter queues before the next one starts.
    await waitFor(() => keysUnder(`${name}/`).length === i + 1, 5000, `waiter ${i} to queue`);
  }
  await first.release();
  await Promise.all(waiters);
  assert.deepEqual(order.map(([i]) => i), [1, 2, 3]);
  const tokens = [first.fencingToken, ...order.map(([, tok]) => tok)];
  for (let i = 1; i < tokens.length; i++) assert.ok(tokens[i] > tokens[i - 1]);
  assert.deepEqual(keysUnder(`${name}/`), []);
});

test('concurrent locks on one client: each name independent, same name exclusive', async (t) => {
  const c = client(t);
  const base = prefix('many');
  let inside = 0;
  let maxInside = 0;
  const work = Array.from({ length: 8 }, async (_, i) => {
    for (let n = 0; n < 5; n++) {
      const l = await c.lock(`${base}/shared`, { timeout: 10000 });
      inside++;
      maxInside = Math.max(maxInside, inside);
      await new Promise((r) => setImmediate(r));
      inside--;
      await l.release();
      const own = await c.lock(`${base}/own-${i}`);
      await own.release();
    }
  });
  await Promise.all(work);
  assert.equal(maxInside, 1);
  assert.deepEqual(keysUnder(`${base}/`), []);
});

// covers: LOCK-EXCL-001
test('many contenders on several clients: guarded read-increment-write never overlaps, loses nothing', async (t) => {
  const clients = [client(t), client(t), client(t), client(t)];
  const name = prefix('excl');
  const counter = `${name}-counter`;
  const TASKS_PER_CLIENT = 3;
  const ROUNDS = 5;
  let inside = 0;
  let maxInside = 0;
  let acquisitions = 0;
  const work = [];
  for (const c of clients) {
    for (let k = 0; k < TASKS_PER_CLIENT; k++) {
      work.push(
        (async () => {
          for (let n = 0; n < ROUNDS; n++) {
            const l = await c.lock(name, { timeout: 20000 });
            inside++;
            maxInside = Math.max(maxInside, inside);
            acquisitions++;
            // Read, yield to the other contenders, write back: an overlap would lose an increment.
            const v = await c.get(counter);
            await new Promise((r) => setTimeout(r, 1));
            await c.put(counter, String(Number(v ? v.toString() : '0') + 1), { ifHeld: l });
            inside--;
            await l.release();
          }
        })(),
      );
    }
  }
  await Promise.all(work);
  assert.equal(acquisitions, clients.length * TASKS_PER_CLIENT * ROUNDS);
  assert.equal(maxInside, 1);
  // Read back by etcdctl, not by the library under test.
  assert.equal(etcdctl('get', '--print-value-only', counter).trim(), String(acquisitions));
  assert.deepEqual(keysUnder(`${name}/`), []);
});
