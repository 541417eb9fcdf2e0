'use strict';
// index.d.ts and lib/*.d.ts are generated from the JSDoc in index.js and lib/*.js: the committed
// files must be current, and a TypeScript user's code (examples/usage.ts) must type-check against
// them under --strict.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { PKG } = require('./helpers');

const tsc = path.join(PKG, 'node_modules', 'typescript', 'bin', 'tsc');

test('index.d.ts and lib/*.d.ts are generated from the JSDoc and up to date', { skip: !fs.existsSync(tsc) && 'typescript not installed (npm install)' }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'etcdlock-dts-'));
  try {
    const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.types.json', '--outDir', out], { cwd: PKG, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const dts = (dir) => fs.readdirSync(dir).filter((f) => f.endsWith('.d.ts')).sort();
    const libs = dts(path.join(out, 'lib'));
    assert.deepEqual(dts(path.join(PKG, 'lib')), libs, 'lib/*.d.ts are not the generated set: run `npm run types`');
    for (const f of ['index.d.ts', ...libs.map((l) => path.join('lib', l))]) {
      const fresh = fs.readFileSync(path.join(out, f), 'utf8');
      const committed = fs.readFileSync(path.join(PKG, f), 'utf8');
      assert.equal(committed, fresh, `${f} is stale: run \`npm run types\``);
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('examples/usage.ts type-checks against index.d.ts (strict)', { skip: !fs.existsSync(tsc) && 'typescript not installed (npm install)' }, () => {
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.check.json'], { cwd: PKG, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
