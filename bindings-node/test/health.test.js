'use strict';
// health() on every lock-like handle (issue #59): ok while held; not ok by the time onLost
// runs (read inside the callback); released after the holder ended it.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, prefix, etcdctl, waitFor } = require('./helpers');
const { Client } = require('..');

function client(t) {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  return c;
}

function assertHeld(h, name, token) {
  assert.equal(h.ok, true, JSON.stringify(h, (_, v) => (typeof v === 'bigint' ? String(v) : v)));
  assert.equal(h.state, 'held');
  assert.equal(h.lostReason, null);
  assert.equal(h.name, name);
  assert.equal(h.fencingToken, token);
  assert.equal(typeof h.leaseId, 'bigint');
  assert.ok(h.exclusiveForMs > 0 && h.exclusiveForMs <= 10000, `exclusiveForMs ${h.exclusiveForMs}`);
  assert.ok(Object.isFrozen(h));
}

function assertReleased(h) {
  assert.equal(h.ok, false);
  assert.equal(h.state, 'released');
  assert.equal(h.lostReason, null);
  assert.equal(h.exclusiveForMs, null);
}

// covers: HEALTH-HANDLE-001
test('health() is not ok by the time onLost runs, and released after release', async (t) => {
  const c = client(t);
  const name = prefix('health');
  const lock = await c.lock(name, { ttl: 10 });
  assertHeld(lock.health(), name, lock.fencingToken);
  let seen = null;
  lock.onLost((reason) => {
    seen = { reason, health: lock.health() };
  });
  etcdctl('del', lock.key.toString()); // another client deletes the key
  await waitFor(() => seen !== null, 5000, 'onLost');
  assert.equal(seen.reason, 'key_deleted');
  assert.equal(seen.health.ok, false);
  assert.equal(seen.health.state, 'lost');
  assert.equal(seen.health.lostReason, 'key_deleted');
  assert.equal(seen.health.exclusiveForMs, null);
  await assert.rejects(lock.release(), { code: 'NOT_HELD' });
  assertReleased(lock.health());
});

// covers: HEALTH-HANDLE-001
test('every handle reads held, then released', async (t) => {
  const c = client(t);
  const p = prefix('health-kinds');
  const permit = await c.semaphore(`${p}sem`, { permits: 2, ttl: 10 });
  assertHeld(permit.health(), `${p}sem`, permit.fencingToken);
  await permit.release();
  assertReleased(permit.health());
  const w = await c.rwlock(`${p}rw`).write();
  assertHeld(w.health(), `${p}rw`, w.fencingToken);
  await w.release();
  assertReleased(w.health());
  const leading = await c.election(`${p}el`).campaign('me');
  assertHeld(leading.health(), `${p}el`, leading.fencingToken);
  await leading.resign();
  assertReleased(leading.health());
  const set = await c.lockSet([`${p}a`, `${p}b`], { ttl: 10, timeout: 5000 });
  assertHeld(set.health(), `${p}a,${p}b`, set.fencingToken);
  await set.release();
  assertReleased(set.health());
  const held = await c.pool(`${p}pool`, { size: 2, ttl: 10 }).acquire({ timeout: 5000 });
  assertHeld(held.health(), `${p}pool`, held.fencingToken);
  await held.release();
  assertReleased(held.health());
  const q = c.queue(`${p}q`, { ttl: 10 });
  await q.put('x');
  const task = await q.claim({ timeout: 5000 });
  assert.equal(task.health().ok, true);
  assert.ok(task.health().name.startsWith(`${p}q/claim/`));
  await task.ack();
  assertReleased(task.health());
  const slot = await c.once(`${p}job`, { every: 3600_000 });
  assert.ok(slot !== null);
  assert.equal(slot.health().ok, true);
  assert.ok(slot.health().name.startsWith(`${p}job/slot/`));
  await slot.done();
  assertReleased(slot.health());
});

// covers: HEALTH-HANDLE-001
test('the readiness probe example answers 200 while leading, 503 once lost', async () => {
  const { spawn } = require('node:child_process');
  const path = require('node:path');
  const name = prefix('health-probe');
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'examples', 'readiness_probe.cjs')], {
    env: { ...process.env, ETCDLOCK_ENDPOINTS: ENDPOINTS, PORT: '0', ELECTION: name, TTL: '10' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    await waitFor(() => /leading \d+/.test(out), 20000, 'the example leads');
    const port = Number(/listening (\d+)/.exec(out)[1]);
    const get = async () => {
      const r = await fetch(`http://127.0.0.1:${port}/readyz`);
      return { status: r.status, body: await r.text() };
    };
    const ready = await get();
    assert.equal(ready.status, 200);
    assert.ok(ready.body.startsWith('held'), ready.body);
    const key = etcdctl('get', '--prefix', '--keys-only', `${name}/`).trim().split('\n')[0];
    etcdctl('del', key);
    await waitFor(() => out.includes('lost (key_deleted)'), 10000, 'the example hears of the loss');
    const lost = await get();
    assert.equal(lost.status, 503);
    assert.ok(lost.body.startsWith('lost key_deleted'), lost.body);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
  }
});
