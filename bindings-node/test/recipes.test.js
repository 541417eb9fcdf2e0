'use strict';
// Leader election, the semaphore and the read-write lock, against the real test etcd: every
// acquisition is a Lock (fencing token, ifHeld guarded writes, onLost), and what etcd holds is
// read back with etcdctl, not with the library under test.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { ENDPOINTS, REPO, prefix, etcdctl, keysUnder, waitFor } = require('./helpers');
const { Client, Lock, Leadership, Election, Observer, RwLock, EtcdlockError, AbortError, MAX_PERMITS } = require('..');
const esm = import('../index.mjs');

const INVALID = { code: 'INVALID_ARGUMENT', name: 'EtcdlockError' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A client for the test, closed after it. */
function client(t) {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  return c;
}

/** `p`, or a rejection after `ms` (no test waits without a bound). */
function within(p, ms, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/** The mod revision of `key` as etcd has it (etcdctl), or null. */
function modRevision(key) {
  const kvs = JSON.parse(etcdctl('get', key, '-w', 'json')).kvs || [];
  return kvs.length ? BigInt(kvs[0].mod_revision) : null;
}

/** The value of `key` as etcd has it (etcdctl), or null. */
function valueOf(key) {
  const kvs = JSON.parse(etcdctl('get', key, '-w', 'json')).kvs || [];
  return kvs.length ? Buffer.from(kvs[0].value, 'base64').toString() : null;
}

/** Follows `observer` into `seen` (values as strings, null for no leader); resolves when it ends. */
function follow(observer, seen) {
  return (async () => {
    let n = 0;
    for await (const leader of observer) {
      seen.push(leader === null ? null : leader.value.toString());
      if (++n > 100) throw new Error('more changes than the test made');
    }
  })();
}

// ------------------------------------------------------------------------ election ---

// covers: ELECT-BASIC-001, ELECT-PROCLAIM-001, ELECT-RESIGN-001
test('election: no leader, campaign leads at once, proclaim, resign, a later term has a bigger token', async (t) => {
  const c = client(t);
  const name = prefix('elect');
  const election = c.election(name, { ttl: 10 });
  assert.ok(election instanceof Election);
  assert.equal(election.name.toString(), name);
  assert.equal(await election.leader(), null);

  const t0 = Date.now();
  const leadership = await election.campaign('node-1', { timeout: 5000 });
  assert.ok(Date.now() - t0 < 2000, 'nobody else campaigns: leads at once');
  assert.ok(leadership instanceof Leadership);
  assert.ok(leadership instanceof Lock);
  assert.ok(leadership.isLeader());
  assert.ok(leadership.isHeld());
  // The leader is our key `<name>/<lease hex>`, with our value, token and lease.
  const key = `${name}/${leadership.leaseId.toString(16)}`;
  assert.equal(leadership.key.toString(), key);
  assert.deepEqual(keysUnder(`${name}/`), [key]);
  assert.equal(valueOf(key), 'node-1');
  const leader = await election.leader();
  assert.ok(Buffer.isBuffer(leader.value) && Buffer.isBuffer(leader.key));
  assert.deepEqual(
    { value: leader.value.toString(), key: leader.key.toString(), revision: leader.revision, lease: leader.lease },
    { value: 'node-1', key, revision: leadership.fencingToken, lease: leadership.leaseId },
  );

  // ELECT-PROCLAIM-001: the new value, same key and token; the write's revision is returned.
  const rev = await leadership.proclaim(Buffer.from('node-1 ready'));
  assert.equal(typeof rev, 'bigint');
  assert.ok(rev > leadership.fencingToken);
  assert.equal(modRevision(key), rev);
  assert.equal(valueOf(key), 'node-1 ready');
  const after = await election.leader();
  assert.equal(after.value.toString(), 'node-1 ready');
  assert.equal(after.key.toString(), key);
  assert.equal(after.revision, leadership.fencingToken);
  // A leadership is a lock for guarded writes.
  const data = `${name}-data`;
  await c.put(data, 'x', { ifHeld: leadership });
  assert.equal(valueOf(data), 'x');

  // ELECT-RESIGN-001: no leader; the late proclaim is NOT_HELD; the next term's token is bigger.
  await leadership.resign();
  assert.equal(leadership.isLeader(), false);
  assert.equal(await election.leader(), null);
  assert.deepEqual(keysUnder(`${name}/`), []);
  await assert.rejects(leadership.proclaim('late'), { code: 'NOT_HELD', name: 'EtcdlockError' });
  await assert.rejects(leadership.resign(), { code: 'NOT_HELD' });
  assert.deepEqual(keysUnder(`${name}/`), []);
  const again = await election.campaign('node-1');
  assert.ok(again.fencingToken > leadership.fencingToken);
  // `await using` resigns: Symbol.asyncDispose.
  await again[Symbol.asyncDispose]();
  assert.equal(again.isLeader(), false);
  assert.deepEqual(keysUnder(`${name}/`), []);
  assert.equal(await election.leader(), null);
});

// covers: ELECT-PROCLAIM-FENCED-001
test("election: the leader's key deleted behind its back: proclaim and guarded writes are NOT_HELD, nothing written", async (t) => {
  const c = client(t);
  const name = prefix('elect-fenced');
  const election = c.election(name);
  const leadership = await election.campaign('me');
  const reasons = [];
  leadership.onLost((r) => reasons.push(r));
  const data = `${name}-data`;
  await c.put(data, 'before', { ifHeld: leadership });
  etcdctl('del', leadership.key.toString());
  await assert.rejects(leadership.proclaim('still me'), { code: 'NOT_HELD' });
  await assert.rejects(c.put(data, 'after', { ifHeld: leadership }), { code: 'NOT_HELD' });
  await assert.rejects(leadership.put(data, 'after'), { code: 'NOT_HELD' });
  // Nothing written: the data key keeps its value, and no leader (no candidate key) appears.
  assert.equal(valueOf(data), 'before');
  assert.deepEqual(keysUnder(`${name}/`), []);
  assert.equal(await election.leader(), null);
  assert.equal(leadership.isLeader(), false);
  await waitFor(() => reasons.length === 1, 5000, 'onLost');
  assert.deepEqual(reasons, ['key_deleted']);
  assert.equal(leadership.lostReason(), 'key_deleted');
});

// covers: ELECT-FIFO-001
test('election: candidates wait in turn while one leads, and lead with bigger tokens and their own values', async (t) => {
  const [a, b, c] = [client(t), client(t), client(t)];
  const name = prefix('elect-fifo');
  const first = await a.election(name).campaign('a');
  const order = [];
  const candidates = [];
  for (const [i, cl] of [[1, b], [2, c]]) {
    candidates.push(
      cl
        .election(name)
        .campaign(`cand-${i}`, { timeout: 10000 })
        .then(async (l) => {
          const leader = await a.election(name).leader();
          order.push([i, l.fencingToken, leader.value.toString()]);
          await l.resign();
        }),
    );
    await waitFor(() => keysUnder(`${name}/`).length === i + 1, 5000, `candidate ${i} to queue`);
  }
  await sleep(200);
  assert.deepEqual(order, [], 'nobody leads while the first one does');
  assert.equal((await a.election(name).leader()).value.toString(), 'a');
  await first.resign();
  await within(Promise.all(candidates), 10000, 'the candidates');
  assert.deepEqual(order.map(([i, , v]) => [i, v]), [[1, 'cand-1'], [2, 'cand-2']]);
  assert.ok(order[0][1] > first.fencingToken && order[1][1] > order[0][1]);
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// covers: ELECT-TIMEOUT-001
test('election: campaign with timeout 0 is WOULD_BLOCK, with 300 ms LOCK_TIMEOUT, neither leaves a key', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('elect-timeout');
  const leader = await a.election(name).campaign('a');
  const election = b.election(name);
  await assert.rejects(election.campaign('b', { timeout: 0 }), { code: 'WOULD_BLOCK', name: 'EtcdlockError' });
  assert.deepEqual(keysUnder(`${name}/`), [leader.key.toString()]);
  const t0 = Date.now();
  const err = await election.campaign('b', { timeout: 300 }).then(() => null, (e) => e);
  const took = Date.now() - t0;
  assert.ok(err instanceof EtcdlockError, String(err));
  assert.equal(err.code, 'LOCK_TIMEOUT');
  assert.ok(took >= 290 && took < 3000, `took ${took} ms`);
  assert.deepEqual(keysUnder(`${name}/`), [leader.key.toString()]);
  // An AbortSignal works as for a lock: AbortError, the key gone.
  const ac = new AbortController();
  const pending = election.campaign('b', { signal: ac.signal }).then(() => null, (e) => e);
  await waitFor(() => keysUnder(`${name}/`).length === 2, 5000, 'the candidate to queue');
  ac.abort();
  const aborted = await pending;
  assert.ok(aborted instanceof AbortError, String(aborted));
  assert.deepEqual(keysUnder(`${name}/`), [leader.key.toString()]);
  assert.equal((await election.leader()).value.toString(), 'a');
  await leader.resign();
});

// covers: ELECT-PHANTOM-001
test("election: a waiting candidate whose lease is revoked fails LOCK_LOST and never leads", async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('elect-phantom');
  const leader = await a.election(name).campaign('a');
  const pending = b.election(name, { ttl: 7 }).campaign('b', { timeout: 10000 }).then(() => null, (e) => e);
  await waitFor(() => keysUnder(`${name}/`).length === 2, 5000, 'the candidate to queue');
  const waiterKey = keysUnder(`${name}/`).find((k) => k !== leader.key.toString());
  etcdctl('lease', 'revoke', waiterKey.slice(`${name}/`.length).split('-')[0]);
  const err = await within(pending, 5000, 'the campaign to fail');
  assert.equal(err && err.code, 'LOCK_LOST', String(err));
  assert.ok(leader.isLeader());
  assert.deepEqual(keysUnder(`${name}/`), [leader.key.toString()]);
  await leader.resign();
});

// covers: ELECT-OBSERVE-001, ELECT-OBSERVE-NOLEADER-001
test('observe: the current state first, then each leader and proclamation; null when nobody leads; ends at close', async (t) => {
  const [a, b] = [client(t), client(t)];
  const watcher = new Client({ endpoints: ENDPOINTS });
  t.after(() => watcher.close());
  const name = prefix('elect-observe');
  const observer = watcher.election(name).observe();
  assert.ok(observer instanceof Observer);
  assert.equal(observer[Symbol.asyncIterator](), observer);
  const seen = [];
  const following = follow(observer, seen);
  following.catch(() => {});
  await waitFor(() => seen.length === 1, 5000, 'the current state');
  assert.deepEqual(seen, [null]);

  const leaderA = await a.election(name).campaign('a');
  await waitFor(() => seen.length === 2, 5000, 'the first leader');
  // A second candidate is no change.
  const candidateB = b.election(name).campaign('b', { timeout: 10000 });
  await waitFor(() => keysUnder(`${name}/`).length === 2, 5000, 'the second candidate');
  await sleep(300);
  assert.deepEqual(seen, [null, 'a']);
  await leaderA.proclaim('a2');
  await waitFor(() => seen.length === 3, 5000, 'the proclamation');
  await leaderA.resign();
  const leaderB = await within(candidateB, 5000, 'the second candidate to lead');
  await waitFor(() => seen.length === 4, 5000, 'the second leader');
  assert.deepEqual(seen, [null, 'a', 'a2', 'b']);

  // ELECT-OBSERVE-NOLEADER-001: the last candidate resigns: null; the client closes: the end.
  await leaderB.resign();
  await waitFor(() => seen.length === 5, 5000, 'no leader');
  assert.deepEqual(seen, [null, 'a', 'a2', 'b', null]);
  await watcher.close();
  await within(following, 5000, 'the observer to end at close');
  assert.deepEqual(seen, [null, 'a', 'a2', 'b', null]);
  assert.deepEqual(await observer.next(), { value: undefined, done: true });
  // Observing with a closed client fails CLOSED.
  await assert.rejects(watcher.election(name).observe().next(), { code: 'CLOSED' });
});

test('observe: leaving the loop (return) or close() ends it; a leader is reported with key, token and lease', async (t) => {
  const c = client(t);
  const name = prefix('elect-observe-close');
  const leadership = await c.election(name).campaign('x');
  const observer = c.election(name).observe();
  for await (const leader of observer) {
    assert.deepEqual(leader, { value: Buffer.from('x'), key: leadership.key, revision: leadership.fencingToken, lease: leadership.leaseId });
    break; // return(): closes it
  }
  assert.deepEqual(await observer.next(), { value: undefined, done: true });
  // close() while a next() waits (nothing changes): it resolves done.
  const second = c.election(name).observe();
  assert.equal((await second.next()).value.value.toString(), 'x');
  const waiting = second.next();
  await sleep(100);
  second.close();
  assert.deepEqual(await within(waiting, 5000, 'next() after close'), { value: undefined, done: true });
  await leadership.resign();
});

// covers: ELECT-INTEROP-001 (etcdctl elect -l sees our leader and our proclamation)
test('election: `etcdctl elect -l` (Go concurrency.Election) prints our leader and its proclamation', async (t) => {
  const c = client(t);
  const name = prefix('elect-interop');
  const leadership = await c.election(name).campaign('ours');
  const ctl = process.env.ETCDCTL_BIN || path.join(REPO, '.tools', 'bin', 'etcdctl');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ETCDCTL_')));
  const listen = spawn(ctl, ['--endpoints', ENDPOINTS.join(','), 'elect', '-l', name], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => listen.kill('SIGKILL'));
  let out = '';
  listen.stdout.on('data', (d) => (out += d));
  await waitFor(() => out.includes('ours'), 10000, 'etcdctl elect -l to print our leader');
  await leadership.proclaim('ours, proclaimed');
  await waitFor(() => out.includes('ours, proclaimed'), 10000, 'etcdctl elect -l to print the proclamation');
  assert.ok(out.includes(leadership.key.toString()), out);
  await leadership.resign();
});

// ----------------------------------------------------------------------- semaphore ---

// covers: SEM-LIMIT-001
test('semaphore: 8 clients x 4 rounds on 3 permits: never more than 3 holders (marks in etcd), 3 reached, no key left', async (t) => {
  const CLIENTS = 8;
  const ROUNDS = 4;
  const PERMITS = 3;
  const clients = Array.from({ length: CLIENTS }, () => client(t));
  const name = prefix('sem-limit');
  const mark = (i) => `${name}-marks/${i}`;
  let inside = 0;
  let maxInside = 0;
  let maxMarks = 0;
  let acquisitions = 0;
  // One read of the whole prefix (one revision): marks read one by one could count a holder
  // that left and the one that came after it.
  const marksIn = async () => etcdctl('get', '--prefix', '--print-value-only', `${name}-marks/`).split('\n').filter((v) => v === 'in').length;
  const work = clients.map(async (c, i) => {
    for (let n = 0; n < ROUNDS; n++) {
      const permit = await c.semaphore(name, { permits: PERMITS, ttl: 10, timeout: 20000 });
      assert.ok(permit instanceof Lock);
      inside++;
      acquisitions++;
      maxInside = Math.max(maxInside, inside);
      await c.put(mark(i), 'in', { ifHeld: permit });
      maxMarks = Math.max(maxMarks, await marksIn());
      await sleep(30);
      maxMarks = Math.max(maxMarks, await marksIn());
      await permit.put(mark(i), 'out');
      inside--;
      await permit.release();
    }
  });
  await within(Promise.all(work), 60000, 'the semaphore rounds');
  assert.equal(acquisitions, CLIENTS * ROUNDS);
  assert.equal(maxInside, PERMITS);
  assert.ok(maxMarks <= PERMITS, `${maxMarks} marks at once`);
  assert.equal(maxMarks, PERMITS, 'all permits were in use at some point');
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// covers: SEM-PERMITS-001, ERR-TYPE-001, ERR-BADNAME-001
test('semaphore: bad permits are INVALID_ARGUMENT before anything is sent; participants must agree on the count', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('sem-permits');
  assert.equal(MAX_PERMITS, 1024);
  for (const permits of [0, MAX_PERMITS + 1, -1, 1.5, NaN, Infinity, '3', 3n, null, undefined]) {
    await assert.rejects(a.semaphore(name, { permits }), INVALID, String(permits));
  }
  await assert.rejects(a.semaphore(name), INVALID);
  await assert.rejects(a.semaphore(name, 3), INVALID);
  for (const bad of ['', `${name}/`, 'a\0b', 42, null]) {
    await assert.rejects(a.semaphore(bad, { permits: 3 }), INVALID, String(bad));
  }
  await assert.rejects(a.semaphore(name, { permits: 3, ttl: 0 }), INVALID);
  await assert.rejects(a.semaphore(name, { permits: 3, timeout: -1 }), INVALID);
  await assert.rejects(a.semaphore(name, { permits: 3, signal: 'x' }), INVALID);
  await assert.rejects(a.semaphore(name, { permits: 3, value: 5 }), INVALID);
  assert.deepEqual(keysUnder(name), []);

  // A participant with 2 while one with 3 holds: INVALID_ARGUMENT naming the 3, nothing left.
  const held = await a.semaphore(name, { permits: 3 });
  const err = await b.semaphore(name, { permits: 2 }).then(() => null, (e) => e);
  assert.ok(err instanceof EtcdlockError, String(err));
  assert.equal(err.code, 'INVALID_ARGUMENT');
  assert.match(err.message, /\b3\b/);
  assert.deepEqual(keysUnder(`${name}/`), [held.key.toString()]);
  // The same count works beside it.
  const second = await b.semaphore(name, { permits: 3, timeout: 0 });
  await Promise.all([held.release(), second.release()]);
  // Nobody participates any more: a new count works.
  const two = await b.semaphore(name, { permits: 2, timeout: 0 });
  assert.ok(two.isHeld());
  await two.release();

  // A semaphore on a name a plain lock holds: INVALID_ARGUMENT, nothing left.
  const lockName = prefix('sem-on-lock');
  const lock = await a.lock(lockName);
  await assert.rejects(b.semaphore(lockName, { permits: 2, timeout: 1000 }), INVALID);
  assert.deepEqual(keysUnder(`${lockName}/`), [lock.key.toString()]);
  await lock.release();
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// covers: SEM-TRY-001, SEM-TIMEOUT-001
test('semaphore: full: try once is WOULD_BLOCK, a 300 ms wait LOCK_TIMEOUT, neither leaves a key; a release frees a permit', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('sem-try');
  const p1 = await a.semaphore(name, { permits: 2, value: 'first' });
  const p2 = await b.semaphore(name, { permits: 2, timeout: 0 });
  assert.notEqual(p1.key.toString(), p2.key.toString());
  assert.ok(p2.fencingToken > p1.fencingToken);
  const holders = [p1.key.toString(), p2.key.toString()].sort();
  const t0 = Date.now();
  await assert.rejects(b.semaphore(name, { permits: 2, timeout: 0 }), { code: 'WOULD_BLOCK' });
  assert.ok(Date.now() - t0 < 2000);
  assert.deepEqual(keysUnder(`${name}/`).sort(), holders);
  const t1 = Date.now();
  const err = await a.semaphore(name, { permits: 2, timeout: 300 }).then(() => null, (e) => e);
  const took = Date.now() - t1;
  assert.equal(err && err.code, 'LOCK_TIMEOUT', String(err));
  assert.ok(took >= 290 && took < 3000, `took ${took} ms`);
  assert.deepEqual(keysUnder(`${name}/`).sort(), holders);
  // inspect() shows the holders like a lock's queue.
  const state = await a.inspect(name);
  assert.ok(state.holder !== null);
  await p1.release();
  const p3 = await b.semaphore(name, { permits: 2, timeout: 0 });
  assert.ok(p3.isHeld());
  await Promise.all([p2.release(), p3.release()]);
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// covers: SEM-FIFO-001
test('semaphore: waiters get permits in arrival order, with increasing tokens', async (t) => {
  const clients = Array.from({ length: 7 }, () => client(t));
  const name = prefix('sem-fifo');
  const held = [await clients[0].semaphore(name, { permits: 2 }), await clients[1].semaphore(name, { permits: 2 })];
  const order = [];
  const got = [];
  for (let i = 2; i < clients.length; i++) {
    got.push(
      clients[i].semaphore(name, { permits: 2, timeout: 20000 }).then((p) => {
        order.push([i, p.fencingToken]);
        return p;
      }),
    );
    await waitFor(() => keysUnder(`${name}/`).length === i + 1, 5000, `waiter ${i} to queue`);
  }
  // Release one permit at a time; each release lets exactly the next waiter in.
  let holders = held;
  for (let n = 1; n <= clients.length - 2; n++) {
    await holders[0].release();
    await waitFor(() => order.length === n, 5000, `permit ${n}`);
    await sleep(50);
    assert.equal(order.length, n, 'one release, one permit');
    holders = [holders[1], await got[n - 1]];
  }
  assert.deepEqual(order.map(([i]) => i), [2, 3, 4, 5, 6]);
  for (let i = 1; i < order.length; i++) assert.ok(order[i][1] > order[i - 1][1]);
  await Promise.all(holders.map((p) => p.release()));
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// covers: SEM-COUNT-001
test('semaphore count: a request for 2 waits at the head for two permits, later single ones wait behind it; one key, one token', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('sem-count');
  const x = await a.semaphore(name, { permits: 3 });
  const y = await a.semaphore(name, { permits: 3 });
  // One permit is free: the request for two waits at the head ...
  let two = null;
  const waiting = b.semaphore(name, { permits: 3, count: 2, value: 'double', timeout: 10000 }).then((p) => (two = p));
  await waitFor(() => keysUnder(`${name}/`).length === 3, 5000, 'the request for two to queue');
  // ... and a later request for one waits behind it, though a permit is free.
  await assert.rejects(a.semaphore(name, { permits: 3, timeout: 500 }), { code: 'LOCK_TIMEOUT' }, 'a single request passed the waiting double one');
  await assert.rejects(a.semaphore(name, { permits: 3, timeout: 0 }), { code: 'WOULD_BLOCK' });
  assert.equal(two, null);
  await x.release();
  await within(waiting, 5000, 'two permits');
  assert.ok(two instanceof Lock);
  assert.ok(two.fencingToken > y.fencingToken);
  // Two of three held by it and one by y: nothing is free; inspect shows its count.
  await assert.rejects(a.semaphore(name, { permits: 3, timeout: 0 }), { code: 'WOULD_BLOCK' });
  const state = await a.inspect(name);
  assert.deepEqual(state.holders.map((h) => [h.mode, h.value.toString()]), [['permits=3', ''], ['permits=3,count=2', 'double']]);
  assert.equal(keysUnder(`${name}/`).length, 2, 'one key for two permits');
  await two.release();
  // Both permits came back at once: two single ones fit beside y.
  const [p1, p2] = [await a.semaphore(name, { permits: 3, timeout: 0 }), await b.semaphore(name, { permits: 3, timeout: 0 })];
  await Promise.all([y.release(), p1.release(), p2.release()]);
  // Count 0, above the permits or not a whole number: refused before anything is sent.
  for (const count of [0, 4, -1, 1.5, NaN, '2', MAX_PERMITS + 1]) {
    await assert.rejects(a.semaphore(name, { permits: 3, count }), INVALID, String(count));
  }
  const all = await a.semaphore(name, { permits: 3, count: 3, timeout: 0 });
  await all.release();
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// --------------------------------------------------------------------- rwlock ---

// covers: RW-READERS-001
test('rwlock: readers hold together; a writer waits for the last reader, then excludes readers', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('rw-readers');
  const rwA = a.rwlock(name, { ttl: 10 });
  const rwB = b.rwlock(name);
  assert.ok(rwA instanceof RwLock);
  assert.equal(rwA.name.toString(), name);
  const readers = [await rwA.read({ timeout: 5000 }), await rwA.read({ timeout: 5000 }), await rwB.read({ timeout: 5000, value: 'b' })];
  assert.ok(readers.every((r) => r instanceof Lock && r.isHeld()));
  const readerKeys = readers.map((r) => r.key.toString()).sort();
  await assert.rejects(rwB.write({ timeout: 0 }), { code: 'WOULD_BLOCK' });
  assert.deepEqual(keysUnder(`${name}/`).sort(), readerKeys);
  const t0 = Date.now();
  await assert.rejects(rwB.write({ timeout: 300 }), { code: 'LOCK_TIMEOUT' });
  assert.ok(Date.now() - t0 >= 290);
  assert.deepEqual(keysUnder(`${name}/`).sort(), readerKeys);

  let writer = null;
  const writing = rwB.write({ timeout: 10000 }).then((w) => (writer = w));
  await waitFor(() => keysUnder(`${name}/`).length === 4, 5000, 'the writer to queue');
  for (const r of readers) {
    await sleep(100);
    assert.equal(writer, null, 'the writer waits while a reader holds');
    await r.release();
  }
  await within(writing, 5000, 'the writer');
  assert.ok(writer.isHeld());
  assert.ok(readers.every((r) => writer.fencingToken > r.fencingToken));
  await assert.rejects(rwA.read({ timeout: 0 }), { code: 'WOULD_BLOCK' });
  await assert.rejects(rwA.write({ timeout: 0 }), { code: 'WOULD_BLOCK' });
  const data = `${name}-data`;
  await a.put(data, 'v2', { ifHeld: writer });
  assert.equal(valueOf(data), 'v2');
  await writer.release();
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// covers: LOCK-INSPECT-002
test('inspect: every holder of a semaphore, of a read-write lock and of an election, with its mode', async (t) => {
  const c = client(t);
  const view = (entries) => entries.map((e) => [e.mode, e.value.toString()]);
  const slots = prefix('inspect-slots');
  const [p1, p2] = [await c.semaphore(slots, { permits: 2, value: 'one' }), await c.semaphore(slots, { permits: 2, value: 'two' })];
  const third = c.semaphore(slots, { permits: 2, value: 'three', timeout: 10000 });
  await waitFor(() => keysUnder(`${slots}/`).length === 3, 5000, 'the third to queue');
  let s = await c.inspect(slots);
  assert.deepEqual(view(s.holders), [['permits=2', 'one'], ['permits=2', 'two']]);
  assert.deepEqual(view(s.waiters), [['permits=2', 'three']]);
  assert.equal(s.holder.fencingToken, p1.fencingToken);
  await p1.release();
  await (await within(third, 5000, 'the third permit')).release();
  await p2.release();

  const cfg = prefix('inspect-cfg');
  const rw = c.rwlock(cfg);
  const readers = [await rw.read(), await rw.read()];
  const writing = rw.write({ timeout: 10000 });
  await waitFor(() => keysUnder(`${cfg}/`).length === 3, 5000, 'the writer to queue');
  s = await c.inspect(cfg);
  assert.deepEqual([s.holders.map((e) => e.mode), s.waiters.map((e) => e.mode)], [['read', 'read'], ['write']]);
  for (const r of readers) await r.release();
  await (await within(writing, 5000, 'the writer')).release();

  const svc = prefix('inspect-svc');
  const leadership = await c.election(svc).campaign('node-1', { timeout: 5000 });
  s = await c.inspect(svc);
  assert.deepEqual([view(s.holders), s.waiters], [[['', 'node-1']], []]);
  await leadership.resign();
});

// covers: RW-WRITER-FAIR-001
test('rwlock: a reader arriving after a waiting writer waits for it: reader, writer, reader', async (t) => {
  const [a, b, c] = [client(t), client(t), client(t)];
  const name = prefix('rw-fair');
  const order = [];
  const first = await a.rwlock(name).read();
  order.push('r1');
  const writing = b
    .rwlock(name)
    .write({ timeout: 10000 })
    .then(async (w) => {
      order.push('w');
      await sleep(100);
      order.push('w-end');
      await w.release();
    });
  await waitFor(() => keysUnder(`${name}/`).length === 2, 5000, 'the writer to queue');
  // A later reader does not overtake the waiting writer.
  await assert.rejects(c.rwlock(name).read({ timeout: 0 }), { code: 'WOULD_BLOCK' });
  assert.equal(keysUnder(`${name}/`).length, 2);
  const reading = c
    .rwlock(name)
    .read({ timeout: 10000 })
    .then(async (r) => {
      order.push('r2');
      await r.release();
    });
  await waitFor(() => keysUnder(`${name}/`).length === 3, 5000, 'the second reader to queue');
  await sleep(200);
  assert.deepEqual(order, ['r1'], 'the second reader waits behind the writer');
  await first.release();
  await within(Promise.all([writing, reading]), 10000, 'the writer and the reader');
  assert.deepEqual(order, ['r1', 'w', 'w-end', 'r2']);
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// covers: RW-MUTEX-001
test('rwlock: a plain lock on the name counts as a writer, and a mutex waits for readers', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('rw-mutex');
  const lock = await a.lock(name);
  const rw = b.rwlock(name);
  await assert.rejects(rw.read({ timeout: 0 }), { code: 'WOULD_BLOCK' });
  await assert.rejects(rw.read({ timeout: 300 }), { code: 'LOCK_TIMEOUT' });
  assert.deepEqual(keysUnder(`${name}/`), [lock.key.toString()]);
  await lock.release();
  const readers = [await rw.read({ timeout: 0 }), await rw.read({ timeout: 0 })];
  await assert.rejects(a.lock(name, { timeout: 0 }), { code: 'WOULD_BLOCK' });
  assert.deepEqual(keysUnder(`${name}/`).sort(), readers.map((r) => r.key.toString()).sort());
  await Promise.all(readers.map((r) => r.release()));
});

// ---------------------------------------------------------------------- arguments ---

// covers: ERR-BADNAME-001, ERR-BADTTL-001, ERR-TYPE-001
test('election and rwlock: bad names, TTLs and options throw INVALID_ARGUMENT synchronously; nothing is sent', async (t) => {
  const c = client(t);
  const name = prefix('recipe-args');
  for (const make of [(n, o) => c.election(n, o), (n, o) => c.rwlock(n, o)]) {
    for (const bad of ['', Buffer.alloc(0), `${name}/`, 'a\0b', 42, null, {}]) {
      assert.throws(() => make(bad), INVALID, String(bad));
    }
    for (const opts of ['ttl=10', { ttl: 0 }, { ttl: -1 }, { ttl: 1.5 }, { ttl: '10' }, { ttl: 9_000_000_001 }]) {
      assert.throws(() => make(name, opts), INVALID, JSON.stringify(opts));
    }
  }
  const election = c.election(name);
  for (const v of [undefined, null, 42, {}]) {
    await assert.rejects(election.campaign(v), INVALID, String(v));
  }
  await assert.rejects(election.campaign('x'.repeat(4097)), INVALID);
  await assert.rejects(election.campaign('v', { timeout: -1 }), INVALID);
  await assert.rejects(election.campaign('v', { timeout: '100' }), INVALID);
  await assert.rejects(election.campaign('v', { signal: {} }), INVALID);
  await assert.rejects(election.campaign('v', { ttl: 5 }), INVALID);
  await assert.rejects(election.campaign('v', { value: 'w' }), INVALID);
  await assert.rejects(election.campaign('v', 'opts'), INVALID);
  await assert.rejects(election.campaign('v', { signal: AbortSignal.abort() }), { name: 'AbortError' });
  const rw = c.rwlock(name);
  for (const acquire of [(o) => rw.read(o), (o) => rw.write(o)]) {
    await assert.rejects(acquire({ ttl: 5 }), INVALID);
    await assert.rejects(acquire({ timeout: NaN }), INVALID);
    await assert.rejects(acquire({ value: 5 }), INVALID);
    await assert.rejects(acquire('opts'), INVALID);
    await assert.rejects(acquire({ signal: AbortSignal.abort() }), { name: 'AbortError' });
  }
  const leadership = await election.campaign('v');
  await assert.rejects(leadership.proclaim(5), INVALID);
  await assert.rejects(leadership.proclaim('x'.repeat(4097)), INVALID);
  assert.throws(() => leadership.onLost('cb'), INVALID);
  await leadership.resign();
  assert.deepEqual(keysUnder(name), []);
});

test('the ESM entry exports the recipe classes (the same objects)', async () => {
  const m = await esm;
  const cjs = require('..');
  for (const k of ['Leadership', 'Election', 'Observer', 'RwLock', 'MAX_PERMITS']) assert.equal(m[k], cjs[k], k);
});
