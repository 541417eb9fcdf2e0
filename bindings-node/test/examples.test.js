'use strict';
// The README's examples are the files in examples/, verbatim, and they run as written against
// the test etcd (ETCDLOCK_ENDPOINTS), both CommonJS and ESM.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { PKG } = require('./helpers');

const readme = fs.readFileSync(path.join(PKG, 'README.md'), 'utf8');

for (const [file, expected] of [
  ['quickstart.cjs', /holding demo\/orders, fencing token \d+\n(put demo\/jobs\/nightly @\d+\n)?put demo\/jobs\/worker-1 @\d+\ndelete demo\/jobs\/worker-1 @\d+\nrunning\n$/],
  ['quickstart.mjs', /^second try: WOULD_BLOCK\nwaiting: AbortError\n$/],
  ['recipes.mjs', /^leader before: null\nleader: node-1 ready, token ours\nleader after: null\ntwo readers at once: true\nreadme\/state: v2\n$/],
  ['registry.mjs', /^instances before: 0\ninstances: node-1 -> 10\.0\.0\.7:50051\ninstances: node-1 -> 10\.0\.0\.7:50052\ninstances after close: 0\n$/],
  ['cache.mjs', /^a: 1, 1 key\(s\)\ncopy: readme\/config\/a=1, readme\/config\/b=2\nput readme\/config\/b\ndelete readme\/config\/a \(was 1\)\n$/],
  ['tasks.mjs', /^pending: 2\nclaimed img-18, attempt 1: resize img-18\nclaimed img-18, attempt 2: resize img-18\nclaimed img-17, attempt 1: resize img-17\ndead: img-18 after 2 attempts\nrequeued img-18, attempt 1\nreadme\/results\/img-17: done\nreadme\/results\/img-18: done\n$/],
  ['lockset.mjs', /^balances: 65 \+ 135\nheld: exclusive, read, permit \(one token: true\); acct 2 and 1 meanwhile: WOULD_BLOCK\n$/],
  ['pool.mjs', /^a: gpu0, b: gpu1 \+ gpu2\na fourth now: WOULD_BLOCK\nc: gpu0 \(token larger than a's\)\nretried: true\ngpu0 held \(job-8\), gpu1 held, gpu2 held\n$/],
  ['fencing.mjs', /^first holder's fence holds: true\nlate write refused: NOT_HELD\nfirst holder's fence holds: false\nbalance: 80\n$/],
  ['once.mjs', /^host-a: the 09:00 report failed \(mail server down\), released\nhost-b: sent the 09:00 report \(slot 526113\)\nhost-c: the 09:00 report is done, or running elsewhere\nhost-a: sent the 10:00 report \(slot 526114\)\n$/],
]) {
  test(`README example ${file} is in the README and runs`, () => {
    const src = fs.readFileSync(path.join(PKG, 'examples', file), 'utf8');
    assert.ok(readme.includes(src.trim()), `README.md does not contain examples/${file} verbatim`);
    const r = spawnSync(process.execPath, [path.join(PKG, 'examples', file)], {
      cwd: PKG,
      encoding: 'utf8',
      timeout: 30_000,
      env: process.env,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, expected);
  });
}
