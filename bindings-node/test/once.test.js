'use strict';
// Once-per-period jobs (`client.once()`) against a real etcd: one winner per period across
// triggers whose clocks differ, the next period runs again, `await using` marks done, a released
// or lost slot's period is run by the next trigger, and bad options are refused with nothing written.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, prefix, etcdctl, keysUnder, waitFor } = require('./helpers');
const etcdlock = require('..');
const { Client, OnceSlot } = etcdlock;

const esm = import('../index.mjs');

const HOUR = 3_600_000;
const MINUTE = 60_000;
/** An hour boundary: slot 500000 of an hourly job. */
const T = HOUR * 500_000;

function client(t) {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  return c;
}

/** The lease (hex) the one claim key under `name` is on: claim keys are `<name>/slot/<n>/<lease hex>`. */
function slotLease(name) {
  const keys = keysUnder(`${name}/slot/`);
  assert.equal(keys.length, 1, `one claim key, got ${keys}`);
  return keys[0].split('/').pop().split('-')[0];
}

// `await using slot = await c.once(...)`: the real syntax where this Node has it (24+), else
// what it stands for (a try/finally that disposes).
const AsyncFunction = (async () => {}).constructor;
let usingSyntax = null;
try {
  usingSyntax = new AsyncFunction('c', 'name', 'options', 'seen', `
    await using slot = await c.once(name, options);
    seen.push(slot);
  `);
} catch {
  usingSyntax = null;
}
async function onceInUsingBlock(c, name, options, seen) {
  if (usingSyntax) return usingSyntax(c, name, options, seen);
  const slot = await c.once(name, options);
  try {
    seen.push(slot);
  } finally {
    if (slot) await slot[Symbol.asyncDispose]();
  }
}

// covers: ONCE-SLOT-001
test('three triggers 29 minutes apart run an hourly job once; a later trigger in the period does not; the next period does', async (t) => {
  const clients = [client(t), client(t), client(t)];
  const name = prefix('once-slot');
  // Clocks up to 29 minutes apart pick the same slot, the nearest boundary (`at` as ms or a Date).
  const won = await Promise.all([
    clients[0].once(name, { every: HOUR, at: T - 29 * MINUTE }),
    clients[1].once(name, { every: HOUR, at: new Date(T) }),
    clients[2].once(name, { every: HOUR, at: T + 29 * MINUTE }),
  ]);
  const winners = won.filter((s) => s !== null);
  assert.equal(winners.length, 1, `one winner, got ${winners.length}`);
  const [slot] = winners;
  assert.ok(slot instanceof OnceSlot);
  assert.equal(slot.slot, 500_000);
  assert.equal(typeof slot.fencingToken, 'bigint');
  assert.ok(slot.fencingToken > 0n);
  assert.equal(slot.isHeld(), true);
  assert.equal(slot.lostReason(), null);
  assert.equal(keysUnder(`${name}/slot/500000/`).length, 1, 'the claim is a key');
  await slot.done();
  assert.equal(slot.isHeld(), false);
  assert.deepEqual(keysUnder(`${name}/`), [`${name}/done/500000`], 'done: the mark stays, the claim is gone');
  await assert.rejects(slot.done(), { code: 'NOT_HELD' }, 'done twice');
  await assert.rejects(slot.release(), { code: 'NOT_HELD' }, 'released after done');
  assert.equal(await clients[0].once(name, { every: HOUR, at: T + MINUTE }), null, 'ran twice in a period');
  assert.equal(await clients[1].once(name, { every: HOUR, at: T - 30 * MINUTE }), null, 'half a period early is this period');

  // The next period runs again; `await using` marks it done at the end of the block.
  const seen = [];
  await onceInUsingBlock(clients[2], name, { every: HOUR, at: T + HOUR - 20 * MINUTE }, seen);
  assert.ok(seen[0] instanceof OnceSlot, String(seen[0]));
  assert.equal(seen[0].slot, 500_001);
  assert.ok(seen[0].fencingToken > slot.fencingToken);
  assert.equal(seen[0].isHeld(), false, 'done at the end of the block');
  await seen[0][Symbol.asyncDispose](); // already done: nothing
  assert.equal(await clients[0].once(name, { every: HOUR, at: T + HOUR }), null, 'the block did not mark it done');
  assert.deepEqual(keysUnder(`${name}/`), [`${name}/done/500000`, `${name}/done/500001`]);
  // A trigger with no `at` is now's period, of the job's own: other names are other jobs.
  const now = await clients[1].once(`${name}-now`, { every: HOUR });
  assert.equal(now.slot, Math.round(Date.now() / HOUR));
  await now.done();
});

// covers: ONCE-RETRY-001
test("a released slot, and a lost winner's, is run by the next trigger; the lost one's done() is NOT_HELD", async (t) => {
  const c = client(t);
  const other = client(t);
  const name = prefix('once-retry');
  const opts = { every: HOUR, ttl: 2, at: Date.now() };
  const first = await c.once(name, opts);
  assert.ok(first instanceof OnceSlot);
  assert.equal(await other.once(name, opts), null, 'claimed twice');
  assert.equal(await c.once(name, opts), null, 'claimed twice by one client');
  // The job failed: released, not done.
  await first.release();
  assert.equal(first.isHeld(), false);
  assert.deepEqual(keysUnder(`${name}/`), [], 'a release marks nothing');
  await assert.rejects(first.done(), { code: 'NOT_HELD' }, 'done after release');

  const second = await other.once(name, opts);
  assert.ok(second instanceof OnceSlot, 'a failed job runs again');
  assert.equal(second.slot, first.slot);
  assert.ok(second.fencingToken > first.fencingToken);
  // The winner dies mid-job: its claim goes with its lease.
  const reasons = [];
  second.onLost((r) => reasons.push(r));
  etcdctl('lease', 'revoke', slotLease(name));
  await waitFor(() => reasons.length === 1, 5000, 'onLost');
  assert.ok(['expired', 'revoked', 'key_deleted'].includes(reasons[0]), reasons[0]);
  assert.equal(second.lostReason(), reasons[0]);
  assert.equal(second.isHeld(), false);

  const third = await c.once(name, opts);
  assert.ok(third instanceof OnceSlot, "a lost winner's job did not run again");
  assert.ok(third.fencingToken > second.fencingToken);
  await assert.rejects(second.done(), { code: 'NOT_HELD' });
  assert.deepEqual(keysUnder(`${name}/done/`), [], 'a lost claim marked the period done');
  const late = [];
  second.onLost((r) => late.push(r)); // registered after the loss: still called once
  await waitFor(() => late.length === 1, 5000, 'a late onLost');
  await third.done();
  assert.equal(await other.once(name, opts), null);
  assert.deepEqual(keysUnder(`${name}/`), [`${name}/done/${third.slot}`]);

  // A client's close ends its winning slot's claim (its lease is revoked): the next trigger runs the job.
  const name2 = `${name}-close`;
  const c3 = new Client({ endpoints: ENDPOINTS });
  const held = await c3.once(name2, opts);
  assert.ok(held instanceof OnceSlot);
  await c3.close();
  assert.equal(held.isHeld(), false);
  const after = await c.once(name2, opts);
  assert.ok(after instanceof OnceSlot, "a closed client's slot was not run again");
  await after.release();
  await assert.rejects(c3.once(name2, opts), { code: 'CLOSED' });
});

// covers: ONCE-FENCE-001
test("a winner's writes are fenced by its slot: a lost winner's write fails and changes nothing, the next winner's stands; its own keys are refused", async (t) => {
  const c = client(t);
  const other = client(t);
  const name = prefix('once-fence');
  const result = `${name}-result`;
  const opts = { every: HOUR, ttl: 2, at: Date.now() };
  const first = await c.once(name, opts);
  assert.ok(first instanceof OnceSlot);
  assert.ok((await c.put(result, 'first', { ifHeld: first })) > first.fencingToken);
  await assert.rejects(c.put(`${name}/done/${first.slot}`, 'done', { ifHeld: first }), { code: 'INVALID_ARGUMENT' }, "the job's own keys");
  // Cut off: its claim goes with its lease, and the next trigger wins and writes.
  etcdctl('lease', 'revoke', slotLease(name));
  const second = await other.once(name, opts);
  assert.ok(second instanceof OnceSlot);
  await other.put(result, 'second', { ifHeld: second });
  await assert.rejects(c.put(result, 'late', { ifHeld: first }), { code: 'NOT_HELD' });
  assert.equal(etcdctl('get', result, '--print-value-only').trim(), 'second');
  await second.done();
  await assert.rejects(other.put(result, 'after done', { ifHeld: second }), { code: 'NOT_HELD' });
  assert.equal(etcdctl('get', result, '--print-value-only').trim(), 'second');
  await assert.rejects(c.put(result, 'x', { ifHeld: { slot: 1 } }), { code: 'INVALID_ARGUMENT' });
});

// covers: ONCE-INPUT-001
test('bad options are rejected INVALID_ARGUMENT with nothing written', async (t) => {
  const c = client(t);
  const name = prefix('once-input');
  const every = HOUR;
  const bad = [
    ['', { every }],
    [`${name}/`, { every }],
    [name, { every: 500 }],
    [name, { every: 999.9 }],
    [name, { every: 0 }],
    [name, { every: -HOUR }],
    [name, { every: NaN }],
    [name, { every: Infinity }],
    [name, { every: 1e22 }], // every × keepPeriods beyond any duration
    [name, { every: HOUR * 1e9 }], // done marks kept beyond etcd's largest lease TTL
    [name, { every, keepPeriods: 1 }],
    [name, { every, keepPeriods: 0 }],
    [name, { every, keepPeriods: -2 }],
    [name, { every, keepPeriods: 2.5 }],
    [name, { every, keepPeriods: '3' }],
    [name, { every, ttl: 0 }],
    [name, { every, ttl: -1 }],
    [name, { every, ttl: 1.5 }],
    [name, { every, ttl: '5' }],
    [name, { every, at: -1 }],
    [name, { every, at: new Date(-1) }],
    [name, { every, at: new Date(NaN) }],
    [name, { every, at: NaN }],
    [name, { every, at: 8.64e15 + 1 }],
    [name, { every, at: 'now' }],
    [name, { every, at: BigInt(T) }],
    [name, { every: '1h' }],
    [name, { every: BigInt(HOUR) }],
    [name, {}],
    [name, undefined],
    [name, 'hourly'],
    [42, { every }],
    [null, { every }],
  ];
  for (const [n, o] of bad) {
    await assert.rejects(c.once(n, o), { code: 'INVALID_ARGUMENT' }, `once(${String(n)}, ${o === undefined ? o : JSON.stringify(o, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))})`);
  }
  assert.deepEqual(keysUnder(name), []);
  // The limits themselves are taken.
  for (const o of [{ every: 1000, keepPeriods: 2, ttl: 1, at: 0 }, { every: HOUR, at: new Date(8.64e15) }]) {
    const slot = await c.once(name, o);
    assert.ok(slot instanceof OnceSlot, JSON.stringify(o));
    await slot.release();
  }
  assert.deepEqual(keysUnder(name), []);
  // Bad options are INVALID_ARGUMENT, good ones CLOSED, on a closed client.
  await c.close();
  await assert.rejects(c.once(name, { every: 10 }), { code: 'INVALID_ARGUMENT' });
  await assert.rejects(c.once(name, { every }), { code: 'CLOSED' });
});

test('the ESM entry exports OnceSlot (the same object)', async () => {
  const m = await esm;
  assert.equal(m.OnceSlot, OnceSlot);
});
