'use strict';
// etcdlock/prometheus: clients' metrics in a real prom-client registry, scraped with its own
// `registry.metrics()` and read back with the strict reader (tests/prometheus_text.py).
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const promClient = require('prom-client');
const { ENDPOINTS, REPO, prefix } = require('./helpers');
const { Client } = require('..');
const etcdlockProm = require('etcdlock/prometheus');

/** The samples of `text` as the strict reader parses them (it fails the test on bad text). */
function parsePrometheus(text) {
  const r = spawnSync('python3', [path.join(REPO, 'tests', 'prometheus_text.py')], { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, `the reader refused the text: ${r.stderr}\n${text}`);
  return JSON.parse(r.stdout);
}

/** {family: type} of a text. */
const families = (text) => Object.fromEntries(text.split('\n').filter((l) => l.startsWith('# TYPE ')).map((l) => l.split(' ').slice(2, 4)));

// covers: METRICS-REGISTRY-001
test('two clients in one prom-client registry, each under its name', async (t) => {
  const registry = new promClient.Registry();
  const orders = new Client({ endpoints: ENDPOINTS, name: 'orders' });
  const other = new Client({ endpoints: ENDPOINTS });
  const billing = new Client({ endpoints: ENDPOINTS, name: 'billing' });
  t.after(() => Promise.all([orders.close(), other.close(), billing.close()]));
  await (await orders.lock(prefix('prom'))).release();
  await other.ready;
  for (const c of [orders, other, billing]) etcdlockProm.register(c, registry);

  const text = await registry.metrics();
  assert.deepEqual(families(text), families(orders.metricsText()), 'the same families, names and types');
  const s = parsePrometheus(text);
  // Each client's series are those of its own text, under its name.
  for (const c of [orders, other, billing]) {
    const own = Object.keys(parsePrometheus(c.metricsText())).sort();
    assert.deepEqual(Object.keys(s).filter((k) => k.includes(`client="${c.name}"`)).sort(), own, c.name);
  }
  assert.equal(Object.keys(s).length, 3 * Object.keys(parsePrometheus(orders.metricsText())).length, 'no other series');
  assert.equal(s['etcdlock_lock_acquisitions_total{client="orders"}'], 1);
  assert.equal(s['etcdlock_lock_acquisitions_total{client="billing"}'], 0);
  assert.equal(s['etcdlock_lock_wait_seconds_bucket{client="orders",le="+Inf"}'], 1);
  assert.equal(s['etcdlock_lock_wait_seconds_count{client="orders"}'], 1);
  assert.equal(s['etcdlock_lock_losses_total{client="orders",reason="expired"}'], 0);
  assert.equal(s['etcdlock_stream_reopens_total{client="orders",stream="watch"}'], 0);
  assert.equal(s[`etcdlock_leases_alive{client="${other.name}"}`], 0);

  // Read at each scrape.
  await (await orders.lock(prefix('prom'))).release();
  assert.equal(parsePrometheus(await registry.metrics())['etcdlock_lock_acquisitions_total{client="orders"}'], 2);

  // A second client of the same name would repeat its series: refused, nothing changed.
  const twin = new Client({ endpoints: ENDPOINTS, name: 'orders' });
  t.after(() => twin.close());
  assert.throws(() => etcdlockProm.register(twin, registry), { code: 'INVALID_ARGUMENT', message: /orders/ });
  etcdlockProm.unregister(billing, registry);
  const after = await registry.metrics();
  assert.ok(!after.includes('client="billing"') && after.includes('client="orders"'), after);
  assert.throws(() => etcdlockProm.unregister(billing, registry), { code: 'INVALID_ARGUMENT' });
  etcdlockProm.unregister(orders, registry);
  etcdlockProm.unregister(other, registry);
  assert.equal(registry.getMetricsAsArray().length, 0, 'the families left with the last client');
});

// covers: METRICS-REGISTRY-001
test('the global registry, beside the application metrics and a name it already has', async (t) => {
  const a = new Client({ endpoints: ENDPOINTS });
  t.after(() => a.close());
  const mine = new promClient.Counter({ name: 'app_requests_total', help: 'the application' });
  t.after(() => promClient.register.removeSingleMetric('app_requests_total'));
  mine.inc();
  etcdlockProm.register(a);
  try {
    const s = parsePrometheus(await promClient.register.metrics());
    assert.equal(s.app_requests_total, 1);
    assert.equal(s[`etcdlock_watches_open{client="${a.name}"}`], 0);
  } finally {
    etcdlockProm.unregister(a);
  }
  const registry = new promClient.Registry();
  new promClient.Gauge({ name: 'etcdlock_leases_alive', help: 'taken', registers: [registry] });
  assert.throws(() => etcdlockProm.register(a, registry), { code: 'INVALID_ARGUMENT', message: /etcdlock_leases_alive/ });
  assert.equal(registry.getMetricsAsArray().length, 1, 'nothing added');
  assert.throws(() => etcdlockProm.register({ name: 'x' }, registry), { code: 'INVALID_ARGUMENT' });
});

test('etcdlock loads without prom-client', () => {
  const code = "require('etcdlock'); const c = new (require('etcdlock').Client)({ endpoints: ['127.0.0.1:1'], timeout: 100 }); c.metricsText(); if (Object.keys(require.cache).some((k) => k.includes('prom-client'))) process.exit(3); c.close().then(() => process.exit(0));";
  const r = spawnSync(process.execPath, ['-e', code], { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, r.stderr);
});
