#!/usr/bin/env node
'use strict';
// `npm run types`: generates index.d.ts and lib/*.d.ts from the JSDoc in index.js and lib/*.js
// (tsconfig.types.json). tsc writes them to a temporary directory, then they are copied here:
// once lib/*.d.ts exist, tsc resolves `require('./lib/x.js')` to lib/x.d.ts (a .d.ts wins over
// its .js) and would refuse to overwrite that input. test/types.test.js runs the same tsc
// command and checks that the committed files are what it writes.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'etcdlock-types-'));
try {
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.types.json', '--outDir', out], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status || 1);
  fs.copyFileSync(path.join(out, 'index.d.ts'), path.join(root, 'index.d.ts'));
  const fresh = fs.readdirSync(path.join(out, 'lib')).filter((f) => f.endsWith('.d.ts'));
  for (const f of fs.readdirSync(path.join(root, 'lib'))) {
    if (f.endsWith('.d.ts') && !fresh.includes(f)) fs.rmSync(path.join(root, 'lib', f));
  }
  for (const f of fresh) fs.copyFileSync(path.join(out, 'lib', f), path.join(root, 'lib', f));
  console.error(`etcdlock: wrote index.d.ts and lib/{${fresh.join(',')}}`);
} finally {
  fs.rmSync(out, { recursive: true, force: true });
}
