'use strict';
// No member can stall a client: endpoints [a member that never answers, a good member] connect
// within a bounded time and lock at once (default timeouts, 5 s), for both ways a member can be
// silent: its kernel accepts connections nobody serves, or its full accept queue drops SYNs.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, prefix, keysUnder } = require('./helpers');
const { silentListener, unacceptingListener } = require('./netfakes');
const { Client } = require('..');

/**
 * Connects to `[bad, good]` and makes 5 lock cycles, one client after another, until a client
 * was slow to connect (so it started at the bad endpoint: each client starts at a random one)
 * and at least two are done; at most 16 clients, 60 s.
 */
async function connectAndLock(bad, tag) {
  const name = `${prefix(tag)}-lock`;
  const started = Date.now();
  let seen = false;
  for (let c = 0; c < 16 && !(seen && c >= 2) && Date.now() - started < 60_000; c++) {
    const t0 = Date.now();
    const client = await Client.connect({ endpoints: [bad, ENDPOINTS[0]] }).catch((e) => {
      throw new Error(`client ${c}: connect failed after ${Date.now() - t0} ms: ${e.code} ${e.message}`);
    });
    const took = Date.now() - t0;
    try {
      // Well under the 5 s connect and request timeouts: a silent member may cost one
      // connection attempt, never a whole deadline.
      assert.ok(took < 4000, `client ${c}: connect took ${took} ms`);
      const t1 = Date.now();
      for (let i = 0; i < 5; i++) {
        const lock = await client.lock(name, { ttl: 5, timeout: 4000 });
        await lock.release();
      }
      assert.ok(Date.now() - t1 < 4000, `client ${c}: 5 lock cycles took ${Date.now() - t1} ms`);
    } finally {
      await client.close();
    }
    seen ||= took >= 500;
  }
  assert.ok(seen, 'no client started at the silent endpoint');
  assert.deepEqual(keysUnder(name), []);
}

// covers: CONN-SILENT-001
test('a first endpoint that accepts connections and never answers costs at most a connection attempt', async (t) => {
  const silent = await silentListener();
  t.after(() => silent.close());
  await connectAndLock(silent.endpoint, 'silent-accept');
  assert.ok(silent.accepted > 0, 'the silent endpoint was never tried');
});

// covers: CONN-SILENT-002
test('a first endpoint whose full accept queue drops SYNs costs at most a connection attempt', async (t) => {
  const unaccepting = await unacceptingListener();
  t.after(() => unaccepting.close());
  await connectAndLock(unaccepting.endpoint, 'silent-syn');
});
