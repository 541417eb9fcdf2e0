'use strict';
// An acquire aborted (AbortSignal) while its enqueue is held in the network leaves no key: the
// enqueue's body reaches etcd after everything the client sent when it gave up, while another
// lock keeps the client's lease alive, and still no ghost key blocks the lock. (On the core of
// 4692150^, which sent no deadline with its requests, the late enqueue landed and its key
// stayed until the client deleted it again a request timeout later.)
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, prefix, keysUnder, waitFor } = require('./helpers');
const { holdProxy } = require('./netfakes');
const { Client } = require('..');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// covers: LOCK-GHOST-002
test('an acquire aborted while its enqueue is delayed in the network leaves no key', async (t) => {
  const name = `${prefix('ghost')}-job`;
 
  const clients = [];
  const proxy = await holdProxy(Number(new URL(ENDPOINTS[0]).port));
  t.after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    proxy.close();
  });
  const connect = async (endpoints) => {
    const c = await Client.connect({ endpoints, timeout: 5000 });
    clients.push(c);
    return c;
  };
  const holder = await connect(ENDPOINTS);
  const held = await holder.lock(name, { ttl: 10 });
  const waiter = await connect([proxy.endpoint]);
  // A wait that times out first: the waiter's client now has its lease for TTL 10, and knows
  // the queue is busy, so its next enqueue is the one request that writes its key.
  await assert.rejects(waiter.lock(name, { ttl: 10, timeout: 300 }), { code: 'LOCK_TIMEOUT' });
  await waitFor(() => keysUnder(`${name}/`).length === 1, 5000, 'the timed-out waiter key deleted');
  // Another lock of the waiter's on the same TTL keeps its lease in use throughout, so the
  // late enqueue would find that lease alive.
  const other = await waiter.lock(`${name}-other`, { ttl: 10 });

  // The enqueue's body is held by the proxy (etcd has its headers and waits) ...
  proxy.hold(`${name}/`);
  const ac = new AbortController();
  const acquire = waiter.lock(name, { ttl: 10, signal: ac.signal });
  await waitFor(() => proxy.holding, 5000, 'the enqueue held by the proxy');
  // ... the caller gives up; the acquire settles once its enqueue's outcome is known (core
  // races no enqueue against cancel), here when the request times out, and cleans up ...
  const aborted = Date.now();
  ac.abort();
  await assert.rejects(acquire, { name: 'AbortError' });
  assert.ok(Date.now() - aborted < 7000, `the abort took ${Date.now() - aborted} ms (request timeout 5 s)`);
  await sleep(300);
  // ... then the enqueue's body arrives, after all of that, and its cancel never does.
  assert.ok(proxy.release() > 0);
  await sleep(200);
  await held.release();

  // No key under the name, within a bound well under the 5 s request timeout, and the lock is
  // free at once for anyone.
  await waitFor(() => keysUnder(`${name}/`).length === 0, 2000, 'no key left under the lock name');
  const third = await connect(ENDPOINTS);
  const lock = await third.lock(name, { timeout: 0 });
  await lock.release();
  // The waiter's client goes on locking, and its other lock was never disturbed.
  const again = await waiter.lock(name, { ttl: 10, timeout: 5000 });
  await again.release();
  assert.ok(other.isHeld(), `the other lock was lost: ${other.lostReason()}`);
  await other.release();
  assert.deepEqual(keysUnder(name), []);
});
