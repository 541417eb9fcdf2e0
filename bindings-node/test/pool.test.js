'use strict';
// Pools of named slots (`client.pool()`) against a real etcd: never two holders of a slot
// (counted with fenced writes per slot, read back from etcd's history), a SIGKILLed holder's slot
// rests the reuse delay and a released one does not, FIFO admission with the head-of-line rule,
// owners, definitions that disagree, slots added and removed at runtime, aborts and bad input
// that leave nothing. What etcd holds is read with etcdctl, not with the library under test.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const { ENDPOINTS, PKG, prefix, etcdctl, keysUnder, waitFor } = require('./helpers');
const etcdlock = require('..');
const { Client, Pool, PoolHolding, AbortError, Fence, StaleFence, MAX_POOL_SLOTS, MAX_POOL_COUNT } = etcdlock;
const fencing = require('etcdlock/fencing'); // as test/fencing.test.js: the package's subpath export
const Sqlite = require('better-sqlite3');

const esm = import('../index.mjs');
const INVALID = { code: 'INVALID_ARGUMENT', name: 'EtcdlockError' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

/** Keys a pool holds besides its definition and markers: admission requests, slot keys, rests. */
function liveKeys(name) {
  return keysUnder(`${name}/`).filter((k) => /\/(queue|slot|cool)\//.test(k));
}

/** Every event under `key` from `from` up to revision `to` (etcd's history), through a watch. */
async function history(c, key, from, to) {
  const events = [];
  const w = c.watch(key, { prefix: true, startRevision: from });
  try {
    for await (const ev of w) {
      events.push(ev);
      if (ev.revision >= to) break;
    }
  } finally {
    w.close();
  }
  return events;
}

// covers: POOL-EXCL-001
test('12 workers on a pool of 3: never two holders of a slot, never more than 3 (fenced marks in etcd history)', async (t) => {
  const WORKERS = 12;
  const ROUNDS = 5;
  const name = prefix('pool-excl');
  const marks = `${name}-using/`;
  const clients = Array.from({ length: WORKERS }, () => client(t));
  const start = BigInt(JSON.parse(etcdctl('get', 'x', '-w', 'json')).header.revision) + 1n;
  /** slot -> the worker holding it, as the workers see it */
  const using = new Map();
  let holders = 0;
  let maxHolders = 0;
  let last = 0n;
  const work = clients.map(async (c, i) => {
    const pool = c.pool(name, { slots: ['gpu0', 'gpu1', 'gpu2'], reuseDelay: 2000 });
    for (let round = 0; round < ROUNDS; round++) {
      const held = await pool.acquire({ timeout: 30000 });
      assert.ok(held instanceof PoolHolding);
      const [slot] = held.slots;
      assert.equal(held.slots.length, 1);
      assert.equal(using.get(slot), undefined, `slot ${slot} held by workers ${using.get(slot)} and ${i}`);
      using.set(slot, i);
      holders++;
      maxHolders = Math.max(maxHolders, holders);
      assert.ok(holders <= 3, `${holders} holders`);
      const me = `${i}.${round}`;
      await c.put(`${marks}${slot}`, `in ${me}`, { ifHeld: held });
      await sleep(3 * (i % 4));
      const rev = await c.put(`${marks}${slot}`, `out ${me}`, { ifHeld: held });
      if (rev > last) last = rev;
      using.delete(slot);
      holders--;
      await held.release();
    }
  });
  await within(Promise.all(work), 25000, 'the workers');
  assert.equal(maxHolders, 3, 'all slots were in use at some point');

  // etcd's history of the marks: per slot, "in x" then "out x" by the same holder, and never more
  // than 3 slots in use at one revision.
  const events = await history(clients[0], marks, start, last);
  const bySlot = new Map();
  let inUse = 0;
  let maxInUse = 0;
  for (const ev of events) {
    assert.equal(ev.type, 'put');
    const slot = ev.key.toString().slice(marks.length);
    const [what, who] = ev.value.toString().split(' ');
    const before = bySlot.get(slot);
    if (what === 'in') {
      assert.ok(before === undefined || before.startsWith('out'), `slot ${slot}: "in ${who}" while "${before}" (revision ${ev.revision})`);
      inUse++;
    } else {
      assert.equal(before, `in ${who}`, `slot ${slot}: "out ${who}" after "${before}" (revision ${ev.revision})`);
      inUse--;
    }
    maxInUse = Math.max(maxInUse, inUse);
    bySlot.set(slot, ev.value.toString());
  }
  assert.equal(events.length, 2 * WORKERS * ROUNDS, 'every holding wrote its two marks');
  assert.ok(maxInUse <= 3 && maxInUse >= 1, `${maxInUse} slots in use at once`);
  assert.deepEqual([...bySlot.keys()].sort(), ['gpu0', 'gpu1', 'gpu2']);
  assert.deepEqual(liveKeys(name), [], 'nothing left but the definition and markers');
});

/** Starts a node process that holds `name`'s one slot; resolves {child, token} once it holds. */
function holderProcess(name, opts) {
  const src = `
    const { Client } = require(${JSON.stringify(PKG)});
    (async () => {
      const c = await Client.connect({ endpoints: process.env.ETCDLOCK_ENDPOINTS.split(',') });
      const held = await c.pool(${JSON.stringify(name)}, ${JSON.stringify(opts)}).acquire({ timeout: 10000 });
      console.log('held ' + held.slots[0] + ' ' + held.tokens[held.slots[0]]);
      setInterval(() => {}, 1000);
    })().catch((e) => { console.error(e); process.exit(3); });
  `;
  const child = spawn(process.execPath, ['-e', src], { cwd: PKG, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /held (\S+) (\d+)/.exec(out);
      if (m) resolve({ child, slot: m[1], token: BigInt(m[2]) });
    });
    child.on('exit', (code) => reject(new Error(`the holder exited (${code}) before holding: ${err}`)));
  });
}

// covers: POOL-REUSE-001
test("a released slot is taken at once; a SIGKILLed holder's slot is not handed out before the reuse delay after its lease ended, and is after", async (t) => {
  const name = prefix('pool-reuse');
  const opts = { slots: ['w0'], ttl: 2, reuseDelay: 3000 };
  const [a, b] = [client(t), client(t)];
  const [pa, pb] = [a.pool(name, opts), b.pool(name, opts)];
  // A clean release: the next request gets the slot at once, with a larger token.
  const first = await pa.acquire();
  const token = first.tokens.w0;
  await first.release();
  const t0 = Date.now();
  const second = await pb.acquire({ timeout: 5000 });
  assert.ok(Date.now() - t0 < 500, `a released slot rested ${Date.now() - t0} ms`);
  assert.ok(second.tokens.w0 > token);
  await second.release();

  // A holder in another process, SIGKILLed while a request here waits for its slot.
  const { child, token: dead } = await within(holderProcess(name, opts), 15000, 'the holder process');
  t.after(() => child.kill('SIGKILL'));
  assert.ok(dead > second.tokens.w0);
  const w = a.watch(`${name}/`, { prefix: true });
  await w.ready;
  /** [arrival ms, event] of every change under the pool */
  const seen = [];
  const watching = (async () => {
    for await (const ev of w) seen.push([Date.now(), ev]);
  })();
  const waiting = pb.acquire({ timeout: 15000 });
  await waitFor(() => keysUnder(`${name}/queue/`).length === 1, 5000, 'the request to queue');
  child.kill('SIGKILL');
  const third = await within(waiting, 15000, 'the slot after the delay');
  const slotKey = `${name}/slot/w0`;
  // The watch may deliver the new holder's key after the acquire resolved.
  await waitFor(() => seen.some(([, ev]) => ev.type === 'put' && ev.key.toString() === slotKey), 5000, 'the new holding in the watch');
  w.close();
  await watching;
  const death = seen.find(([, ev]) => ev.type === 'delete' && ev.key.toString() === slotKey);
  const next = seen.find(([, ev]) => ev.type === 'put' && ev.key.toString() === slotKey);
  assert.ok(death && next, `the death and the next holding in etcd's history: ${seen.map(([, e]) => `${e.type} ${e.key}`)}`);
  const rested = next[0] - death[0];
  assert.ok(rested >= 2900, `a dead holder's slot was handed out ${rested} ms after its lease ended`);
  assert.ok(rested < 6000, `the slot rested ${rested} ms`);
  // The rest between them, on a lease nobody keeps alive: the cool key is put, then expires.
  const cool = seen.filter(([, ev]) => ev.key.toString() === `${name}/cool/w0`).map(([, ev]) => [ev.type, ev.revision]);
  assert.deepEqual(cool.map(([type]) => type), ['put', 'delete']);
  assert.ok(death[1].revision < cool[0][1] && cool[1][1] < next[1].revision, 'the slot was handed out before its rest ended');
  assert.ok(third.tokens.w0 > dead);
  await third.release();
  assert.deepEqual(liveKeys(name), []);
});

// covers: POOL-FIFO-001
test('requests are served in order; a request for 2 waits for two slots and goes before later single ones', async (t) => {
  const c = client(t);
  const name = prefix('pool-fifo');
  const pool = c.pool(name, { size: 3 });
  const [x, y] = [await pool.acquire(), await pool.acquire()];
  assert.deepEqual([x.slots, y.slots], [['0'], ['1']]);
  const order = [];
  const waiting = [];
  for (const [i, count] of [[0, 2], [1, 1], [2, 1]]) {
    waiting.push(
      pool.acquire({ count, timeout: 15000 }).then((h) => {
        order.push([i, h.slots.length]);
        return h;
      }),
    );
    await waitFor(() => keysUnder(`${name}/queue/`).length === 1 + i, 5000, `request ${i} to queue`);
  }
  // One slot is free, but the head wants two: nobody passes it, and a try finds it taken.
  await sleep(300);
  assert.deepEqual(order, [], 'a later single request passed the request for two');
  await assert.rejects(pool.acquire({ timeout: 0 }), { code: 'WOULD_BLOCK' });
  await x.release();
  const two = await within(waiting[0], 5000, 'the request for two');
  assert.equal(two.slots.length, 2);
  assert.deepEqual(Object.keys(two.tokens).sort(), [...two.slots].sort());
  assert.ok(two.fencingToken > y.fencingToken);
  // Singles then go one free slot at a time, in their order (each release
  // frees exactly one slot, so the order checked is etcd's, not the callbacks').
  await y.release();
  const one = await within(waiting[1], 5000, 'the first single request');
  assert.deepEqual(order, [[0, 2], [1, 1]], 'the later single request went first');
  await two.release();
  const other = await within(waiting[2], 5000, 'the second single request');
  assert.deepEqual(order, [[0, 2], [1, 1], [2, 1]]);
  await one.release();
  await other.release();
  assert.deepEqual(liveKeys(name), []);
});

// covers: POOL-OWNER-001
test('an acquire with the owner of a live holding returns that holding; after its release a new one', async (t) => {
  const c = client(t);
  const name = prefix('pool-owner');
  const pool = c.pool(name, { size: 2 });
  const first = await pool.acquire({ owner: 'job-7', timeout: 5000 });
  assert.equal(first.owner, 'job-7');
  const again = await pool.acquire({ owner: 'job-7', timeout: 5000 });
  assert.equal(again, first, 'the same holding');
  assert.deepEqual(again.slots, first.slots);
  const other = await pool.acquire({ owner: 'job-8', timeout: 5000 });
  assert.notDeepEqual(other.slots, first.slots);
  assert.ok(other.fencingToken > first.fencingToken);
  const slots = await pool.slots();
  assert.deepEqual(slots.map((s) => [s.id, s.state, s.owner]), [['0', 'held', 'job-7'], ['1', 'held', 'job-8']]);
  assert.equal(slots[0].token, first.tokens['0']);
  assert.equal(slots[0].acquisition, first.fencingToken);
  assert.equal(slots[0].lease, first.leaseId);
  assert.ok(slots[0].ttl > 0);
  const noTtl = (v) => v.map(({ ttl, ...rest }) => rest);
  assert.deepEqual(noTtl(await c.inspectPool(name)), noTtl(slots), 'inspectPool reads the same');
  assert.equal(await c.inspectPool(`${name}-none`), null);
  // Owned by another client: not this client's holding, so it waits like any request.
  await assert.rejects(client(t).pool(name, { size: 2 }).acquire({ owner: 'job-7', timeout: 300 }), { code: 'LOCK_TIMEOUT' });
  await first.release();
  const fresh = await pool.acquire({ owner: 'job-7', timeout: 5000 });
  assert.notEqual(fresh, first);
  assert.ok(fresh.fencingToken > first.fencingToken, 'a released holding came back');
  await fresh.release();
  await other[Symbol.asyncDispose]();
  assert.equal(other.isHeld(), false);
  await other[Symbol.asyncDispose](); // released already: nothing
  assert.deepEqual(liveKeys(name), []);
});

// covers: POOL-DEF-001
test('definitions must agree (INVALID_ARGUMENT naming addSlots); slots are added and removed at runtime', async (t) => {
  const c = client(t);
  const name = prefix('pool-def');
  const pool = c.pool(name, { slots: ['a', 'b'] });
  assert.ok(pool instanceof Pool);
  assert.equal(pool.name.toString(), name);
  assert.deepEqual(await pool.slots(), [], 'not defined before the first acquire');
  await assert.rejects(pool.addSlots(['c']), INVALID, 'a change before the definition');
  await (await pool.acquire()).release();
  for (const other of [{ slots: ['a', 'c'] }, { slots: ['a', 'b'], reuseDelay: 5000 }, { size: 2 }]) {
    const err = await c.pool(name, other).acquire({ timeout: 1000 }).then(() => null, (e) => e);
    assert.equal(err && err.code, 'INVALID_ARGUMENT', String(err));
    assert.match(err.message, /addSlots/);
  }
  const held = await pool.acquire({ count: 2, timeout: 5000 });
  assert.deepEqual(held.slots, ['a', 'b']);
  // A waiting request gets a slot added meanwhile.
  const waiting = pool.acquire({ timeout: 5000 });
  await waitFor(() => keysUnder(`${name}/queue/`).length === 1, 5000, 'the request to queue');
  assert.deepEqual(await pool.addSlots(['c']), ['a', 'b', 'c']);
  const got = await within(waiting, 5000, 'the added slot');
  assert.deepEqual(got.slots, ['c']);
  // A held slot removed goes at its release; it is not handed out meanwhile.
  assert.deepEqual(await pool.removeSlots(['a']), ['b', 'c']);
  await held.release();
  assert.deepEqual((await pool.slots()).map((s) => [s.id, s.state]), [['b', 'free'], ['c', 'held']]);
  await assert.rejects(pool.addSlots(['b']), INVALID);
  await assert.rejects(pool.removeSlots(['zz']), INVALID);
  await assert.rejects(pool.removeSlots(['b', 'c']), INVALID, 'a pool keeps one slot');
  await assert.rejects(pool.addSlots(['x/y']), INVALID);
  await assert.rejects(pool.addSlots('d'), INVALID);
  await got.release();
  // The removed slot's markers are tidied by the next acquire.
  await (await pool.acquire()).release();
  assert.deepEqual(keysUnder(`${name}/`).filter((k) => k.endsWith('/a')), []);
  assert.deepEqual(liveKeys(name), []);
});

test('a lost holding: onLost fires, isHeld() is false, fenced writes and release are NOT_HELD', async (t) => {
  const c = client(t);
  const name = prefix('pool-lost');
  const held = await c.pool(name, { size: 1, ttl: 5 }).acquire();
  assert.ok((await c.put(`${name}-out`, 'x', { ifHeld: held })) > held.fencingToken);
  await assert.rejects(c.put(`${name}/slot/0`, 'x', { ifHeld: held }), INVALID, "the pool's own keys");
  const reasons = [];
  held.onLost((r) => reasons.push(r));
  etcdctl('lease', 'revoke', held.leaseId.toString(16));
  await waitFor(() => reasons.length === 1, 5000, 'onLost');
  assert.ok(['revoked', 'key_deleted', 'expired'].includes(reasons[0]), reasons[0]);
  assert.equal(held.lostReason(), reasons[0]);
  assert.equal(held.isHeld(), false);
  await assert.rejects(c.put(`${name}-out`, 'y', { ifHeld: held }), { code: 'NOT_HELD' });
  assert.equal(etcdctl('get', `${name}-out`, '--print-value-only').trim(), 'x');
  await assert.rejects(held.release(), { code: 'NOT_HELD' });
});

// covers: FENCE-POOL-001
test("a slot's fence: its key at the slot's token, checks while held and passes the database; an unknown slot is INVALID_ARGUMENT; not after the release", async (t) => {
  const c = client(t);
  const other = client(t);
  const db = new Sqlite(':memory:');
  t.after(() => db.close());
  fencing.sqlite.install(db);
  const name = prefix('pool-fence');
  const pool = c.pool(name, { slots: ['a', 'b'], ttl: 10 });
  const held = await pool.acquire({ count: 2, timeout: 5000 });
  const f = await held.fence('b');
  assert.ok(f instanceof Fence);
  assert.equal(f.kind, 'k');
  assert.equal(f.name.toString(), `${name}/slot/b`);
  assert.equal(f.token, held.tokens.b);
  // The slot key's create revision, as etcd has it, is the token.
  assert.equal(BigInt(/"create_revision":(\d+)/.exec(etcdctl('get', `${name}/slot/b`, '-w', 'json'))[1]), f.token);
  assert.ok(Fence.parse(String(f)).equals(f));
  assert.ok(await c.checkFence(f));
  assert.ok(await other.checkFence(String(f)));
  const fa = await held.fence('a');
  assert.ok(fa.token === held.tokens.a && (await c.checkFence(fa)));
  assert.equal(fencing.sqlite.check(db, f), f.token);
  assert.equal(fencing.sqlite.check(db, String(f)), f.token); // the same holder again: the mark is >=
  await assert.rejects(held.fence('z'), INVALID); // no such slot
  await assert.rejects(held.fence(/** @type {any} */ (7)), INVALID);
  await held.release();
  assert.equal(await c.checkFence(f), false, "a released slot's fence checked");
  // As core's: the fence is still given after the release, and does not check.
  assert.ok((await held.fence('b')).equals(f));
  const next = await pool.acquire({ count: 2, timeout: 5000 });
  const newer = await next.fence('b');
  assert.ok(newer.name.equals(f.name) && newer.token > f.token && newer.token === next.tokens.b);
  assert.equal(fencing.sqlite.check(db, newer), newer.token);
  assert.throws(() => fencing.sqlite.check(db, f), (e) => e instanceof StaleFence && e.code === 'NOT_HELD'); // the first holder's late write
  await next.release();
  // Two holdings of one slot each: a fence of the other's slot is refused.
  const one = await pool.acquire({ timeout: 5000 });
  const two = await other.pool(name, { slots: ['a', 'b'], ttl: 10 }).acquire({ timeout: 5000 });
  const [mine] = two.slots;
  const [theirs] = one.slots;
  assert.deepEqual([mine, theirs].sort(), ['a', 'b']);
  const g = await two.fence(mine);
  assert.ok(g.token === two.tokens[mine] && (await c.checkFence(g)));
  await assert.rejects(two.fence(theirs), INVALID);
  await two.release();
  await one.release();
  assert.equal(await c.checkFence(g), false);
  assert.deepEqual(liveKeys(name), []);
});

test('an aborted acquire rejects AbortError and leaves nothing; an aborted signal sends nothing', async (t) => {
  const c = client(t);
  const name = prefix('pool-abort');
  const pool = c.pool(name, { size: 1 });
  const held = await pool.acquire();
  const ac = new AbortController();
  const waiting = pool.acquire({ signal: ac.signal });
  await waitFor(() => keysUnder(`${name}/queue/`).length === 1, 5000, 'the request to queue');
  ac.abort(new Error('stop'));
  const err = await within(waiting.then(() => null, (e) => e), 5000, 'the abort');
  assert.ok(err instanceof AbortError, String(err));
  assert.equal(err.cause.message, 'stop');
  assert.deepEqual(keysUnder(`${name}/queue/`), []);
  await assert.rejects(pool.acquire({ signal: ac.signal }), { name: 'AbortError' });
  await held.release();
  assert.deepEqual(liveKeys(name), []);
  // Taken as the signal fires: given back.
  const late = new AbortController();
  const p = pool.acquire({ signal: late.signal });
  late.abort();
  await assert.rejects(p, { name: 'AbortError' });
  await waitFor(() => liveKeys(name).length === 0, 5000, 'nothing left');
  await (await pool.acquire({ timeout: 0 })).release();
});

// covers: POOL-INPUT-001
test('bad input is INVALID_ARGUMENT with nothing written; a try with every slot held is WOULD_BLOCK and leaves no request', async (t) => {
  const c = client(t);
  const name = prefix('pool-input');
  assert.equal(MAX_POOL_SLOTS, 1024);
  assert.equal(MAX_POOL_COUNT, 30);
  const bad = [
    [name, { slots: [] }],
    [name, { slots: ['a', 'a'] }],
    [name, { slots: ['a/b'] }],
    [name, { slots: [''] }],
    [name, { slots: ['x\ny'] }],
    [name, { slots: ['a'.repeat(129)] }],
    [name, { slots: Array.from({ length: MAX_POOL_SLOTS + 1 }, (_, i) => `s${i}`) }],
    [name, { slots: ['a', 1] }],
    [name, { slots: 'a' }],
    [name, { size: 0 }],
    [name, { size: MAX_POOL_SLOTS + 1 }],
    [name, { size: 2.5 }],
    [name, { size: '2' }],
    [name, { slots: ['a'], size: 1 }],
    [name, {}],
    [name, undefined],
    [name, { size: 2, ttl: 0 }],
    [name, { size: 2, ttl: -1 }],
    [name, { size: 2, ttl: 1.5 }],
    [name, { size: 2, reuseDelay: -1 }],
    [name, { size: 2, reuseDelay: NaN }],
    [name, { size: 2, reuseDelay: Infinity }],
    [name, { size: 2, reuseDelay: '5s' }],
    [name, { size: 2, reuseDelay: 1e18 }],
    ['', { size: 2 }],
    [`${name}/`, { size: 2 }],
    [42, { size: 2 }],
  ];
  for (const [n, o] of bad) {
    assert.throws(() => c.pool(n, o), INVALID, `pool(${String(n)}, ${JSON.stringify(o)?.slice(0, 60)})`);
  }
  const pool = c.pool(name, { size: 2 });
  for (const o of [{ count: 0 }, { count: 3 }, { count: MAX_POOL_COUNT + 1 }, { count: 1.5 }, { count: '1' }, { count: -1 }, { owner: 5 }, { timeout: -1 }, { signal: 'x' }, 'x']) {
    await assert.rejects(pool.acquire(o), INVALID, JSON.stringify(o));
  }
  assert.deepEqual(keysUnder(name), [], 'nothing written');
  // A try that finds no slot leaves nothing but the definition.
  const held = await pool.acquire({ count: 2 });
  const t0 = Date.now();
  await assert.rejects(pool.acquire({ timeout: 0 }), { code: 'WOULD_BLOCK' });
  assert.ok(Date.now() - t0 < 2000);
  const t1 = Date.now();
  await assert.rejects(pool.acquire({ timeout: 300 }), { code: 'LOCK_TIMEOUT' });
  assert.ok(Date.now() - t1 >= 290);
  assert.deepEqual(keysUnder(`${name}/queue/`), []);
  await held.release();
  await assert.rejects(c.put(`${name}-k`, 'v', { ifHeld: held }), { code: 'NOT_HELD' });
  // On a closed client: bad options still INVALID_ARGUMENT, good ones CLOSED.
  await c.close();
  assert.throws(() => c.pool(name, { size: 0 }), INVALID);
  await assert.rejects(c.pool(name, { size: 2 }).acquire(), { code: 'CLOSED' });
});

// A try (timeout 0) from a client that has no lease for the pool's TTL yet: the lease's grant is
// not bounded by the try's deadline (now), as for a lock's try; it once failed TIMEOUT ("deadline
// exceeded") with every slot free.
test('a try on a fresh client takes a free slot', async (t) => {
  const name = prefix('pool-fresh-try');
  for (let i = 0; i < 10; i++) {
    const c = client(t);
    const held = await c.pool(`${name}-${i}`, { size: 2 }).acquire({ timeout: 0 });
    await held.release();
  }
});

test('the ESM entry exports Pool and PoolHolding (the same objects)', async () => {
  const m = await esm;
  assert.equal(m.Pool, Pool);
  assert.equal(m.PoolHolding, PoolHolding);
  assert.equal(m.MAX_POOL_COUNT, MAX_POOL_COUNT);
});
