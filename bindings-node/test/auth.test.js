'use strict';
// A least-privilege user (readwrite on `app/` only) and token refresh, against real etcd members
// with auth enabled (set up with etcdctl as root): the `auth: { user, password }` option.
const test = require('node:test');
const assert = require('node:assert/strict');
const { startEtcd, etcdctlAt } = require('./helpers');
const { Client, EtcdlockError } = require('..');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Starts a member (extra harness args), enables auth with root and a user `app` on `app/`. */
function etcdWithAppUser(args = []) {
  const endpoint = startEtcd(['--members', '1', ...args]).pop();
  for (const cmd of [
    ['user', 'add', 'root:rootpw'],
    ['user', 'grant-role', 'root', 'root'],
    ['role', 'add', 'app'],
    ['role', 'grant-permission', 'app', '--prefix=true', 'readwrite', 'app/'],
    ['user', 'add', 'app:apppw'],
    ['user', 'grant-role', 'app', 'app'],
    ['auth', 'enable'],
  ]) {
    etcdctlAt(endpoint, '--user', 'root:rootpw', ...cmd);
  }
  return endpoint;
}

const prefixEtcd = etcdWithAppUser();
const refreshEtcd = etcdWithAppUser(['--etcd-arg=--auth-token-ttl=2']);
// JWTs carry the auth revision they were issued at, so a role change makes them old (etcd's
// simple tokens never go old: it checks them against its current revision).
const roleChangeEtcd = etcdWithAppUser(['--jwt']);
const app = (endpoint, password = 'apppw') => ({ endpoints: [endpoint], auth: { user: 'app', password }, timeout: 5000 });

/** The next event of `w` within `ms`, as [type, key, value]. */
async function nextEvent(w, ms = 5000) {
  let timer;
  const r = await Promise.race([
    w.next(),
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('no event in time')), ms))),
  ]).finally(() => clearTimeout(timer));
  assert.ok(!r.done, 'the watch ended');
  return [r.value.type, r.value.key.toString(), r.value.value.toString()];
}

/** The rejection of `p` (an EtcdlockError) and how long it took. */
async function rejection(p) {
  const start = Date.now();
  const err = await p.then(
    () => null,
    (e) => e,
  );
  assert.ok(err instanceof EtcdlockError, `expected an EtcdlockError, got ${err}`);
  return { err, ms: Date.now() - start };
}

// covers: AUTH-PREFIX-001
test('a user granted readwrite on app/ only works inside it; outside every call is AUTH at once', async (t) => {
  const c = await Client.connect(app(prefixEtcd));
  t.after(() => c.close());
  const w = c.watch('app/', { prefix: true });
  await w.ready;
  assert.ok((await c.put('app/k', 'v')) > 0n);
  assert.equal((await c.get('app/k')).toString(), 'v');
  const lease = await c.lease(5);
  await c.put('app/leased', 'l', { lease });
  assert.equal((await c.get('app/leased')).toString(), 'l');
  const lock = await c.lock('app/lock', { ttl: 5, timeout: 5000 });
  assert.ok(lock.isHeld() && lock.fencingToken > 0n);
  assert.ok((await c.put('app/data', '1', { ifHeld: lock })) > 0n);
  await lock.release();
  assert.deepEqual(await nextEvent(w), ['put', 'app/k', 'v']);

  // Outside the prefix: AUTH at once (not retried until a deadline).
  for (const [what, call] of [
    ['get', () => c.get('other')],
    ['put', () => c.put('other', 'x')],
    ['lock', () => c.lock('other', { ttl: 5, timeout: 5000 })],
    ['watch', () => c.watch('other').ready],
  ]) {
    const { err, ms } = await rejection(call());
    assert.equal(err.code, 'AUTH', `${what}: ${err.message}`);
    assert.ok(ms < 3000, `${what} failed after ${ms} ms`);
  }
  assert.equal(etcdctlAt(prefixEtcd, '--user', 'root:rootpw', 'get', '--prefix', '--keys-only', 'other').trim(), '');

  // The watch inside goes on.
  await c.put('app/k2', 'v2');
  let seen = null;
  for (let i = 0; i < 20 && !seen; i++) {
    const ev = await nextEvent(w);
    if (ev[1] === 'app/k2') seen = ev;
  }
  assert.deepEqual(seen, ['put', 'app/k2', 'v2']);
  w.close();
  await lease.revoke();
  assert.equal(await c.get('app/leased'), null);
});

// covers: AUTH-REFRESH-001 (a request after idling past the token, a lock held past it while another waits)
test('expired tokens are refreshed: a request after 4 s idle, a lock held 4 s handed over on release', async (t) => {
  const a = await Client.connect(app(refreshEtcd));
  const b = await Client.connect(app(refreshEtcd));
  t.after(() => Promise.all([a.close(), b.close()]));
  await sleep(4000); // the token's lifetime is 2 s
  assert.ok((await a.put('app/after-idle', '1')) > 0n);
  assert.equal((await a.get('app/after-idle')).toString(), '1');

  const lock = await a.lock('app/held', { ttl: 5, timeout: 5000 });
  let handed = false;
  const waiting = b.lock('app/held', { ttl: 5, timeout: 20_000 }).then((l) => ((handed = true), l));
  await sleep(4000); // only keepalives go meanwhile
  assert.ok(lock.isHeld(), `lock lost: ${lock.lostReason()}`);
  assert.equal(handed, false, 'the waiter got the lock while it was held');
  assert.ok((await a.put('app/fenced', 'x', { ifHeld: lock })) > 0n);
  await lock.release();
  const second = await waiting;
  assert.ok(second.isHeld());
  assert.ok(second.fencingToken > lock.fencingToken);
  await second.release();
  assert.equal(etcdctlAt(refreshEtcd, '--user', 'root:rootpw', 'get', '--prefix', '--keys-only', 'app/held').trim(), '');
});

/** A put under each of two watched keys; each watch delivers its own. */
async function bothDeliver(c, before, after) {
  await c.put('app/w1', 'a');
  await c.put('app/w2', 'b');
  assert.deepEqual(await nextEvent(before), ['put', 'app/w1', 'a']);
  assert.deepEqual(await nextEvent(after), ['put', 'app/w2', 'b']);
}

// covers: AUTH-REFRESH-001 (a new watch on a stream idle past the token; a wrong password)
test('a watch created on a stream idle 4 s is created and delivers; a wrong password is AUTH at once', async (t) => {
  const c = await Client.connect(app(refreshEtcd));
  t.after(() => c.close());
  const before = c.watch('app/w1');
  await before.ready;
  await sleep(4000);
  const after = c.watch('app/w2');
  await after.ready;
  await bothDeliver(c, before, after);
  before.close();
  after.close();

  const { err, ms } = await rejection(Client.connect(app(refreshEtcd, 'nope')));
  assert.equal(err.code, 'AUTH', err.message);
  assert.ok(ms < 2000, `a wrong password failed after ${ms} ms`);
  assert.ok(!err.message.includes('nope'), 'the password is in the message');
});

// covers: AUTH-REFRESH-002
test('a token made old by a role change is refreshed for requests, a new watch, keepalives and the release', async (t) => {
  const c = await Client.connect(app(roleChangeEtcd));
  t.after(() => c.close());
  // A watch stream and a keepalive stream opened with the token of the current auth revision.
  const before = c.watch('app/w1');
  await before.ready;
  const lock = await c.lock('app/held', { ttl: 3, timeout: 5000 });
  // Any change to users or roles makes every token issued before it old.
  etcdctlAt(roleChangeEtcd, '--user', 'root:rootpw', 'role', 'grant-permission', 'app', 'read', 'elsewhere');
  assert.ok((await c.put('app/after', '1')) > 0n);
  assert.equal((await c.get('app/after')).toString(), '1');
  // A new watch on the open watch stream: etcd checks the stream's (old) token.
  const after = c.watch('app/w2');
  await after.ready;
  await bothDeliver(c, before, after);
  await sleep(7000); // held past its TTL twice over: only keepalives go meanwhile
  assert.ok(lock.isHeld(), `lock lost: ${lock.lostReason()}`);
  assert.ok((await c.put('app/fenced', 'x', { ifHeld: lock })) > 0n);
  await lock.release();
  await c.put('app/w1', 'c');
  assert.deepEqual(await nextEvent(before), ['put', 'app/w1', 'c']);
  before.close();
  after.close();
  assert.equal(etcdctlAt(roleChangeEtcd, '--user', 'root:rootpw', 'get', '--prefix', '--keys-only', 'app/held').trim(), '');
});
