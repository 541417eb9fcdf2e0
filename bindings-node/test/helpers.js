'use strict';
// Test helpers: a real etcd (ETCDLOCK_ENDPOINTS from test.sh, else one started for this test
// file with tests/etcd_harness.py and stopped when the file's process exits), unique key
// prefixes, and etcdctl for checks that must not trust the library under test.
const { spawnSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const PKG = path.resolve(__dirname, '..');
const REPO = path.resolve(PKG, '..');
const HARNESS = path.join(REPO, 'tests', 'etcd_harness.py');
const ETCDCTL = process.env.ETCDCTL_BIN || path.join(REPO, '.tools', 'bin', 'etcdctl');

/**
 * Starts a throwaway etcd with tests/etcd_harness.py (`args`, e.g. `['--tls', certDir]`), stopped
 * when this process exits; returns the lines the harness printed (the endpoints).
 */
function startEtcd(args = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'etcdlock-node-test-'));
  const state = path.join(dir, 'etcd.json');
  const r = spawnSync('python3', [HARNESS, 'start', ...args, '--state', state], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`cannot start etcd: ${r.stderr}`);
  process.on('exit', () => {
    spawnSync('python3', [HARNESS, 'stop', '--state', state], { timeout: 30_000 });
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return r.stdout.trim().split('\n');
}

let endpoints = process.env.ETCDLOCK_ENDPOINTS;
if (!endpoints) {
  endpoints = startEtcd(['--members', '1']).pop();
  process.env.ETCDLOCK_ENDPOINTS = endpoints;
}
const ENDPOINTS = endpoints.split(',');

let seq = 0;
/** A key prefix no other test (or run) uses. */
function prefix(tag) {
  return `nodetest/${tag}-${process.pid}-${Date.now().toString(36)}-${seq++}`;
}

/** Runs etcdctl against the test etcd; returns stdout (throws on failure). */
function etcdctl(...args) {
  return etcdctlAt(endpoints, ...args);
}

/** Runs etcdctl against `eps` (comma-separated); returns stdout (throws on failure). */
function etcdctlAt(eps, ...args) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ETCDCTL_')));
  const r = spawnSync(ETCDCTL, ['--endpoints', eps, ...args], { encoding: 'utf8', env, timeout: 20_000 });
  if (r.status !== 0) throw new Error(`etcdctl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Keys under `p` (as etcd sees them, via etcdctl; at `eps`, default the test etcd). */
function keysUnder(p, eps = endpoints) {
  return etcdctlAt(eps, 'get', '--prefix', '--keys-only', p).split('\n').filter(Boolean);
}

/** Resolves once `pred()` is true; rejects after `ms`. */
async function waitFor(pred, ms = 5000, what = 'condition') {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Runs a node script (source text) in a child process; resolves {code, stdout, stderr, ms}. */
function runChild(source, { timeoutMs = 20_000, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['-e', source], {
      cwd: PKG,
      env: { ...process.env, ETCDLOCK_ENDPOINTS: endpoints, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`child did not exit within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started, pid: child.pid });
    });
  });
}

/** Threads of this process named like core's runtime workers. */
function runtimeThreads() {
  return fs
    .readdirSync('/proc/self/task')
    .map((t) => {
      try {
        return fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim();
      } catch {
        return '';
      }
    })
    .filter((n) => n.startsWith('etcdlock-rt'));
}

module.exports = { ENDPOINTS, PKG, REPO, startEtcd, prefix, etcdctl, etcdctlAt, keysUnder, waitFor, runChild, runtimeThreads };
