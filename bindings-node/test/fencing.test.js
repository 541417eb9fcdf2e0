'use strict';
// Fencing at the database (`etcdlock/fencing`): fences from `lock.fence()` and a claimed task's
// `fence()`, `client.checkFence`, the mark checked and raised inside the writer's own
// transaction on a real PostgreSQL (tests/pg_harness.py: initdb in a temp dir, 127.0.0.1, a
// free port; stopped when this file's process exits) through node-postgres, and on SQLite
// through better-sqlite3; and the fence's string form read by Python's parser and back.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ENDPOINTS, PKG, REPO, prefix, etcdctl, waitFor } = require('./helpers');
const { Client, Fence, StaleFence, EtcdlockError, codes } = require('..');
const fencing = require('etcdlock/fencing'); // the package's subpath export, as a user requires it
const pgDriver = require('pg');
const Sqlite = require('better-sqlite3');
const { startPostgres } = require('./pg');

const PY_FENCE = path.join(REPO, 'bindings-python', 'python', 'etcdlock', 'fencing', '_fence.py');

/** A throwaway PostgreSQL for this file (test/pg.js). */
const pgConfig = startPostgres();

function client(t) {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  return c;
}

/** A node-postgres connection with the fence table and a ledger; closed after the test. */
async function connect(t) {
  const db = new pgDriver.Client(pgConfig);
  await db.connect();
  t.after(() => db.end());
  await fencing.pg.install(db);
  await db.query('CREATE TABLE IF NOT EXISTS ledger (resource TEXT, writer TEXT, token BIGINT)');
  return db;
}

/** One transaction: the check, then the write; rolled back (and the error rethrown) if refused. */
async function write(db, fence, writer, resource) {
  const f = Fence.parse(fence);
  await db.query('BEGIN');
  try {
    await fencing.pg.check(db, fence, resource);
    await db.query('INSERT INTO ledger VALUES ($1, $2, $3)', [resource ?? f.resource, writer, f.token.toString()]);
    await db.query('COMMIT');
  } catch (e) {
    await db.query('ROLLBACK');
    throw e;
  }
}

async function writers(db, resource) {
  const r = await db.query('SELECT writer FROM ledger WHERE resource = $1 ORDER BY token, writer', [resource]);
  return r.rows.map((row) => row.writer);
}

/** The etcd cluster's ID, as etcdctl reports it (not through the library under test). */
function clusterId() {
  // JSON.parse would round the 64-bit ID: read its digits.
  const m = /"cluster_id":(\d+)/.exec(etcdctl('get', 'x', '-w', 'json'));
  assert.ok(m, 'no cluster_id in etcdctl output');
  return BigInt(m[1]);
}

/** Runs a Python program with Python's fence parser (etcdlock.fencing's _fence.py, loaded from
 * the source tree: no native module needed) as `Fence`; returns its stdout. */
function python(program, ...args) {
  const head = [
    'import importlib.util, sys',
    `spec = importlib.util.spec_from_file_location("etcdlock_fence", ${JSON.stringify(PY_FENCE)})`,
    'm = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); Fence = m.Fence',
  ].join('\n');
  const r = spawnSync('python3', ['-c', `${head}\n${program}`, ...args], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

// covers: FENCE-DB-001
test('PostgreSQL: holders in turn commit through the fence, an older token is refused, resources keep their own marks', async (t) => {
  const c = client(t);
  const db = await connect(t);
  const name = prefix('fence-db');
  const first = await c.lock(name, { ttl: 10 });
  const a = await first.fence();
  assert.ok(a instanceof Fence);
  assert.deepEqual([a.kind, a.name.toString(), a.token], ['q', name, first.fencingToken]);
  assert.equal(a.cluster, clusterId());
  await write(db, a, 'a');
  await write(db, a, 'a-again'); // the same holder's repeated writes pass (>=)
  await first.release();
  const second = await c.lock(name, { ttl: 10 });
  const b = await second.fence();
  assert.ok(b.token > a.token);
  await write(db, String(b), 'b'); // the string form, as another process would get it
  await second.release();
  const late = await write(db, a, 'late').then(() => null, (e) => e);
  assert.ok(late instanceof StaleFence && late instanceof EtcdlockError, `not a StaleFence: ${late}`);
  assert.equal(late.code, codes.NOT_HELD);
  assert.match(late.message, /newer holder/);
  assert.deepEqual(await writers(db, name), ['a', 'a-again', 'b'], 'the refused transaction committed');
  // Another resource keeps its own mark; another cluster's fence is refused, naming the reset.
  await write(db, a, 'other', `${name}-other`);
  assert.deepEqual(await writers(db, `${name}-other`), ['other']);
  const alien = new Fence('q', a.name, b.token + 1000n, a.cluster ^ 1n);
  await assert.rejects(write(db, alien, 'alien'), (e) => e instanceof StaleFence && /reset the mark/.test(e.message));
  await assert.rejects(fencing.pg.check(db, a, ''), { code: 'INVALID_ARGUMENT' });
});

// covers: FENCE-DB-001
test('SQLite (better-sqlite3): the same holder twice, the next holder, then the first one late is refused', async (t) => {
  const c = client(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'etcdlock-node-sqlite-'));
  const db = new Sqlite(path.join(dir, 'db.sqlite'));
  t.after(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  fencing.sqlite.install(db);
  db.exec('CREATE TABLE ledger (writer TEXT)');
  const txn = (fence, writer) => {
    db.exec('BEGIN IMMEDIATE');
    try {
      fencing.sqlite.check(db, fence);
      db.prepare('INSERT INTO ledger VALUES (?)').run(writer);
      db.exec('COMMIT');
    } catch (e) {
      db.exec('ROLLBACK');
      throw e;
    }
  };
  const name = prefix('fence-sqlite');
  const first = await c.lock(name);
  const old = await first.fence();
  txn(old, 'a');
  txn(old, 'a2');
  await first.release();
  const second = await c.lock(name);
  txn(await second.fence(), 'b');
  await second.release();
  assert.throws(() => txn(old, 'late'), (e) => e instanceof StaleFence && e.code === 'NOT_HELD');
  assert.deepEqual(db.prepare('SELECT writer FROM ledger').all().map((r) => r.writer), ['a', 'a2', 'b']);
});

// The paused holder: a child process holds (TTL 2 s), opens its transaction, is frozen past its
// TTL; meanwhile another acquires and commits; resumed, the child writes through its fence.
const HOLDER = `
const { Client } = require('.');
const { pg: fence } = require('etcdlock/fencing');
const pg = require('pg');
const [name, config] = [process.argv[1], JSON.parse(process.argv[2])];
(async () => {
  const client = new Client({ endpoints: process.env.ETCDLOCK_ENDPOINTS.split(',') });
  const lock = await client.lock(name, { ttl: 2 });
  const db = new pg.Client(config);
  await db.connect();
  const f = await lock.fence();
  await db.query('BEGIN');
  console.log(String(f));
  await new Promise((resolve) => process.stdin.once('data', resolve)); // frozen meanwhile
  try {
    await fence.check(db, f);
    await db.query("INSERT INTO ledger VALUES ($1, 'paused', $2)", [name, f.token.toString()]);
    await db.query('COMMIT');
    console.log('committed');
  } catch (e) {
    await db.query('ROLLBACK');
    console.log(e.name === 'StaleFence' && e.code === 'NOT_HELD' ? 'refused' : 'error: ' + e.message);
  }
  await db.end();
  await client.close();
})();
`;

// covers: FENCE-PAUSE-001
test('a holder SIGSTOPped past its TTL is refused by the database when it resumes', async (t) => {
  const c = client(t);
  const db = await connect(t);
  const name = prefix('fence-paused');
  const child = spawn(process.execPath, ['-e', HOLDER, name, JSON.stringify(pgConfig)], {
    cwd: PKG,
    env: { ...process.env, ETCDLOCK_ENDPOINTS: ENDPOINTS.join(',') },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  t.after(() => child.kill('SIGKILL'));
  await waitFor(() => out.includes('\n') || child.exitCode !== null, 20_000, 'the holder to print its fence');
  const theirs = Fence.parse(out.trim());
  process.kill(child.pid, 'SIGSTOP');
  try {
    assert.ok(await c.checkFence(theirs));
    const lock = await c.lock(name, { ttl: 10, timeout: 10_000 }); // once the frozen holder's lease ended
    assert.equal(await c.checkFence(theirs), false, "an expired holder's fence still checks");
    const ours = await lock.fence();
    assert.ok(ours.token > theirs.token);
    await write(db, ours, 'next');
    await lock.release();
  } finally {
    process.kill(child.pid, 'SIGCONT');
  }
  child.stdin.end('go\n');
  await exited;
  assert.equal(out.trim().split('\n').pop(), 'refused', `stdout: ${out}\nstderr: ${err}`);
  assert.deepEqual(await writers(db, name), ['next']);
});

// covers: FENCE-CHECK-001
test('checkFence: true while held; false after release, after expiry and for another cluster', async (t) => {
  const c = client(t);
  const name = prefix('fence-check');
  const lock = await c.lock(name, { ttl: 10 });
  const f = await lock.fence();
  assert.ok(await c.checkFence(f));
  assert.ok(await c.checkFence(String(f)));
  assert.equal(await c.checkFence(new Fence(f.kind, f.name, f.token, f.cluster ^ 1n)), false, "another cluster's fence checked");
  await lock.release();
  assert.equal(await c.checkFence(f), false, "a released acquisition's fence checked");
  await assert.rejects(lock.fence(), { code: 'NOT_HELD' });
  // Expiry: the holder's lease revoked behind its back.
  const again = await c.lock(name, { ttl: 10 });
  const g = await again.fence();
  assert.ok(g.token > f.token && (await c.checkFence(g)));
  etcdctl('lease', 'revoke', again.leaseId.toString(16));
  assert.equal(await c.checkFence(g), false, "an expired acquisition's fence checked");
  await assert.rejects(c.checkFence('etcdlock-fence.v1.q.1.1.6'), { code: 'INVALID_ARGUMENT' });
  await assert.rejects(c.checkFence(/** @type {any} */ (7)), { code: 'INVALID_ARGUMENT' });
  // A write lock's and a leader's fences: the same kind, on their names.
  const w = await c.rwlock(prefix('fence-rw')).write();
  assert.ok(await c.checkFence(await w.fence()));
  await w.release();
  const leading = await c.election(prefix('fence-el')).campaign('me');
  const lf = await leading.fence();
  assert.ok(await c.checkFence(lf));
  await leading.resign();
  assert.equal(await c.checkFence(lf), false);
});

// covers: FENCE-TASK-001
test("a claimed task's fence checks while claimed, and a later claim's refuses the earlier one at the database", async (t) => {
  const c = client(t);
  const db = new Sqlite(':memory:');
  t.after(() => db.close());
  fencing.sqlite.install(db);
  const qname = prefix('fence-q');
  const q = c.queue(qname, { ttl: 10 });
  await q.put('job', { id: 'job' });
  const first = await q.claim({ timeout: 5000 });
  const f1 = await first.fence();
  assert.equal(f1.token, first.fencingToken);
  assert.ok(f1.resource.startsWith(`${qname}/claim/`), f1.resource);
  assert.ok(await c.checkFence(f1));
  fencing.sqlite.check(db, f1);
  await first.nack();
  await assert.rejects(first.fence(), { code: 'NOT_HELD' });
  assert.equal(await c.checkFence(f1), false, "a nacked claim's fence checked");
  const second = await q.claim({ timeout: 5000 });
  const f2 = await second.fence();
  assert.ok(f2.name.equals(f1.name) && f2.token > f1.token);
  assert.equal(fencing.sqlite.check(db, f2), f2.token);
  assert.throws(() => fencing.sqlite.check(db, f1), StaleFence); // the first delivery's late write
  await second.ack();
  assert.equal(await c.checkFence(f2), false);
});

// covers: FENCE-STRING-001
test("the string form crosses languages: a Node fence read by Python's parser, a Python-made fence checked from Node", async (t) => {
  const c = client(t);
  const name = prefix('fence-string');
  const lock = await c.lock(name);
  const f = await lock.fence();
  assert.equal(String(f), `etcdlock-fence.v1.q.${f.cluster.toString(16)}.${f.token}.${Buffer.from(name).toString('hex')}`);
  assert.equal(JSON.stringify({ f }), JSON.stringify({ f: String(f) }));
  // Node -> Python: the fields Python reads, and the string it writes back.
  const [kind, pyName, token, cluster, back] = python(
    'f = Fence.parse(sys.argv[1]); print(f.kind, f.name.decode(), f.token, f.cluster, str(f))',
    String(f),
  ).trim().split(' ');
  assert.deepEqual([kind, pyName, BigInt(token), BigInt(cluster), back], ['q', name, f.token, f.cluster, String(f)]);
  // Python -> Node: a fence Python makes from its parts, parsed and checked here.
  const made = python('print(Fence("q", sys.argv[1].encode(), int(sys.argv[2]), int(sys.argv[3])))', name, String(f.token), String(f.cluster)).trim();
  const parsed = Fence.parse(made);
  assert.ok(parsed.equals(f), `${made} is not ${f}`);
  assert.ok(await c.checkFence(made));
  await lock.release();
  assert.equal(await c.checkFence(made), false);
  // What either side refuses, the other refuses too.
  const bad = ['', 'etcdlock-fence.v1.q.zz.1.61', 'etcdlock-fence.v1.x.1.1.61', 'etcdlock-fence.v1.q.1.0.61', 'etcdlock-fence.v1.q.1.1.6', 'etcdlock-fence.v1.q.1.1.', 'etcdlock-fence.v1.q.1.01.61',
    // What a lax parser would take: a sign, '_', a space, more than 64 bits, a trailing newline.
    'etcdlock-fence.v1.q.+1.1.61', 'etcdlock-fence.v1.q.-1.1.61', 'etcdlock-fence.v1.q.1_0.1.61', 'etcdlock-fence.v1.q. 1.1.61',
    'etcdlock-fence.v1.q.11111111111111111.1.61', 'etcdlock-fence.v1.q.1.9223372036854775808.61', 'etcdlock-fence.v1.q.1.1.61\n'];
  for (const b of bad) assert.throws(() => Fence.parse(b), { code: 'INVALID_ARGUMENT' }, b);
  const verdicts = python(
    'for s in sys.argv[1:]:\n    try:\n        Fence.parse(s); print("parsed")\n    except ValueError:\n        print("refused")',
    ...bad,
  );
  assert.deepEqual(verdicts.trim().split('\n'), bad.map(() => 'refused'));
  // The ESM subpath has the same objects.
  const esm = await import('etcdlock/fencing');
  assert.equal(esm.Fence, Fence);
  assert.equal(esm.pg, fencing.pg);
});
