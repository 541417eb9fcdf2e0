'use strict';
// Process-level behaviour, each case in a child process: exits by itself, forgotten close(),
// what keeps the event loop alive (see README "Exit policy"), one runtime per process.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, PKG, prefix, keysUnder, runChild } = require('./helpers');
const { Client } = require('..');

const HEAD = `const { Client } = require(${JSON.stringify(PKG)});
const client = new Client({ endpoints: process.env.ETCDLOCK_ENDPOINTS.split(',') });
`;

test('connect, lock, release, close: the process exits by itself', async () => {
  const name = prefix('exit-clean');
  const r = await runChild(`${HEAD}
(async () => {
  const lock = await client.lock(${JSON.stringify(name)});
  await client.put(${JSON.stringify(name + '-k')}, 'v', { ifHeld: lock });
  await lock.release();
  await client.close();
  console.log('done');
})();`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'done');
  assert.ok(r.ms < 10000, `took ${r.ms} ms`);
});

// covers: RT-EXIT-001
test('forgotten close() with a held lock, a lease and onLost callbacks: exits, and frees them', async () => {
  const name = prefix('exit-forgot');
  const r = await runChild(`${HEAD}
(async () => {
  const lock = await client.lock(${JSON.stringify(name)}, { ttl: 60 });
  lock.onLost(() => console.log('lost'));
  const lease = await client.lease(60);
  lease.onLost(() => console.log('lease lost'));
  await client.put(${JSON.stringify(name + '-leased')}, 'v', { lease });
  const idle = client.watch(${JSON.stringify(name + '-w')}); // created, never iterated
  await idle.ready;
  console.log('holding');
})();`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'holding');
  assert.ok(r.ms < 10000, `took ${r.ms} ms`);
  // The exit hook revoked the leases: no need to wait 60 s for the TTL.
  assert.deepEqual(keysUnder(`${name}/`), []);
  assert.deepEqual(keysUnder(`${name}-leased`), []);
});

test('process.exit() while holding a lock frees it too', async () => {
  const name = prefix('exit-explicit');
  const r = await runChild(`${HEAD}
(async () => {
  await client.lock(${JSON.stringify(name)}, { ttl: 60 });
  process.exit(3);
})();`);
  assert.equal(r.code, 3, r.stderr);
  assert.deepEqual(keysUnder(`${name}/`), []);
});

test('a watch being iterated keeps the process alive until it is closed', async () => {
  const name = prefix('exit-watch');
  const r = await runChild(`${HEAD}
(async () => {
  const w = client.watch(${JSON.stringify(name)});
  setTimeout(() => w.close(), 1000).unref(); // does not itself keep the process alive
  for await (const ev of w) console.log('event');
  console.log('ended');
})();`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'ended');
  assert.ok(r.ms >= 900, `exited after ${r.ms} ms: the pending watch did not keep it alive`);
});

test('a pending lock() keeps the process alive until it is acquired', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  const name = prefix('exit-pending');
  const held = await c.lock(name);
  setTimeout(() => held.release(), 1000);
  const r = await runChild(`${HEAD}
(async () => {
  const lock = await client.lock(${JSON.stringify(name)});
  console.log('acquired');
  await lock.release();
})();`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'acquired');
  assert.ok(r.ms >= 900, `exited after ${r.ms} ms`);
});

// covers: RT-ONE-001
test('importing starts no threads; clients share one runtime (thread count does not grow)', async () => {
  const r = await runChild(`const { runtimeThreads } = require(${JSON.stringify(__dirname + '/helpers.js')});
const { Client } = require(${JSON.stringify(PKG)});
(async () => {
  const before = runtimeThreads().length;
  const clients = [];
  for (let i = 0; i < 20; i++) clients.push(await Client.connect({ endpoints: process.env.ETCDLOCK_ENDPOINTS.split(',') }));
  const locks = await Promise.all(clients.map((c, i) => c.lock('nodetest/threads-' + process.pid + '-' + i)));
  const during = runtimeThreads().length;
  await Promise.all(locks.map((l) => l.release()));
  await Promise.all(clients.map((c) => c.close()));
  console.log(JSON.stringify({ before, during }));
})();`);
  assert.equal(r.code, 0, r.stderr);
  const { before, during } = JSON.parse(r.stdout);
  assert.equal(before, 0);
  assert.equal(during, 1); // core's one worker, whatever the number of clients
});

test('worker threads lock and release on their own event loops, and exit cleanly', async () => {
  const name = prefix('worker');
  const r = await runChild(`const { Worker } = require('node:worker_threads');
const body = \`const { parentPort, workerData } = require('node:worker_threads');
const { Client } = require(\${JSON.stringify(${JSON.stringify(PKG)})});
(async () => {
  const client = new Client({ endpoints: process.env.ETCDLOCK_ENDPOINTS.split(',') });
  for (let i = 0; i < 20; i++) await (await client.lock(workerData)).release();
  await client.close();
  parentPort.postMessage('ok');
})();\`;
(async () => {
  const results = await Promise.all([0, 1, 2].map(() => new Promise((resolve, reject) => {
    const w = new Worker(body, { eval: true, workerData: ${JSON.stringify(name)} });
    let msg = null;
    w.on('message', (m) => (msg = m));
    w.on('error', reject);
    w.on('exit', (code) => resolve([msg, code]));
  })));
  console.log(JSON.stringify(results));
})();`);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [['ok', 0], ['ok', 0], ['ok', 0]]);
  assert.deepEqual(keysUnder(`${name}/`), []);
});

test('the JS thread polls only briefly after a call starts: no busy loop while a lock waits or after it settles', async () => {
  const name = prefix('spin');
  const r = await runChild(`${HEAD}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpuMs = async (ms) => { const c = process.cpuUsage(); await sleep(ms); const d = process.cpuUsage(c); return (d.user + d.system) / 1000; };
(async () => {
  const other = new Client({ endpoints: process.env.ETCDLOCK_ENDPOINTS.split(',') });
  const held = await other.lock(${JSON.stringify(name)});
  const waiting = client.lock(${JSON.stringify(name)});
  await sleep(100);
  const whileWaiting = await cpuMs(1000);
  await held.release();
  await (await waiting).release();
  const afterwards = await cpuMs(1000);
  await other.close();
  await client.close();
  console.log(JSON.stringify({ whileWaiting, afterwards }));
})();`);
  assert.equal(r.code, 0, r.stderr);
  const { whileWaiting, afterwards } = JSON.parse(r.stdout);
  // A JS thread that kept polling would use most of a CPU second in each.
  assert.ok(whileWaiting < 300, `${whileWaiting} ms of CPU in 1 s while waiting`);
  assert.ok(afterwards < 300, `${afterwards} ms of CPU in 1 s after settling`);
});
