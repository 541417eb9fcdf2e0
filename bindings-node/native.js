'use strict';
// Loads the native addon, first found of:
//   1. ETCDLOCK_NATIVE_PATH (an explicit path),
//   2. ./etcdlock.node, built from source in a checkout by `npm run build` (scripts/build.js),
//   3. ./prebuilds/<platform>/etcdlock.node, the stripped copy that `npm pack` ships
//      (platform: `${process.platform}-${process.arch}`, plus `-gnu`/`-musl` on Linux).
const fs = require('node:fs');
const path = require('node:path');

function platformName() {
  const { platform, arch } = process;
  if (platform !== 'linux') return `${platform}-${arch}`;
  // glibc reports its version in the process report; musl (Alpine) does not.
  let glibc = false;
  try {
    glibc = Boolean(process.report.getReport().header.glibcVersionRuntime);
  } catch {
    glibc = false;
  }
  return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`;
}

function candidates() {
  if (process.env.ETCDLOCK_NATIVE_PATH) return [process.env.ETCDLOCK_NATIVE_PATH];
  return [path.join(__dirname, 'etcdlock.node'), path.join(__dirname, 'prebuilds', platformName(), 'etcdlock.node')];
}

const file = candidates().find((f) => fs.existsSync(f));
if (!file) {
  const prebuilds = path.join(__dirname, 'prebuilds');
  const have = fs.existsSync(prebuilds) ? fs.readdirSync(prebuilds).sort() : [];
  throw new Error(
    `etcdlock: no native addon for this platform (${platformName()}, Node ${process.version}); ` +
      `this package has prebuilt addons for: ${have.length ? have.join(', ') : 'none'}. ` +
      'Build one from the etcdlock repository (`npm run build` in bindings-node/, needs cargo), ' +
      'or set ETCDLOCK_NATIVE_PATH to an etcdlock.node.',
  );
}
module.exports = require(file);
