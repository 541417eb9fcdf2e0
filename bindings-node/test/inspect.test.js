'use strict';
// Queue inspection (client.inspect) and the value an acquire attaches (lock(name, { value })),
// checked against what etcdctl shows.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, prefix, etcdctl, keysUnder, waitFor } = require('./helpers');
const { Client } = require('..');

function client(t) {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  return c;
}

/** [createRevision, lease, value] of each key under `p`, oldest first, as etcdctl shows them. */
function etcdctlQueue(p) {
  // Lease IDs are 64-bit: read them as strings (JSON numbers would round them).
  const text = etcdctl('get', '--prefix', '--sort-by=CREATE', '--order=ASCEND', '-w', 'json', p);
  const out = JSON.parse(text.replace(/"lease":(\d+)/g, '"lease":"$1"'));
  return (out.kvs || []).map((/** @type {any} */ kv) => [
    BigInt(kv.create_revision),
    BigInt(kv.lease || 0),
    Buffer.from(kv.value || '', 'base64').toString(),
  ]);
}

// covers: LOCK-INSPECT-001
test('inspect shows the holder and the waiters in order, as etcdctl does', async (t) => {
  const [a, b] = [client(t), client(t)];
  const name = prefix('inspect');
  const empty = await a.inspect(name);
  assert.equal(empty.holder, null);
  assert.deepEqual(empty.waiters, []);
  const holder = await a.lock(name, { value: 'host-a pid 1' });
  const waiting = [];
  for (const [i, [c, value]] of /** @type {[Client, any][]} */ ([[b, Buffer.from('host-b pid 2')], [a, 'host-a pid 3'], [b, undefined]]).entries()) {
    waiting.push(c.lock(name, { value }).then(async (l) => {
      const token = l.fencingToken;
      await l.release();
      return token;
    }));
    await waitFor(() => keysUnder(`${name}/`).length === i + 2, 5000, `waiter ${i} queued`);
  }
  const state = await b.inspect(name);
  assert.ok(state.holder);
  const entries = [state.holder, ...state.waiters];
  assert.deepEqual(entries.map((e) => [e.fencingToken, e.lease, e.value.toString()]), etcdctlQueue(`${name}/`));
  assert.deepEqual(entries.map((e) => e.value.toString()), ['host-a pid 1', 'host-b pid 2', 'host-a pid 3', '']);
  assert.equal(state.holder.fencingToken, holder.fencingToken);
  assert.ok(state.holder.key.equals(holder.key));
  for (const e of entries) assert.ok(e.ttl !== null && e.ttl > 0 && e.ttl <= 10, `ttl ${e.ttl}`);
  assert.ok(state.revision >= entries[3].fencingToken);

  await holder.release();
  const tokens = await Promise.all(waiting);
  assert.deepEqual(tokens, state.waiters.map((e) => e.fencingToken));
  assert.equal((await a.inspect(name)).holder, null);
});

// covers: LOCK-VALUE-001
test('a value too long or a bad name is refused before anything is sent', async (t) => {
  const c = client(t);
  const name = prefix('bigvalue');
  await assert.rejects(c.lock(name, { value: Buffer.alloc(4097, 'x') }), (/** @type {any} */ e) => e.code === 'INVALID_ARGUMENT' && /at most 4096 bytes/.test(e.message));
  await assert.rejects(c.lock(name, { value: /** @type {any} */ (42) }), { code: 'INVALID_ARGUMENT' });
  assert.deepEqual(keysUnder(`${name}/`), []);
  const l = await c.lock(name, { value: Buffer.alloc(4096, 'y') });
  assert.equal((await c.inspect(name)).holder?.value.length, 4096);
  await l.release();
  for (const bad of ['', 'jobs/']) await assert.rejects(c.inspect(bad), { code: 'INVALID_ARGUMENT' });
});
