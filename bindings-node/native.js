'use strict';
// Loads the native addon built by scripts/build.js (ETCDLOCK_NATIVE_PATH overrides the path).
const path = require('node:path');

const file = process.env.ETCDLOCK_NATIVE_PATH || path.join(__dirname, 'etcdlock.node');
try {
  module.exports = require(file);
} catch (e) {
  if (e && e.code === 'MODULE_NOT_FOUND') {
    throw new Error(
      `etcdlock: the native addon ${file} is not built; run \`npm run build\` in ${__dirname} (needs cargo)`,
      { cause: e },
    );
  }
  throw e;
}
