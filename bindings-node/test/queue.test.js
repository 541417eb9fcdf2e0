'use strict';
// A lock's queue holds only waiters: keys under `<name>/` that no waiter wrote never block
// `<name>`, and fenced writes cannot put keys there.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, prefix, etcdctl, keysUnder, waitFor } = require('./helpers');
const { Client } = require('..');

function client(t) {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  return c;
}

// covers: LOCK-PREFIX-001
test("a fenced write under the lock's own prefix is refused and writes nothing", async (t) => {
  const c = client(t);
  const name = prefix('guardprefix');
  const lock = await c.lock(name, { timeout: 5000 });
  for (const key of [`${name}/last`, `${name}/a/b`]) {
    await assert.rejects(c.put(key, '42', { ifHeld: lock }), { code: 'INVALID_ARGUMENT' });
    await assert.rejects(lock.put(key, '42'), { code: 'INVALID_ARGUMENT' });
  }
  assert.deepEqual(keysUnder(`${name}/`), [lock.key.toString()]);
  await c.put(`${name}-state`, '42', { ifHeld: lock }); // only starts with the name: fine
  await lock.release();
  const next = await c.lock(name, { timeout: 0 }); // immediate
  await next.release();
  await c.delete(`${name}-state`);
});

// covers: LOCK-FOREIGN-001
test('keys under the prefix that no waiter wrote never make the lock busy', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('foreign');
  // Lease ids exceed 2^53: read the hex that etcdctl prints, not its JSON number.
  const lease = BigInt('0x' + etcdctl('lease', 'grant', '60').match(/lease ([0-9a-f]+) granted/)[1]);
  etcdctl('put', `${name}/last`, 'no lease');
  etcdctl('put', `${name}/config`, "a user's key on a lease", `--lease=${lease.toString(16)}`);
  etcdctl('put', `${name}/${(lease + 1n).toString(16)}`, "named like another lease's waiter", `--lease=${lease.toString(16)}`);
  etcdctl('put', `${name}/${lease.toString(16)}`, 'named like a waiter, no lease');
  const foreign = keysUnder(`${name}/`);

  const held = await a.lock(name, { timeout: 0 });
  await assert.rejects(b.lock(name, { timeout: 0 }), { code: 'WOULD_BLOCK' }); // exclusion holds
  etcdctl('put', `${name}/between`, '');
  const waiting = b.lock(name, { timeout: 10_000 });
  await waitFor(() => keysUnder(`${name}/`).length === foreign.length + 3, 5000, 'b queued');
  await held.release();
  const got = await waiting;
  await got.release();
  const again = await a.lock(name, { timeout: 2000 });
  await again.release();
  assert.deepEqual(keysUnder(`${name}/`).sort(), [...foreign, `${name}/between`].sort());
  etcdctl('del', '--prefix', `${name}/`);
  etcdctl('lease', 'revoke', lease.toString(16));
});

// covers: LOCK-NESTED-001
test('a lock and a lock named under it are independent', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('nested');
  const inner = await a.lock(`${name}/a`, { timeout: 5000 });
  const outer = await b.lock(name, { timeout: 0 }); // N is free while N/a is held
  await assert.rejects(a.lock(name, { timeout: 0 }), { code: 'WOULD_BLOCK' });
  await assert.rejects(b.lock(`${name}/a`, { timeout: 0 }), { code: 'WOULD_BLOCK' });
  assert.ok(inner.isHeld() && outer.isHeld());
  await Promise.all([inner.release(), outer.release()]);
  assert.deepEqual(keysUnder(`${name}/`), []);
});
