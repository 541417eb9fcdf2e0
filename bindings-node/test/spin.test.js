'use strict';
// setCallerSpin: the caller spin as an explicit, process-wide option. In a child process, so
// that the setting does not leak into the other tests.
const test = require('node:test');
const assert = require('node:assert/strict');
const { PKG, prefix, runChild } = require('./helpers');

// covers: OPT-SPIN-001
test('setCallerSpin: set and read back; bad values throw INVALID_ARGUMENT and change nothing; off, calls still settle', async () => {
  const name = prefix('caller-spin');
  const r = await runChild(`const { Client, setCallerSpin, callerSpin } = require(${JSON.stringify(PKG)});
(async () => {
  const out = [];
  setCallerSpin(0.5);
  out.push(callerSpin());
  for (const bad of [-1, 10.5, NaN, Infinity, '1']) {
    try { setCallerSpin(bad); out.push('accepted ' + bad); } catch (e) { out.push(e.code); }
  }
  out.push(callerSpin());
  setCallerSpin(0);
  out.push(callerSpin());
  const client = new Client({ endpoints: process.env.ETCDLOCK_ENDPOINTS.split(',') });
  for (let i = 0; i < 3; i++) await (await client.lock(${JSON.stringify(name)})).release();
  await client.close();
  console.log(JSON.stringify(out));
})();`);
  assert.equal(r.code, 0, r.stderr);
  const I = 'INVALID_ARGUMENT';
  assert.deepEqual(JSON.parse(r.stdout), [0.5, I, I, I, I, I, 0.5, 0]);
});
