'use strict';
// index.d.ts is generated from index.js's JSDoc: the committed file must be current, and a
// TypeScript user's code (examples/usage.ts) must type-check against it under --strict.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { PKG } = require('./helpers');

const tsc = path.join(PKG, 'node_modules', 'typescript', 'bin', 'tsc');

test('index.d.ts is generated from index.js and up to date', { skip: !fs.existsSync(tsc) && 'typescript not installed (npm install)' }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'etcdlock-dts-'));
  try {
    const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.types.json', '--outDir', out], { cwd: PKG, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const fresh = fs.readFileSync(path.join(out, 'index.d.ts'), 'utf8');
    const committed = fs.readFileSync(path.join(PKG, 'index.d.ts'), 'utf8');
    assert.equal(committed, fresh, 'index.d.ts is stale: run `npm run types`');
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('examples/usage.ts type-checks against index.d.ts (strict)', { skip: !fs.existsSync(tsc) && 'typescript not installed (npm install)' }, () => {
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.check.json'], { cwd: PKG, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
