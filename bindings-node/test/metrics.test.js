'use strict';
// Per-client metrics (client.metrics(), client.metricsText()): exact after a known sequence, and
// Prometheus text that a strict reader (tests/prometheus_text.py, run as a child) accepts.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { ENDPOINTS, REPO, prefix, etcdctl, waitFor } = require('./helpers');
const { Client } = require('..');

const COUNTERS = {
  acquisitions: 'etcdlock_lock_acquisitions_total',
  lockTimeouts: 'etcdlock_lock_timeouts_total',
  wouldBlock: 'etcdlock_lock_would_block_total',
  acquireFailures: 'etcdlock_lock_acquire_failures_total',
  releases: 'etcdlock_lock_releases_total',
  releaseFailures: 'etcdlock_lock_release_failures_total',
};

/**
 * The samples of `text` as the strict reader parses them (it fails the test on bad text); with
 * `client`, every series must carry `client="<client>"` first, left out of the keys.
 */
function parsePrometheus(text, client) {
  const args = [path.join(REPO, 'tests', 'prometheus_text.py'), ...(client === undefined ? [] : ['--client', client])];
  const r = spawnSync('python3', args, { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, `the reader refused the text: ${r.stderr}\n${text}`);
  return JSON.parse(r.stdout);
}

/** The text parses, every series labelled with the client's name, and says what the object says. */
function assertTextMatches(m, text, client) {
  const s = parsePrometheus(text, client.name);
  for (const [key, sample] of Object.entries(COUNTERS)) assert.equal(s[sample], m[key], key);
  for (const [reason, n] of Object.entries(m.losses)) assert.equal(s[`etcdlock_lock_losses_total{reason="${reason}"}`], n);
  for (const [h, prom] of [[m.lockWaitSeconds, 'lock_wait_seconds'], [m.lockHoldSeconds, 'lock_hold_seconds']]) {
    assert.equal(s[`etcdlock_${prom}_count`], h.count);
    assert.equal(s[`etcdlock_${prom}_bucket{le="+Inf"}`], h.count);
    assert.ok(Math.abs(s[`etcdlock_${prom}_sum`] - h.sum) < 1e-6);
    for (const [le, n] of h.buckets) assert.equal(s[`etcdlock_${prom}_bucket{le="${le}"}`], n);
  }
}

// covers: OBS-METRICS-001
test('counts and histogram totals are exact after a known sequence', async (t) => {
  const [a, b] = [new Client({ endpoints: ENDPOINTS }), new Client({ endpoints: ENDPOINTS })];
  t.after(() => Promise.all([a.close(), b.close()]));
  const before = a.metrics(); // not connected yet: zeros, the same names
  assert.equal(before.acquisitions, 0);
  assert.equal(before.lockWaitSeconds.count, 0);
  assertTextMatches(before, a.metricsText(), a);

  const name = prefix('metrics');
  for (let i = 0; i < 3; i++) await (await a.lock(name)).release();
  // One timeout: the other client holds the lock.
  const held = await b.lock(name);
  await assert.rejects(a.lock(name, { timeout: 200 }), { code: 'LOCK_TIMEOUT' });
  await held.release();
  // One loss: an operator deletes the key; the release after it fails.
  const lock = await a.lock(name);
  etcdctl('del', lock.key.toString());
  await waitFor(() => !lock.isHeld(), 5000, 'the loss seen');
  await assert.rejects(lock.release(), { code: 'NOT_HELD' });

  const m = a.metrics();
  const counts = Object.fromEntries(Object.keys(COUNTERS).map((k) => [k, m[k]]));
  assert.deepEqual(counts, { acquisitions: 4, lockTimeouts: 1, wouldBlock: 0, acquireFailures: 0, releases: 3, releaseFailures: 1 });
  assert.deepEqual(m.losses, { expired: 0, revoked: 0, key_deleted: 1, closed: 0 });
  assert.equal(m.lockWaitSeconds.count, 4);
  assert.equal(m.lockHoldSeconds.count, 4, 'three releases and one loss');
  assert.ok(m.lockWaitSeconds.sum > 0 && m.lockWaitSeconds.sum < 10);
  const buckets = m.lockHoldSeconds.buckets;
  assert.deepEqual([buckets[0][0], buckets.at(-1)[0]], [0.001, 10]);
  assert.ok(buckets.every(([, n], i) => i === 0 || buckets[i - 1][1] <= n), 'cumulative');
  assert.equal(b.metrics().acquisitions, 1, 'per client');
  assertTextMatches(m, a.metricsText(), a);
});

test('the strict reader refuses a histogram whose count is not its +Inf bucket', () => {
  const bad = '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 0.5\nh_count 3\n';
  const r = spawnSync('python3', [path.join(REPO, 'tests', 'prometheus_text.py')], { input: bad, encoding: 'utf8' });
  assert.equal(r.status, 1, r.stdout);
});

// covers: METRICS-LABEL-001
test('each client labels its series with its name', async (t) => {
  const [a, b] = [new Client({ endpoints: ENDPOINTS }), new Client({ endpoints: ENDPOINTS })];
  const named = new Client({ endpoints: ENDPOINTS, name: 'billing "eu"\\1' });
  t.after(() => Promise.all([a.close(), b.close(), named.close()]));
  // Known at once, before the connection.
  assert.match(a.name, /^etcdlock-\d+$/);
  assert.match(b.name, /^etcdlock-\d+$/);
  assert.notEqual(a.name, b.name);
  assert.equal(named.name, 'billing "eu"\\1');
  assert.ok(named.metricsText().includes('etcdlock_leases_alive{client="billing \\"eu\\"\\\\1"} 0\n'), named.metricsText());
  await Promise.all([a.ready, named.ready]);
  for (const c of [a, b, named]) assert.equal(parsePrometheus(c.metricsText(), c.name).etcdlock_lock_acquisitions_total, 0);
  assert.throws(() => new Client({ endpoints: ENDPOINTS, name: '' }), { code: 'INVALID_ARGUMENT', message: /name/ });
  assert.throws(() => new Client({ endpoints: ENDPOINTS, name: 7 }), { code: 'INVALID_ARGUMENT', message: /name/ });
});
