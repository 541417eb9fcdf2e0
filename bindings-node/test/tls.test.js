'use strict';
// TLS and mTLS against real etcd members serving https, certificates made with openssl at test
// time (tests/etcd_harness.py start --tls): the `tls: { ca, cert, key, serverName }` option.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { PKG, startEtcd, prefix, etcdctlAt, keysUnder } = require('./helpers');
const { Client, EtcdlockError } = require('..');

const certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'etcdlock-node-tls-'));
process.on('exit', () => fs.rmSync(certDir, { recursive: true, force: true }));
// One member that checks no client certificate, one that requires them (each: plain, https).
const [plain, https] = startEtcd(['--tls', certDir]);
const [mtlsPlain, mtls] = startEtcd(['--tls', certDir, '--client-cert-auth']);
const pem = (name) => fs.readFileSync(path.join(certDir, name), 'utf8');

/**
 * A copy of certDir whose server certificate (signed by the same CA) names only
 * DNS:other.invalid: neither 127.0.0.1 nor localhost.
 */
function otherNameCertDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'etcdlock-node-tls-other-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  for (const f of fs.readdirSync(certDir)) fs.copyFileSync(path.join(certDir, f), path.join(dir, f));
  const openssl = (...args) => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
  };
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=other host',
    '-keyout', 'server.key', '-out', 'server.csr');
  fs.writeFileSync(path.join(dir, 'server.ext'),
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:other.invalid\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2',
    '-extfile', 'server.ext', '-out', 'server.pem');
  return dir;
}
// A member whose certificate names another host.
const [, otherName] = startEtcd(['--tls', otherNameCertDir()]);
const port = (url) => url.slice(url.lastIndexOf(':') + 1);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The rejection of connecting with `opts` (default timeout 5 s) and how long it took. */
async function connectError(opts) {
  const start = Date.now();
  const err = await Client.connect({ timeout: 5000, ...opts }).then(
    (c) => (c.close(), null),
    (e) => e,
  );
  assert.ok(err instanceof EtcdlockError, `expected an EtcdlockError, got ${err}`);
  return { err, ms: Date.now() - start };
}

// covers: TLS-CA-001 (ca as a string, endpoint by IP: put/get, lock, guarded write, lease past its TTL, watch)
test('TLS: put/get, lock, guarded write, a lease kept alive past its TTL and a watch', async (t) => {
  assert.match(https, /^https:\/\/127\.0\.0\.1:\d+$/);
  const c = await Client.connect({ endpoints: [https], tls: { ca: pem('ca.pem') }, timeout: 5000 });
  t.after(() => c.close());
  const p = prefix('tls');
  assert.ok((await c.put(`${p}/k`, 'v')) > 0n);
  assert.equal((await c.get(`${p}/k`)).toString(), 'v');
  // Written over TLS, seen over the plain port by etcdctl.
  assert.equal(etcdctlAt(plain, 'get', '--print-value-only', `${p}/k`).trim(), 'v');

  const lock = await c.lock(`${p}/lock`, { ttl: 5, timeout: 5000 });
  assert.ok(lock.isHeld() && lock.fencingToken > 0n);
  assert.ok((await c.put(`${p}/fenced`, 'f', { ifHeld: lock })) > 0n);
  await lock.release();
  await assert.rejects(c.put(`${p}/fenced`, 'g', { ifHeld: lock }), { code: 'NOT_HELD' });
  assert.equal((await c.get(`${p}/fenced`)).toString(), 'f');

  // The keepalive stream runs over TLS too: a 2 s lease must live 3 s.
  const lease = await c.lease(2);
  await c.put(`${p}/leased`, 'l', { lease });
  await sleep(3000);
  assert.ok(lease.isAlive(), `lease lost: ${lease.lostReason()}`);
  assert.equal((await c.get(`${p}/leased`)).toString(), 'l');
  await lease.revoke();
  assert.equal(await c.get(`${p}/leased`), null);

  const w = c.watch(`${p}/w/`, { prefix: true });
  await w.ready;
  const rev = await c.put(`${p}/w/a`, '1');
  await c.delete(`${p}/w/a`);
  const events = [];
  for await (const ev of w) {
    events.push([ev.type, ev.key.toString(), ev.value.toString(), ev.revision]);
    if (events.length === 2) break;
  }
  assert.deepEqual(events, [
    ['put', `${p}/w/a`, '1', rev],
    ['delete', `${p}/w/a`, '', rev + 1n],
  ]);
  assert.deepEqual(keysUnder(p, plain).sort(), [`${p}/fenced`, `${p}/k`]);
});

// covers: TLS-CA-001 (ca as a Buffer and as an array; https://localhost; by IP with serverName)
test('TLS: the CA as a Buffer or an array, the endpoint by DNS name, serverName', async () => {
  const p = prefix('tls-name');
  for (const [endpoint, tls] of [
    [`https://localhost:${port(https)}`, { ca: fs.readFileSync(path.join(certDir, 'ca.pem')) }],
    [https, { ca: [pem('other.pem'), Buffer.from(pem('ca.pem'))], serverName: 'localhost' }],
  ]) {
    const c = await Client.connect({ endpoints: [endpoint], tls, timeout: 5000 });
    try {
      assert.ok((await c.put(`${p}/dns`, endpoint)) > 0n);
      assert.equal((await c.get(`${p}/dns`)).toString(), endpoint);
      const lock = await c.lock(`${p}/lock`, { timeout: 5000 });
      await lock.release();
    } finally {
      await c.close();
    }
  }
});

// covers: TLS-NAME-001
test('a certificate naming another host is UNAVAILABLE naming serverName; works with serverName', async () => {
  const { err, ms } = await connectError({ endpoints: [otherName], tls: { ca: pem('ca.pem') } });
  assert.equal(err.code, 'UNAVAILABLE', err.message);
  assert.match(err.message, /server_?name/i);
  assert.ok(ms < 4500, `refused after ${ms} ms`);
  const c = await Client.connect({ endpoints: [otherName], tls: { ca: pem('ca.pem'), serverName: 'other.invalid' }, timeout: 5000 });
  try {
    const p = prefix('tls-other-name');
    assert.ok((await c.put(`${p}/k`, 'v')) > 0n);
    assert.equal((await c.get(`${p}/k`)).toString(), 'v');
    const lock = await c.lock(`${p}/lock`, { ttl: 5, timeout: 5000 });
    assert.ok((await c.put(`${p}/fenced`, 'f', { ifHeld: lock })) > 0n);
    await lock.release();
    const w = c.watch(`${p}/w`);
    await w.ready;
    const rev = await c.put(`${p}/w`, '1');
    const r = await w.next();
    assert.equal(r.value.revision, rev);
    w.close();
  } finally {
    await c.close();
  }
});

// covers: TLS-MTLS-001
test('mTLS: works with a client certificate; without one or with a stranger one it is AUTH', async () => {
  const p = prefix('mtls');
  const tls = { ca: pem('ca.pem'), cert: pem('client.pem'), key: Buffer.from(pem('client.key')) };
  const c = await Client.connect({ endpoints: [mtls], tls, timeout: 5000 });
  assert.ok((await c.put(`${p}/m`, 'v')) > 0n);
  assert.equal((await c.get(`${p}/m`)).toString(), 'v');
  const lock = await c.lock(`${p}/lock`, { ttl: 5, timeout: 5000 });
  assert.ok((await c.put(`${p}/fenced`, 'x', { ifHeld: lock })) > 0n);
  await lock.release();
  await c.close();

  const without = await connectError({ endpoints: [mtls], tls: { ca: pem('ca.pem') } });
  assert.equal(without.err.code, 'AUTH', without.err.message);
  assert.match(without.err.message, /certificate/i);
  assert.ok(without.ms < 4500, `refused after ${without.ms} ms`);
  const stranger = await connectError({
    endpoints: [mtls],
    tls: { ca: pem('ca.pem'), cert: pem('stranger.pem'), key: pem('stranger.key') },
  });
  assert.equal(stranger.err.code, 'AUTH', stranger.err.message);
  assert.ok(stranger.ms < 4500, `refused after ${stranger.ms} ms`);
});

// covers: TLS-MTLS-001 (the README's example, run as written against the mTLS member)
test('README example tls.cjs is in the README and runs against a member that requires client certificates', () => {
  const src = fs.readFileSync(path.join(PKG, 'examples', 'tls.cjs'), 'utf8');
  assert.ok(fs.readFileSync(path.join(PKG, 'README.md'), 'utf8').includes(src.trim()), 'README.md lacks examples/tls.cjs');
  const r = spawnSync(process.execPath, [path.join(PKG, 'examples', 'tls.cjs')], {
    cwd: PKG,
    encoding: 'utf8',
    timeout: 30_000,
    env: {
      ...process.env,
      ETCDLOCK_TLS_ENDPOINTS: `https://localhost:${port(mtls)}`,
      ETCDLOCK_CA_FILE: path.join(certDir, 'ca.pem'),
      ETCDLOCK_CERT_FILE: path.join(certDir, 'client.pem'),
      ETCDLOCK_KEY_FILE: path.join(certDir, 'client.key'),
    },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'readme/tls-state: done\n');
  assert.deepEqual(keysUnder('readme/tls', mtlsPlain), []);
});

// covers: TLS-BADCERT-001
test('an untrusted server certificate and the wrong scheme either way are UNAVAILABLE, bounded', async () => {
  // Control: the same member with its own CA connects (so `ca` is what makes the difference).
  await (await Client.connect({ endpoints: [https], tls: { ca: pem('ca.pem') }, timeout: 5000 })).close();
  const untrusted = await connectError({ endpoints: [https], tls: { ca: pem('other.pem') } });
  assert.equal(untrusted.err.code, 'UNAVAILABLE', untrusted.err.message);
  assert.match(untrusted.err.message, /certificate/i);
  assert.ok(untrusted.ms < 4500, `an untrusted certificate must fail at once, took ${untrusted.ms} ms`);

  for (const opts of [
    { endpoints: [`http://127.0.0.1:${port(https)}`] },
    { endpoints: [`https://127.0.0.1:${port(plain)}`], tls: { ca: pem('ca.pem') } },
  ]) {
    const { err, ms } = await connectError({ ...opts, timeout: 2000 });
    assert.equal(err.code, 'UNAVAILABLE', `${opts.endpoints}: ${err.message}`);
    assert.match(err.message, /tls|https|handshake|certificate/i, err.message);
    assert.ok(ms < 4000, `${opts.endpoints}: failed after ${ms} ms (connect timeout 2 s)`);
  }
});

// covers: TLS-ARGS-001
test('malformed PEM, TLS with http:// and mixed schemes are INVALID_ARGUMENT; wrong types throw', async () => {
  const INVALID = { code: 'INVALID_ARGUMENT', name: 'EtcdlockError' };
  const secret = 'c2VjcmV0LWtleS1tYXRlcmlhbA';
  for (const [tls, names] of [
    [{ ca: 'not a certificate\n' }, /\bca\b/],
    [{ ca: Buffer.from('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n') }, /\bca\b/],
    [{ ca: pem('ca.pem'), cert: pem('client.pem'), key: `-----BEGIN PRIVATE KEY-----\n${secret}\n-----END PRIVATE KEY-----\n` }, /\bkey\b/],
    [{ ca: pem('ca.pem'), cert: pem('client.pem') }, /key/],
  ]) {
    const { err } = await connectError({ endpoints: [mtls], tls });
    assert.equal(err.code, 'INVALID_ARGUMENT', err.message);
    assert.match(err.message, names);
    assert.ok(!err.message.includes(secret), 'the key material is in the message');
  }
  for (const opts of [
    { endpoints: [plain], tls: { ca: pem('ca.pem') } }, // TLS options with http://
    { endpoints: [https, plain] }, // mixed schemes
    { endpoints: [plain, https], tls: { ca: pem('ca.pem') } },
  ]) {
    const { err, ms } = await connectError(opts);
    assert.equal(err.code, 'INVALID_ARGUMENT', err.message);
    assert.ok(ms < 1000, `took ${ms} ms: checked before connecting`);
  }
  // Wrong types throw synchronously, before anything is sent (as every bad option does).
  for (const tls of [
    'ca.pem',
    true,
    [pem('ca.pem')],
    { ca: 42 },
    { ca: {} },
    { ca: [] },
    { ca: [pem('ca.pem'), 7] },
    { cert: 1.5, key: pem('client.key') },
    { cert: pem('client.pem'), key: ['x'] },
    { serverName: 7 },
    { serverName: '' },
    { servername: 'localhost' }, // tls.connect's spelling: not silently ignored
    { ca: pem('ca.pem'), rejectUnauthorized: false },
  ]) {
    assert.throws(() => new Client({ endpoints: [https], tls }), INVALID, JSON.stringify(tls));
  }
  assert.throws(() => new Client({ endpoints: [https], tls: { ca: 42 } }), /tls\.ca must be PEM text \(a string or a Buffer\), got number 42/);
});
