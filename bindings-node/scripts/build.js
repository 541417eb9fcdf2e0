#!/usr/bin/env node
'use strict';
// Builds the native addon from source: `cargo build --release -p etcdlock-node`, then copies the
// cdylib to ./etcdlock.node. Plain cargo (not the napi CLI) so that an `npm install` of this
// folder needs nothing from npm, and so that the artifact and cargo's fingerprints are the
// ones the workspace's own release builds use (no needless rebuilds). `--if-missing` (the npm
// install hook) keeps an existing or prebuilt etcdlock.node.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const out = path.join(root, 'etcdlock.node');

if (process.argv.includes('--if-missing') && fs.existsSync(out)) {
  console.log(`etcdlock: using existing ${out}`);
  process.exit(0);
}

const cargo = process.env.CARGO || 'cargo';
const args = ['build', '--release', '-p', 'etcdlock-node', '--message-format=json-render-diagnostics'];
console.error(`etcdlock: building the native addon (${cargo} ${args.join(' ')})`);
const r = spawnSync(cargo, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 256 << 20 });
if (r.error) {
  console.error(`etcdlock: cannot run ${cargo}: ${r.error.message}. Install Rust (https://rustup.rs) and retry.`);
  process.exit(1);
}
if (r.status !== 0) process.exit(r.status || 1);

// The artifact path from cargo's own report, so CARGO_TARGET_DIR and the workspace layout
// need no guessing.
let lib = null;
for (const line of r.stdout.toString().split('\n')) {
  if (!line.startsWith('{')) continue;
  const msg = JSON.parse(line);
  if (msg.reason === 'compiler-artifact' && msg.target && msg.target.name === 'etcdlock_node') {
    lib = msg.filenames.find((f) => /\.(so|dylib|dll)$/.test(f)) || lib;
  }
}
if (!lib) {
  console.error('etcdlock: cargo reported no cdylib for etcdlock-node');
  process.exit(1);
}
// Copy to a temp name and rename: a process that has the old addon loaded keeps its mapping.
const tmp = `${out}.${process.pid}.tmp`;
fs.copyFileSync(lib, tmp);
fs.renameSync(tmp, out);
console.error(`etcdlock: built ${out}`);
