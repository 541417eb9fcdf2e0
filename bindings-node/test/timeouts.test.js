'use strict';
// Two timeouts, two codes: a request whose answer never comes (netfakes' holdProxy holds its
// body, so etcd keeps it open and never answers) rejects TIMEOUT once the client's
// requestTimeout passes, and may or may not have been applied; a lock() whose own timeout
// passes rejects LOCK_TIMEOUT and leaves nothing behind. (Before the core told them apart,
// 9c7cb51^, the request deadline was LOCK_TIMEOUT too.)
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, prefix, keysUnder, waitFor } = require('./helpers');
const { holdProxy } = require('./netfakes');
const { Client, EtcdlockError, codes } = require('..');

const REQUEST_TIMEOUT = 500;

// covers: ERR-TIMEOUT-001
test('a request past its deadline rejects TIMEOUT; a lock wait past its own timeout LOCK_TIMEOUT', async (t) => {
  const proxy = await holdProxy(Number(new URL(ENDPOINTS[0]).port));
  t.after(() => proxy.close());
  const holder = new Client({ endpoints: ENDPOINTS });
  t.after(() => holder.close());
  const c = new Client({ endpoints: [proxy.endpoint], requestTimeout: REQUEST_TIMEOUT });
  t.after(() => c.close());
  const name = prefix('timeouts');
  const held = await holder.lock(name);

  await assert.rejects(c.lock(name, { timeout: 300 }), { code: codes.LOCK_TIMEOUT });
  await waitFor(() => keysUnder(`${name}/`).length === 1, 5000, "the waiter's key deleted");

  proxy.hold(`${name}-never`);
  const t0 = Date.now();
  const err = await c.get(`${name}-never`).then(() => null, (e) => e);
  const took = Date.now() - t0;
  assert.ok(proxy.holding, 'the request was not the one held');
  assert.ok(err instanceof EtcdlockError, `${err}`);
  assert.equal(codes.TIMEOUT, 'TIMEOUT');
  assert.equal(err.code, 'TIMEOUT', `${err}`);
  assert.ok(took >= REQUEST_TIMEOUT * 0.8 && took < 5000, `took ${took} ms`);
  await held.release();
});
