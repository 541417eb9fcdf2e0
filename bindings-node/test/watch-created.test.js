'use strict';
// A watch whose stream is reset after the call and before etcd confirmed it (WATCH-CREATED-001).
// The client goes through netfakes' holdProxy, which holds back the body of the request carrying
// the key (the WatchCreateRequest on the Watch stream: its headers went through, etcd has the
// stream open but never learns of the watch, so no Created answer can come), then resets that
// stream: RST_STREAM to the client and to etcd. `ready` must resolve only once etcd confirmed
// the watch (on a new stream), so that a change made right after it resolved is delivered.
// (On the core of ae7f918^, the watch was ready as soon as the stream broke, unconfirmed, and
// resumed from "now" on the first read: this test fails there, event 0 missed.) The binding does
// not expose the watch's start revision; the events' revisions are checked.
const test = require('node:test');
const assert = require('node:assert/strict');
const { ENDPOINTS, prefix, waitFor } = require('./helpers');
const { holdProxy } = require('./netfakes');
const { Client } = require('..');

const N = 3; // puts made right after the watch was ready

// covers: WATCH-CREATED-001
test('a watch whose stream is reset before etcd confirms it is ready only once confirmed and misses nothing', async (t) => {
  const key = `${prefix('created')}/`;
  const proxy = await holdProxy(Number(new URL(ENDPOINTS[0]).port));
  const c = await Client.connect({ endpoints: [proxy.endpoint], timeout: 5000 });
  const direct = await Client.connect({ endpoints: ENDPOINTS, timeout: 5000 });
  t.after(async () => {
    await Promise.all([c.close(), direct.close()]);
    proxy.close();
  });

  proxy.hold(key);
  const w = c.watch(key, { prefix: true });
  t.after(() => w.close());
  let ready = false;
  let failed = null;
  w.ready.then(
    () => (ready = true),
    (e) => (failed = e),
  );
  await waitFor(() => proxy.holding || ready || failed, 5000, "the watch's create request held by the proxy");
  assert.ok(proxy.holding, "the watch's create request was not held by the proxy");
  assert.equal(ready, false, 'the watch was ready before etcd confirmed it');
  assert.ok(proxy.resetHeld() > 0);
  await waitFor(() => ready || failed, 15_000, 'the watch ready after its stream was reset'); // client timeout 5 s
  assert.equal(failed, null, `the watch failed: ${failed}`);

  const expected = [];
  for (let i = 0; i < N; i++) {
    const rev = await direct.put(`${key}${i}`, `${i}`);
    expected.push(['put', `${key}${i}`, `${i}`, rev]);
  }
  const got = [];
  for (let i = 0; i < N; i++) {
    let timer;
    const r = await Promise.race([
      w.next(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`event ${i} not delivered in 5 s (missed)`)), 5000))),
    ]).finally(() => clearTimeout(timer));
    assert.ok(!r.done, 'the watch ended');
    got.push([r.value.type, r.value.key.toString(), r.value.value.toString(), r.value.revision]);
  }
  assert.deepEqual(got, expected);
});
