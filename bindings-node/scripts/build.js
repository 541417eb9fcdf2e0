#!/usr/bin/env node
'use strict';
// Builds the native addon from source: `cargo build --release -p etcdlock-node`, then copies the
// cdylib to ./etcdlock.node. Plain cargo (not the napi CLI) so that the artifact and cargo's
// fingerprints are the ones the workspace's own release builds use (no needless rebuilds).
//   --prebuild   (the prepack script) instead writes a stripped copy to
//                ./prebuilds/<platform>/etcdlock.node, the file that `npm pack` ships, copies
//                the repository's THIRD-PARTY-LICENSES and NOTICE beside package.json, and
//                checks that package.json's version is the Cargo workspace's.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const prebuild = process.argv.includes('--prebuild');

if (prebuild) {
  const cargoToml = fs.readFileSync(path.join(root, '..', 'Cargo.toml'), 'utf8');
  const m = /\[workspace\.package\][^[]*?\nversion = "([^"]+)"/.exec(cargoToml);
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  if (!m || m[1] !== pkg.version) {
    console.error(`etcdlock: package.json has version ${pkg.version}, Cargo.toml's workspace has ${m ? m[1] : 'none'}`);
    process.exit(1);
  }
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

if (prebuild) {
  // The loader's platform name (native.js), without loading the addon.
  let name = `${process.platform}-${process.arch}`;
  if (process.platform === 'linux') {
    name += process.report.getReport().header.glibcVersionRuntime ? '-gnu' : '-musl';
  }
  const dir = path.join(root, 'prebuilds', name);
  fs.rmSync(path.join(root, 'prebuilds'), { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const out = path.join(dir, 'etcdlock.node');
  fs.copyFileSync(lib, out);
  // The release profile keeps line tables (~45 MB); the shipped addon does not.
  const stripArgs = process.platform === 'darwin' ? ['-x', out] : ['--strip-unneeded', out];
  const s = spawnSync('strip', stripArgs, { stdio: 'inherit' });
  if (s.error || s.status !== 0) {
    console.error(`etcdlock: strip ${stripArgs.join(' ')} failed`);
    process.exit(1);
  }
  console.error(`etcdlock: ${out} (${(fs.statSync(out).size / 1e6).toFixed(1)} MB)`);
  // The notices of what the addon links (the Rust crates, mimalloc's C code) and the NOTICE, from
  // the repository root into the package root (package.json "files"): copies, since npm pack
  // leaves symbolic links out.
  for (const f of ['THIRD-PARTY-LICENSES', 'NOTICE']) {
    fs.copyFileSync(path.join(root, '..', f), path.join(root, f));
  }
  process.exit(0);
}

const out = path.join(root, 'etcdlock.node');
// Copy to a temp name and rename: a process that has the old addon loaded keeps its mapping.
const tmp = `${out}.${process.pid}.tmp`;
fs.copyFileSync(lib, tmp);
fs.renameSync(tmp, out);
console.error(`etcdlock: built ${out}`);
