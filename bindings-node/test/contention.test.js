'use strict';
// Two processes contending for one lock: a counter in etcd updated with fenced read-modify-write
// loses no increment (no overlap), hold intervals on the shared monotonic clock never overlap,
// and acquisitions happen in queue order (tokens increase), alternating between the two.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, PKG, prefix, runChild } = require('./helpers');
const { Client } = require('..');

const ROUNDS = 40;

function worker(name, counter, startAt) {
  return `const { Client } = require(${JSON.stringify(PKG)});
const now = () => process.hrtime.bigint().toString(); // CLOCK_MONOTONIC: one clock for all processes
(async () => {
  const client = await Client.connect({ endpoints: process.env.ETCDLOCK_ENDPOINTS.split(',') });
  while (process.hrtime.bigint() < ${startAt}n) await new Promise((r) => setTimeout(r, 1));
  const out = [];
  for (let i = 0; i < ${ROUNDS}; i++) {
    const req = now();
    const lock = await client.lock(${JSON.stringify(name)}, { timeout: 20000 });
    const acq = now();
    const v = await client.get(${JSON.stringify(counter)});
    await client.put(${JSON.stringify(counter)}, String(Number(v ? v.toString() : '0') + 1), { ifHeld: lock });
    const rel = now();
    await lock.release();
    out.push({ pid: process.pid, token: lock.fencingToken.toString(), req, acq, rel });
  }
  await client.close();
  console.log(JSON.stringify(out));
})();`;
}

// covers: LOCK-MULTIPROC-001
test('two processes: no overlap, no lost update, FIFO order, increasing tokens', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const name = prefix('contend');
  const counter = `${name}-counter`;
  const startAt = process.hrtime.bigint() + 2_000_000_000n; // both children connected by then
  const [a, b] = await Promise.all([runChild(worker(name, counter, startAt), { timeoutMs: 60000 }), runChild(worker(name, counter, startAt), { timeoutMs: 60000 })]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  const all = [...JSON.parse(a.stdout), ...JSON.parse(b.stdout)].map((r) => ({
    ...r,
    token: BigInt(r.token),
    req: BigInt(r.req),
    acq: BigInt(r.acq),
    rel: BigInt(r.rel),
  }));
  all.sort((x, y) => (x.acq < y.acq ? -1 : 1));
  assert.equal(all.length, 2 * ROUNDS);
  assert.equal((await c.get(counter)).toString(), String(2 * ROUNDS), 'an increment was lost: holders overlapped');
  let switches = 0;
  for (let i = 1; i < all.length; i++) {
    const [prev, cur] = [all[i - 1], all[i]];
    assert.ok(cur.acq > prev.rel, `hold ${i} began before hold ${i - 1} ended`);
    assert.ok(cur.token > prev.token, `token ${cur.token} after ${prev.token}: not in queue order`);
    if (cur.pid !== prev.pid) switches++;
  }
  t.diagnostic(`${switches} handoffs between processes in ${all.length} acquisitions`);
  // FIFO itself is the token check above (a token is the queue key's create revision). With
  // both processes always queued it also hands the lock to the other one almost every time;
  // "always queued" needs the releaser to ask again before the other's short hold ends, which a
  // loaded machine does not always give (35 of 79 seen with other suites beside this one).
  assert.ok(switches >= ROUNDS / 2, `only ${switches} handoffs between the two processes`);
});
