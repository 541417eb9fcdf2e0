'use strict';
// A throwaway PostgreSQL for a test file (tests/pg_harness.py: initdb in a temp dir, 127.0.0.1,
// a free port, as a non-root user), stopped by its state file when the file's process exits. No
// mock and no skip: without PostgreSQL's binaries (scripts/install-deps.sh installs Debian's) the
// file fails.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { REPO } = require('./helpers');

const PG_HARNESS = path.join(REPO, 'tests', 'pg_harness.py');

/** Starts it; its connection settings (node-postgres' config). */
function startPostgres() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'etcdlock-node-pg-'));
  const state = path.join(dir, 'pg.json');
  const r = spawnSync('python3', [PG_HARNESS, 'start', '--state', state], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`cannot start PostgreSQL: ${r.stderr}`);
  process.on('exit', () => {
    spawnSync('python3', [PG_HARNESS, 'stop', '--state', state], { timeout: 30_000 });
    fs.rmSync(dir, { recursive: true, force: true });
  });
  // The DSN's key=value pairs ("host=127.0.0.1 port=N user=etcdlock dbname=postgres").
  const kv = Object.fromEntries(r.stdout.trim().split(/\s+/).map((p) => p.split('=')));
  return { host: kv.host, port: Number(kv.port), user: kv.user, database: kv.dbname };
}

module.exports = { startPostgres };
