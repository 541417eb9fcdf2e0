'use strict';
// The service registry against a real etcd: register (kept registered, lost and restored, taken
// over), instances, discover (an async iterable), the gRPC endpoint helpers, the registry
// metrics. What etcd holds (keys, values, leases) is read back with etcdctl, not with the
// library under test. The tests that count every lease use an etcd of their own.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { ENDPOINTS, REPO, startEtcd, prefix, etcdctl, etcdctlAt, keysUnder, waitFor, runChild } = require('./helpers');
const { Client, Registration, Discovery, EtcdlockError, grpcEndpoint, grpcEndpointAddr } = require('..');
const esm = import('../index.mjs');

const INVALID = { code: 'INVALID_ARGUMENT', name: 'EtcdlockError' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A client of `endpoints` (default: the shared test etcd), closed after the test. */
function client(t, endpoints = ENDPOINTS) {
  const c = new Client({ endpoints });
  t.after(() => c.close());
  return c;
}

/** `p`, or a rejection after `ms` (no test waits without a bound). */
function within(p, ms, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/** The next set of discovery `d` within 5 s (fails if it ended). */
async function nextSet(d, what = 'the next set') {
  const r = await within(d.next(), 5000, what);
  assert.equal(r.done, false, `the discovery ended while waiting for ${what}`);
  return r.value;
}

/** Instance names of a set, as strings. */
const names = (set) => set.instances.map((i) => i.name.toString());

/** `key` as etcd has it (etcdctl): { value, lease (bigint), modRevision (bigint) } or null. */
function kvAt(eps, key) {
  const raw = etcdctlAt(eps, 'get', key, '-w', 'json');
  const kvs = JSON.parse(raw).kvs || [];
  if (!kvs.length) return null;
  // Lease IDs are 64-bit: read from the text, not through JSON numbers (doubles). Fields of
  // value 0 (no lease, an empty value) are left out by etcdctl.
  const int = (field) => BigInt((new RegExp(`"${field}":(\\d+)`).exec(raw) || [0, 0])[1]);
  return { value: Buffer.from(kvs[0].value || '', 'base64').toString(), lease: int('lease'), modRevision: int('mod_revision') };
}

/** The lease IDs etcd at `eps` has (etcdctl lease list), as lower-case hex. */
function leasesAt(eps) {
  return etcdctlAt(eps, 'lease', 'list')
    .split('\n')
    .slice(1)
    .map((l) => l.trim())
    .filter(Boolean);
}

/** Records a registration's events as `[type, detail]` pairs. */
function record(reg) {
  const seen = [];
  reg.onLost((reason) => seen.push(['lost', reason]));
  reg.onRestored((lease) => seen.push(['restored', lease]));
  reg.onTakenOver(() => seen.push(['takenOver']));
  return seen;
}

// An etcd of this file's own (the lease-counting tests), started on first use.
let own = null;
function ownEtcd() {
  if (own === null) own = startEtcd(['--members', '1']).pop();
  return own;
}

// ---------------------------------------------------------------------- register ---

// covers: REG-BASIC-001
test('REG-BASIC-001: register, update, a taken name (WOULD_BLOCK, nothing left), replace (takenOver, NOT_HELD), close leaves no key and no lease', async (t) => {
  const eps = ownEtcd();
  const [a, b] = [client(t, [eps]), client(t, [eps])];
  await Promise.all([a.ready, b.ready]);
  const svc = prefix('reg') + '/api';
  const key = `${svc}/node-1`;
  const leasesBefore = leasesAt(eps);

  const reg = await a.register(svc, 'node-1', 'v1', { ttl: 10 });
  assert.ok(reg instanceof Registration);
  assert.equal(reg.key.toString(), key);
  assert.equal(typeof reg.leaseId, 'bigint');
  assert.equal(reg.registered, true);
  const seen = record(reg);
  // In etcd: the key with the value, on the registration's own lease of 10 s.
  assert.deepEqual(kvAt(eps, key) && [kvAt(eps, key).value, kvAt(eps, key).lease], ['v1', reg.leaseId]);
  assert.match(etcdctlAt(eps, 'lease', 'timetolive', reg.leaseId.toString(16)), /granted with TTL\(10s\)/);
  let set = await b.instances(svc);
  assert.deepEqual(set.instances, [{ name: Buffer.from('node-1'), value: Buffer.from('v1'), lease: reg.leaseId, modRevision: kvAt(eps, key).modRevision }]);
  assert.equal(typeof set.revision, 'bigint');
  assert.ok(set.revision >= set.instances[0].modRevision);

  // The update shows, at the revision it returns; a Buffer value as well as a string.
  const rev = await reg.update(Buffer.from('v2'));
  assert.equal(typeof rev, 'bigint');
  assert.deepEqual(kvAt(eps, key), { value: 'v2', lease: reg.leaseId, modRevision: rev });
  set = await b.instances(svc);
  assert.equal(set.instances[0].value.toString(), 'v2');
  assert.equal(set.instances[0].modRevision, rev);

  // Another registrant cannot take the name without `replace`: WOULD_BLOCK, and nothing of it is left.
  await assert.rejects(b.register(svc, 'node-1', 'other', { ttl: 10 }), { code: 'WOULD_BLOCK', name: 'EtcdlockError' });
  assert.deepEqual(kvAt(eps, key), { value: 'v2', lease: reg.leaseId, modRevision: rev });
  assert.equal(leasesAt(eps).length, leasesBefore.length + 1, 'the refused registration left no lease');
  assert.deepEqual(b.metrics().registrationsAlive, 0);

  // With replace it takes the name over: the first registration ends (takenOver), its update is NOT_HELD.
  const taker = await b.register(svc, 'node-1', 'taker', { ttl: 10, replace: true });
  assert.notEqual(taker.leaseId, reg.leaseId);
  await waitFor(() => seen.length > 0, 5000, 'the first registration to see the takeover');
  assert.deepEqual(seen, [['takenOver']]);
  assert.equal(reg.registered, false);
  assert.equal(reg.leaseId, null);
  await assert.rejects(reg.update('v3'), { code: 'NOT_HELD', name: 'EtcdlockError' });
  assert.deepEqual(kvAt(eps, key) && [kvAt(eps, key).value, kvAt(eps, key).lease], ['taker', taker.leaseId], 'the ended registration wrote nothing');
  // A callback added after the takeover is called once, asynchronously.
  let late = 0;
  reg.onTakenOver(() => late++);
  assert.equal(late, 0);
  await waitFor(() => late === 1, 2000, 'the late onTakenOver callback');

  // Closing the ended one leaves the taker's key; closing the taker leaves nothing.
  await reg.close();
  await reg.close(); // idempotent
  assert.deepEqual(names(await a.instances(svc)), ['node-1']);
  assert.equal(kvAt(eps, key).value, 'taker');
  await taker.close();
  assert.equal(taker.registered, false);
  assert.deepEqual(keysUnder(`${svc}/`, eps), []);
  assert.deepEqual((await a.instances(svc)).instances, []);
  await waitFor(() => leasesAt(eps).length === leasesBefore.length, 5000, 'every registration lease revoked');
  assert.deepEqual(leasesAt(eps), leasesBefore);
  await assert.rejects(taker.update('late'), { code: 'NOT_HELD' });
  assert.deepEqual(keysUnder(`${svc}/`, eps), [], 'an update after close writes nothing');
  assert.deepEqual(seen, [['takenOver']], 'close reports nothing');
});

// covers: REG-BASIC-001 (bad service or instance names, TTL 0, a value over 4096 bytes; CONN-CLOSED-001 for the registry calls)
test('REG-BASIC-001: bad names, TTLs, values and types are INVALID_ARGUMENT, a closed client CLOSED; nothing is left in etcd', async (t) => {
  const eps = ownEtcd();
  const c = client(t, [eps]);
  await c.ready;
  const svc = prefix('reg-args') + '/api';
  const leasesBefore = leasesAt(eps);

  for (const bad of ['', Buffer.alloc(0), 'svc/', `${svc}/`, 'a\0b', 42, null, undefined, {}]) {
    await assert.rejects(c.register(bad, 'x', 'v'), INVALID, `service ${JSON.stringify(bad)}`);
    await assert.rejects(c.instances(bad), INVALID, `instances(${JSON.stringify(bad)})`);
    assert.throws(() => c.discover(bad), INVALID, `discover(${JSON.stringify(bad)})`);
  }
  // The message says what was wrong with what.
  await assert.rejects(c.register('', 'x', 'v'), /service name/);
  for (const bad of ['', Buffer.alloc(0), 'a/b', '/', 'a\0b', 42, null, undefined]) {
    await assert.rejects(c.register(svc, bad, 'v'), INVALID, `instance ${JSON.stringify(bad)}`);
  }
  await assert.rejects(c.register(svc, 'a/b', 'v'), /instance name/);
  for (const bad of [undefined, null, 42, {}, 'x'.repeat(4097), Buffer.alloc(4097)]) {
    await assert.rejects(c.register(svc, 'x', bad), INVALID, `value ${String(bad).slice(0, 10)}`);
  }
  await assert.rejects(c.register(svc, 'x', 'x'.repeat(4097)), /4096/);
  for (const ttl of [0, -1, 1.5, '10', NaN, Infinity, 10n, 9_000_000_001]) {
    await assert.rejects(c.register(svc, 'x', 'v', { ttl }), INVALID, `ttl ${String(ttl)}`);
  }
  for (const replace of ['yes', 1, {}]) {
    await assert.rejects(c.register(svc, 'x', 'v', { replace }), INVALID, `replace ${String(replace)}`);
  }
  await assert.rejects(c.register(svc, 'x', 'v', 'opts'), INVALID);
  await assert.rejects(c.register(svc, 'x', 'v', { signal: {} }), INVALID);
  assert.throws(() => c.discover(svc, 'opts'), INVALID);
  assert.throws(() => c.discover(svc, { signal: 'abort' }), INVALID);
  assert.throws(() => grpcEndpoint(42), INVALID);
  assert.throws(() => grpcEndpointAddr(42), INVALID);

  // On a registration: bad values and callbacks.
  const reg = await c.register(svc, 'ok', '');
  await assert.rejects(reg.update(42), INVALID);
  await assert.rejects(reg.update('x'.repeat(4097)), INVALID);
  assert.equal(kvAt(eps, `${svc}/ok`).value, '', 'the bad updates wrote nothing');
  for (const on of [(f) => reg.onLost(f), (f) => reg.onRestored(f), (f) => reg.onTakenOver(f)]) {
    assert.throws(() => on('cb'), INVALID);
  }
  await reg.close();
  assert.deepEqual(keysUnder(svc, eps), []);
  assert.deepEqual(leasesAt(eps), leasesBefore, 'no lease was granted for any bad call');

  // A closed client: every call CLOSED, nothing sent; a registration's close() after it resolves.
  const c2 = new Client({ endpoints: [eps] });
  const kept = await c2.register(svc, 'kept', 'v');
  await c2.close();
  await assert.rejects(c2.register(svc, 'y', 'v'), { code: 'CLOSED', name: 'EtcdlockError' });
  await assert.rejects(c2.instances(svc), { code: 'CLOSED' });
  await assert.rejects(c2.discover(svc).next(), { code: 'CLOSED' });
  await assert.rejects(kept.update('v2'), { code: 'CLOSED' });
  await kept.close();
  assert.equal(kept.registered, false);
  assert.deepEqual(keysUnder(svc, eps), [], "closing the client deregistered it (its lease revoked)");
  await waitFor(() => leasesAt(eps).length === leasesBefore.length, 5000, 'the closed client\'s lease revoked');
});

// covers: REG-BASIC-001 (AbortSignal, Symbol.asyncDispose)
test('REG-BASIC-001: an aborted signal sends nothing; one aborted while registering leaves nothing; aborting later closes it; asyncDispose closes', async (t) => {
  const c = client(t);
  const svc = prefix('reg-signal') + '/api';
  await assert.rejects(c.register(svc, 'a', 'v', { signal: AbortSignal.abort('stop') }), (e) => e.name === 'AbortError' && e.cause === 'stop');

  // Fired while the registration was on its way: it is closed before the promise rejects.
  const ac1 = new AbortController();
  const pending = c.register(svc, 'b', 'v', { signal: ac1.signal });
  ac1.abort();
  await assert.rejects(pending, { name: 'AbortError', code: 'ABORT_ERR' });
  assert.deepEqual(keysUnder(`${svc}/`), []);

  // Fired later: the registration is closed (as server.listen({ signal }) closes a server).
  const ac2 = new AbortController();
  const reg = await c.register(svc, 'c', 'v', { signal: ac2.signal });
  assert.deepEqual(keysUnder(`${svc}/`), [`${svc}/c`]);
  ac2.abort();
  await waitFor(() => keysUnder(`${svc}/`).length === 0, 5000, 'the aborted registration to be closed');
  assert.equal(reg.registered, false);
  await reg.close();

  const disposable = await c.register(svc, 'd', 'v');
  assert.equal(keysUnder(`${svc}/`).length, 1);
  await disposable[Symbol.asyncDispose]();
  assert.deepEqual(keysUnder(`${svc}/`), []);
  assert.equal(c.metrics().registrationsAlive, 0);
});

/** Runs a child that registers `<svc>/n1` (TTL 30 s) and returns; resolves the child's result. */
async function registerInChild(svc) {
  const src = `
    const { Client } = require('.');
    const c = new Client({ endpoints: process.env.ETCDLOCK_ENDPOINTS.split(',') });
    c.register(${JSON.stringify(svc)}, 'n1', 'v', { ttl: 30 }).then((r) => {
      r.onLost(() => {});
      console.log('registered ' + r.registered);
    });`;
  const r = await runChild(src, { timeoutMs: 20_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'registered true');
  return r;
}

// covers: REG-BASIC-001 (exit policy: a registration never keeps the process alive)
test('REG-BASIC-001: a process that registers and returns exits by itself (a registration does not keep it alive)', async () => {
  const svc = prefix('reg-exit') + '/api';
  const r = await registerInChild(svc);
  assert.ok(r.ms < 10_000, `took ${r.ms} ms`);
  etcdctl('del', '--prefix', `${svc}/`);
});

// covers: REG-EXIT-001
test(
  'REG-EXIT-001: a process that exits with a registration open: its instance is gone at once, not after the TTL',
  async () => {
    // Five runs: the exit used to race with the registration's own task (about 1 run in 3).
    for (let i = 0; i < 5; i++) {
      const svc = prefix('reg-exit-gone') + '/api';
      await registerInChild(svc);
      const left = keysUnder(`${svc}/`);
      if (left.length) etcdctl('del', '--prefix', `${svc}/`);
      assert.deepEqual(left, [], `run ${i}: deregistered at exit, not after the 30 s TTL`);
    }
  },
);

// covers: REG-RECOVER-001
test('REG-RECOVER-001: the lease revoked with etcdctl: lost then restored within 5 s on a new lease, listed again with its value; the key deleted too', async (t) => {
  const c = client(t);
  const svc = prefix('reg-recover') + '/api';
  const key = `${svc}/node-1`;
  const reg = await c.register(svc, 'node-1', 'v1', { ttl: 5 });
  await reg.update('v2');
  const seen = record(reg);
  const first = reg.leaseId;
  const removed = [];
  const off = reg.onLost((reason) => removed.push(reason));

  etcdctl('lease', 'revoke', first.toString(16));
  await waitFor(() => seen.length >= 2, 5000, 'lost, then restored');
  assert.equal(seen.length, 2, JSON.stringify(seen, (_, v) => (typeof v === 'bigint' ? String(v) : v)));
  assert.equal(seen[0][0], 'lost');
  assert.ok(['expired', 'revoked', 'key_deleted'].includes(seen[0][1]), `reason ${seen[0][1]}`);
  assert.equal(seen[1][0], 'restored');
  const second = seen[1][1];
  assert.equal(typeof second, 'bigint');
  assert.notEqual(second, first);
  assert.equal(reg.leaseId, second);
  assert.equal(reg.registered, true);
  // etcd has it again, on the new lease, with the updated value.
  const got = kvAt(ENDPOINTS.join(','), key);
  assert.deepEqual([got.value, got.lease], ['v2', second]);
  const set = await c.instances(svc);
  assert.deepEqual([names(set), set.instances[0].lease, set.instances[0].value.toString()], [['node-1'], second, 'v2']);
  assert.equal(typeof (await reg.update('v3')), 'bigint', 'updates work again');

  assert.equal(removed.length, 1);
  off();

  // The key deleted by hand: lost (key_deleted), back on a new lease.
  etcdctl('del', key);
  await waitFor(() => seen.length >= 4, 5000, 'lost and restored after the delete');
  assert.deepEqual(seen.slice(2).map(([type, d]) => (type === 'lost' ? [type, d] : [type, typeof d])), [['lost', 'key_deleted'], ['restored', 'bigint']]);
  assert.notEqual(seen[3][1], second);
  assert.deepEqual(names(await c.instances(svc)), ['node-1']);
  assert.equal(kvAt(ENDPOINTS.join(','), key).value, 'v3', 'the value registered again is the latest');

  assert.equal(removed.length, 1, 'a removed callback is not called again');
  // Closing reports nothing and leaves nothing.
  await reg.close();
  assert.deepEqual(keysUnder(`${svc}/`), []);
  await sleep(200);
  assert.equal(seen.length, 4);
});

// ---------------------------------------------------------------------- discover ---

// covers: DISC-BASIC-001
test('DISC-BASIC-001: discover: the current (empty) set first, then one set per change in name order at its revision; keys below an instance are not instances', async (t) => {
  const [a, b] = [client(t), client(t)];
  const svc = prefix('disc') + '/api';
  const d = b.discover(svc);
  assert.ok(d instanceof Discovery);
  assert.equal(d[Symbol.asyncIterator](), d);

  let set = await nextSet(d, 'the current set');
  assert.deepEqual(set.instances, []);
  assert.equal(typeof set.revision, 'bigint');
  let last = set.revision;

  // Registered out of name order: the sets are in name order.
  const r2 = await a.register(svc, 'n2', 'b');
  set = await nextSet(d, 'n2');
  assert.deepEqual(names(set), ['n2']);
  assert.equal(set.revision, set.instances[0].modRevision, 'the set is at the revision of its change');
  assert.ok(set.revision > last);
  last = set.revision;

  const r1 = await a.register(svc, 'n1', grpcEndpoint('10.0.0.7:50051'));
  set = await nextSet(d, 'n1');
  assert.deepEqual(names(set), ['n1', 'n2']);
  assert.deepEqual(set.instances.map((i) => i.lease), [r1.leaseId, r2.leaseId]);
  assert.equal(grpcEndpointAddr(set.instances[0].value), '10.0.0.7:50051');
  assert.equal(set.revision, set.instances[0].modRevision);
  assert.ok(set.revision > last);
  last = set.revision;

  const rev = await r1.update('a2');
  set = await nextSet(d, 'the update');
  assert.deepEqual(set.instances.map((i) => [i.name.toString(), i.value.toString()]), [['n1', 'a2'], ['n2', 'b']]);
  assert.equal(set.revision, rev);
  last = set.revision;

  await r1.close();
  set = await nextSet(d, 'n1 closed');
  assert.deepEqual(names(set), ['n2']);
  assert.ok(set.revision > last);
  last = set.revision;

  // A key below an instance is no instance: no set for it; the next change is n2's close.
  await a.put(`${svc}/n2/sub`, 'x');
  await r2.close();
  set = await nextSet(d, 'n2 closed');
  assert.deepEqual(set.instances, []);
  assert.ok(set.revision > last);
  await a.delete(`${svc}/n2/sub`);
  d.close();
  assert.deepEqual(await d.next(), { value: undefined, done: true });
});

// covers: DISC-BASIC-001 (ending a discovery: break, close(), AbortSignal, the client's close)
test('DISC-BASIC-001: leaving the loop closes the discovery and its watch (watchesOpen back); a signal rejects AbortError; the client closing ends it', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  await c.ready;
  const svc = prefix('disc-end') + '/api';
  // Registered by another client: `c`'s watches are the discoveries' only.
  const reg = await client(t).register(svc, 'n1', 'v');
  const before = c.metrics().watchesOpen;
  assert.equal(before, 0);
  const loop = async () => {
    for await (const set of c.discover(svc)) {
      assert.deepEqual(names(set), ['n1']);
      assert.equal(c.metrics().watchesOpen, before + 1, 'the discovery watches while iterated');
      break;
    }
  };
  await within(loop(), 5000, 'the first set in a for await loop');
  await waitFor(() => c.metrics().watchesOpen === before, 5000, 'the discovery watch closed after break');

  // close() while a next() waits: it resolves done, and the watch is closed.
  const d = c.discover(svc);
  await nextSet(d);
  const waiting = d.next();
  await sleep(100);
  d.close();
  assert.deepEqual(await within(waiting, 5000, 'next() after close'), { value: undefined, done: true });
  await waitFor(() => c.metrics().watchesOpen === before, 5000, 'the discovery watch closed after close()');

  // A signal: already aborted, nothing is sent; aborted while next() waits, it rejects.
  await assert.rejects(c.discover(svc, { signal: AbortSignal.abort() }).next(), { name: 'AbortError' });
  const ac = new AbortController();
  const aborted = c.discover(svc, { signal: ac.signal });
  await nextSet(aborted);
  const pending = aborted.next();
  ac.abort(new Error('enough'));
  await assert.rejects(within(pending, 5000, 'the aborted next()'), (e) => e.name === 'AbortError' && e.cause.message === 'enough');
  await assert.rejects(aborted.next(), { name: 'AbortError' });
  await waitFor(() => c.metrics().watchesOpen === before, 5000, 'the discovery watch closed after abort');

  // The client closes: a pending next() resolves done; a new discovery rejects CLOSED.
  const last = c.discover(svc);
  await nextSet(last);
  const open = last.next();
  await reg.close();
  assert.deepEqual(names((await within(open, 5000, 'the set after close')).value), []);
  const ending = last.next();
  await c.close();
  assert.deepEqual(await within(ending, 5000, 'the end at client close'), { value: undefined, done: true });
  await assert.rejects(c.discover(svc).next(), { code: 'CLOSED', name: 'EtcdlockError' });
});

// ----------------------------------------------------------------------- metrics ---

/** The samples of Prometheus text as tests/prometheus_text.py (a strict reader) parses them. */
function parsePrometheus(text, client) {
  const r = spawnSync('python3', [path.join(REPO, 'tests', 'prometheus_text.py'), '--client', client], { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, `the reader refused the text: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// covers: REG-METRICS-001
test('REG-METRICS-001: registrationsAlive, reregistrations by the reported reason, discoverySnapshots counting the sets delivered; the same in the Prometheus text', async (t) => {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  await c.ready;
  const svc = prefix('reg-metrics') + '/api';
  let m = c.metrics();
  assert.equal(m.registrationsAlive, 0);
  assert.deepEqual(m.reregistrations, { expired: 0, revoked: 0, key_deleted: 0 });
  assert.equal(m.discoverySnapshots, 0);

  const d = c.discover(svc);
  let delivered = 0;
  const next = async (what) => {
    const set = await nextSet(d, what);
    delivered++;
    return set;
  };
  await next('the empty set');
  const reg = await c.register(svc, 'n1', 'v');
  const seen = record(reg);
  await next('n1');
  m = c.metrics();
  assert.equal(m.registrationsAlive, 1);
  assert.equal(m.discoverySnapshots, 2);
  assert.equal(delivered, 2);

  etcdctl('lease', 'revoke', reg.leaseId.toString(16));
  await waitFor(() => seen.length >= 2, 5000, 'lost and restored');
  const reason = seen[0][1];
  // The discovery sees the key go and come back (maybe as one set): read until it is back.
  for (let i = 0; i < 5; i++) {
    const set = await next('the set after the revoke');
    if (set.instances.length === 1 && set.instances[0].lease === reg.leaseId) break;
  }
  m = c.metrics();
  assert.deepEqual(m.reregistrations, { expired: 0, revoked: 0, key_deleted: 0, [reason]: 1 });
  assert.equal(m.registrationsAlive, 1, 'registered again');
  assert.equal(m.discoverySnapshots, delivered, 'every set delivered is counted once');
  const s = parsePrometheus(c.metricsText(), c.name);
  assert.equal(s.etcdlock_registrations_alive, 1);
  assert.equal(s[`etcdlock_reregistrations_total{reason="${reason}"}`], 1);
  assert.equal(s.etcdlock_discovery_snapshots_total, delivered);

  await reg.close();
  d.close();
  m = c.metrics();
  assert.equal(m.registrationsAlive, 0);
  assert.equal(parsePrometheus(c.metricsText(), c.name).etcdlock_registrations_alive, 0);
  assert.equal(m.discoverySnapshots, delivered);
});

// ------------------------------------------------------------------------ helpers ---

// covers: REG-GRPC-001 (the value format only; Go's resolver reading it is the core's test)
test('REG-GRPC-001: grpcEndpoint writes the Go endpoints manager value, grpcEndpointAddr reads it and Go-written values', () => {
  assert.equal(grpcEndpoint('10.0.0.7:50051'), '{"Op":0,"Addr":"10.0.0.7:50051","Metadata":null}');
  assert.equal(grpcEndpointAddr(grpcEndpoint('a"b:1')), 'a"b:1');
  assert.equal(grpcEndpointAddr(Buffer.from('{"Op":0,"Addr":"127.0.0.1:7000","Metadata":{"zone":"a"}}')), '127.0.0.1:7000');
  assert.equal(grpcEndpointAddr('{"Op":1,"Addr":"127.0.0.1:7000","Metadata":null}'), null, 'a delete update');
  assert.equal(grpcEndpointAddr('plain value'), null);
  assert.equal(grpcEndpointAddr(new Uint8Array(0)), null);
});

test('the ESM entry exports the registry (the same objects)', async () => {
  const m = await esm;
  const cjs = require('..');
  for (const k of ['Registration', 'Discovery', 'grpcEndpoint', 'grpcEndpointAddr']) assert.equal(m[k], cjs[k], k);
  assert.ok(new EtcdlockError('CLOSED', 'x') instanceof Error);
});
