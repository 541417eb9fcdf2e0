'use strict';
// The library's events on diagnostics_channel (log.js): a lost lock is a 'warn' message on
// etcdlock:lock with its name, token and reason; acquisitions are 'debug' messages while
// someone subscribes; NODE_DEBUG=etcdlock prints them.
const test = require('node:test');
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const { isMainThread } = require('node:worker_threads');
const { ENDPOINTS, prefix, etcdctl, waitFor, runChild } = require('./helpers');
const { Client, logChannels } = require('..');

test('the channel names', () => {
  assert.deepEqual({ ...logChannels }, {
    lock: 'etcdlock:lock',
    lease: 'etcdlock:lease',
    watch: 'etcdlock:watch',
    connection: 'etcdlock:connection',
  });
});

// covers: OBS-EVENT-001
test('a lost lock is a warn message on etcdlock:lock with its name, token and reason', async (t) => {
  const seen = [];
  let threadOk = true;
  const onMessage = (/** @type {any} */ m) => {
    seen.push(m);
    threadOk = threadOk && isMainThread;
  };
  dc.subscribe('etcdlock:lock', onMessage);
  t.after(() => dc.unsubscribe('etcdlock:lock', onMessage));
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const name = prefix('log-lost');
  const lock = await c.lock(name);
  const token = lock.fencingToken;
  await waitFor(() => seen.some((m) => m.message === 'lock acquired' && m.fields.lock === name), 5000, 'acquired message');
  const acquired = seen.find((m) => m.message === 'lock acquired' && m.fields.lock === name);
  assert.equal(acquired.level, 'debug');
  assert.equal(acquired.fields.token, Number(token));

  etcdctl('del', lock.key.toString());
  const isLost = (/** @type {any} */ m) => m.message.startsWith('lock lost') && m.fields.lock === name;
  await waitFor(() => seen.some(isLost), 5000, 'lost message');
  const lost = seen.find(isLost);
  assert.equal(lost.level, 'warn');
  assert.equal(lost.area, 'lock');
  assert.equal(lost.fields.token, Number(token));
  assert.equal(lost.fields.reason, 'key_deleted');
  assert.equal(typeof lost.fields.held_ms, 'number');
  assert.ok(threadOk, 'published on the main thread');
  assert.equal(lock.isHeld(), false);
});

test('NODE_DEBUG=etcdlock prints the events to stderr', async () => {
  const name = prefix('log-debug');
  const source = `
    const { Client } = require(${JSON.stringify(require.resolve('..'))});
    (async () => {
      const c = new Client({ endpoints: ${JSON.stringify(ENDPOINTS)} });
      const lock = await c.lock(${JSON.stringify(name)});
      await lock.release();
      await c.close();
      await new Promise((r) => setTimeout(r, 200)); // the last events reach the JS thread
    })();`;
  const r = await runChild(source, { env: { NODE_DEBUG: 'etcdlock' } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`ETCDLOCK \\d+: DEBUG lock: lock acquired lock=${name} token=\\d+`));
  assert.match(r.stderr, new RegExp(`DEBUG lock: lock released lock=${name}`));
});
