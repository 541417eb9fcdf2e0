'use strict';
// The task queue (`client.queue()`) against a real etcd: order, idempotent puts, the ack at the
// end of an `await using` block and fenced writes, a lost claim's ack, delays, dead letters, bad
// input, AbortSignal, and workers SIGKILLed or SIGSTOPped mid-task (child processes).
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const { performance } = require('node:perf_hooks');
const { ENDPOINTS, PKG, prefix, etcdctl, keysUnder, waitFor } = require('./helpers');
const etcdlock = require('..');
const { Client, TaskQueue, Task, AbortError, MAX_TASK_PAYLOAD_LEN } = etcdlock;

const esm = import('../index.mjs');

function client(t) {
  const c = new Client({ endpoints: ENDPOINTS });
  t.after(() => c.close());
  return c;
}

/** Claims (timeout 0) and acks until nothing is available; the ids in claim order. */
async function drain(q) {
  const ids = [];
  for (let i = 0; i < 100; i++) {
    let task;
    try {
      task = await q.claim({ timeout: 0 });
    } catch (e) {
      if (e.code === 'WOULD_BLOCK') return ids;
      throw e;
    }
    ids.push(task.id);
    await task.ack();
  }
  throw new Error('more than 100 tasks');
}

/** The lease (hex) a claim key under `name` is on: claim keys are `<name>/claim/<slot>/<lease hex>`. */
function claimLease(name) {
  const keys = keysUnder(`${name}/claim/`);
  assert.equal(keys.length, 1, `one claim key, got ${keys}`);
  return keys[0].split('/').pop();
}

// `await using task = await q.claim(...)`: the real syntax where this Node has it (24+), else
// what it stands for (a try/finally that disposes).
const AsyncFunction = (async () => {}).constructor;
let usingSyntax = null;
try {
  usingSyntax = new AsyncFunction('q', 'c', 'key', 'seen', `
    await using task = await q.claim({ timeout: 5000 });
    seen.push(task);
    await c.put(key, 'ok', { ifHeld: task });
  `);
} catch {
  usingSyntax = null;
}
async function claimAndWriteInUsingBlock(q, c, key, seen) {
  if (usingSyntax) return usingSyntax(q, c, key, seen);
  const task = await q.claim({ timeout: 5000 });
  try {
    seen.push(task);
    await c.put(key, 'ok', { ifHeld: task });
  } finally {
    await task[Symbol.asyncDispose]();
  }
}

// covers: QUEUE-ORDER-001
test('claims take the highest priority first, then the order of the puts; nothing left after the acks', async (t) => {
  const c = client(t);
  const name = prefix('tq-order');
  const q = c.queue(name, { ttl: 10 });
  assert.ok(q instanceof TaskQueue);
  assert.equal(q.name.toString(), name);
  for (const [id, priority] of [['a', 0], ['b', 5], ['c', 0], ['d', -1], ['e', 5], ['f', 0]]) {
    assert.equal(await q.put(id, { id, priority }), id);
  }
  const s = await q.stats();
  assert.deepEqual({ ...s, revision: typeof s.revision }, { pending: 6, pendingByPriority: { 5: 2, 0: 3, [-1]: 1 }, delayed: 0, claimed: 0, dead: 0, revision: 'bigint' });
  assert.deepEqual(await drain(q), ['b', 'e', 'a', 'c', 'f', 'd']);
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// covers: QUEUE-ORDER-001
test('tasks() claims one after another and ends when a claim times out', async (t) => {
  const c = client(t);
  const name = prefix('tq-iter');
  const q = c.queue(name);
  await q.put(Buffer.from([1]), { id: 'low', priority: -3 });
  await q.put(new Uint8Array([2]), { id: 'high', priority: 7 });
  await q.put('3', { id: 'mid' });
  const seen = [];
  const started = performance.now();
  for await (const task of q.tasks({ timeout: 300 })) {
    assert.ok(task instanceof Task);
    assert.ok(Buffer.isBuffer(task.payload));
    seen.push([task.id, [...task.payload], task.priority, task.attempts]);
    await task.ack();
  }
  assert.deepEqual(seen, [['high', [2], 7, 1], ['mid', [0x33], 0, 1], ['low', [1], -3, 1]]);
  assert.ok(performance.now() - started < 5000, 'the iteration ended after the timeout');
  // Leaving the loop early leaves no claim pending.
  await q.put('x', { id: 'x' });
  for await (const task of q.tasks({ timeout: 300 })) {
    await task.nack();
    break;
  }
  assert.deepEqual((await drain(q)), ['x']);
  assert.throws(() => q.tasks({ timeout: -1 }), { code: 'INVALID_ARGUMENT' });
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// covers: QUEUE-PUT-ID-001
test('a put with the id of an item that is pending, claimed or dead changes nothing', async (t) => {
  const c = client(t);
  const q = c.queue(prefix('tq-id'), { ttl: 10, maxAttempts: 1 });
  assert.equal(await q.put('first', { id: 'x' }), 'x');
  assert.equal(await q.put('second', { id: 'x', priority: 9 }), 'x');
  assert.equal((await q.stats()).pending, 1);
  const task = await q.claim({ timeout: 0 });
  assert.equal(task.payload.toString(), 'first');
  assert.equal(await q.put('third', { id: 'x' }), 'x');
  await task.nack(); // its last attempt: dead
  assert.equal(await q.put('fourth', { id: 'x' }), 'x');
  const s = await q.stats();
  assert.deepEqual([s.pending, s.claimed, s.dead], [0, 0, 1]);
  assert.equal((await q.dead())[0].payload.toString(), 'first');
  assert.equal(await q.deleteDead('x'), true);
  assert.equal(await q.deleteDead('x'), false);
  await q.put('new', { id: 'x' });
  const again = await q.claim({ timeout: 0 });
  assert.equal(again.payload.toString(), 'new');
  await again.ack();
  // Without an id, each put is an item of its own, with a random id.
  const [a, b] = [await q.put('p'), await q.put('p')];
  assert.notEqual(a, b);
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.deepEqual((await drain(q)).sort(), [a, b].sort());
});

// covers: QUEUE-ACK-001
test('await using acks at the end of the block; writes and acks are fenced by the claim', async (t) => {
  const c = client(t);
  const name = prefix('tq-ack');
  const results = `${name}-results`;
  const q = c.queue(name, { ttl: 10 });
  await q.put('img-17', { id: 'img-17' });
  const seen = [];
  await claimAndWriteInUsingBlock(q, c, `${results}/img-17`, seen);
  const [task] = seen;
  assert.deepEqual([task.id, task.payload.toString(), task.attempts, task.priority], ['img-17', 'img-17', 1, 0]);
  assert.equal(typeof task.fencingToken, 'bigint');
  assert.ok(task.fencingToken > 0n);
  assert.equal(task.isHeld(), false, 'acked at the end of the block');
  assert.equal((await c.get(`${results}/img-17`)).toString(), 'ok');
  assert.equal((await q.stats()).pending, 0);
  await assert.rejects(c.put(`${results}/late`, 'x', { ifHeld: task }), { code: 'NOT_HELD' });
  assert.equal(await c.get(`${results}/late`), null);
  await task[Symbol.asyncDispose](); // already acked: nothing

  // The work failed: given back, delivered again.
  await q.put('boom', { id: 'boom' });
  const first = await q.claim({ timeout: 5000 });
  assert.equal(first.isHeld(), true);
  await first.nack();
  await assert.rejects(first.ack(), { code: 'NOT_HELD' });
  const again = await q.claim({ timeout: 5000 });
  assert.deepEqual([again.id, again.attempts], ['boom', 2]);

  // The claim is lost (its lease revoked, as when a worker's lease ends): the ack and its own
  // write fail together, and the item is claimable again.
  const reasons = [];
  again.onLost((r) => reasons.push(r));
  etcdctl('lease', 'revoke', claimLease(name));
  await waitFor(() => reasons.length === 1, 5000, 'onLost');
  assert.ok(['expired', 'revoked', 'key_deleted'].includes(reasons[0]), reasons[0]);
  assert.equal(again.lostReason(), reasons[0]);
  assert.equal(again.isHeld(), false);
  await assert.rejects(again.ack({ puts: { [`${results}/boom`]: 'late' } }), { code: 'NOT_HELD' });
  assert.equal(await c.get(`${results}/boom`), null, "a lost claim's write committed");

  const last = await q.claim({ timeout: 5000 });
  assert.equal(last.attempts, 3);
  assert.ok(last.fencingToken > again.fencingToken);
  // A task's writes stay out of the queue's own keys (refused, still held).
  await assert.rejects(last.ack({ puts: [[`${name}/items/x`, 'v']] }), { code: 'INVALID_ARGUMENT' });
  await assert.rejects(c.put(`${name}/id/x`, 'v', { ifHeld: last }), { code: 'INVALID_ARGUMENT' });
  assert.equal(last.isHeld(), true);
  const rev = await last.ack({ puts: new Map([[`${results}/boom`, 'ok']]), deletes: [`${results}/img-17`] });
  assert.equal(typeof rev, 'bigint');
  assert.equal((await c.get(`${results}/boom`)).toString(), 'ok');
  assert.equal(await c.get(`${results}/img-17`), null);
  await assert.rejects(last.ack(), { code: 'NOT_HELD' }, 'a second ack');
  assert.deepEqual(keysUnder(`${name}/`), []);
  await c.delete(`${results}/boom`);
});

// covers: QUEUE-DELAY-001
test('a delayed item is not claimable before its delay; a nack with a delay neither', async (t) => {
  const c = client(t);
  const q = c.queue(prefix('tq-delay'), { ttl: 10 });
  const putAt = performance.now();
  await q.put('later', { id: 'later', delay: 2000 });
  await q.put('now', { id: 'now' });
  const s = await q.stats();
  assert.deepEqual([s.pending, s.delayed], [1, 1]);
  const task = await q.claim({ timeout: 0 });
  assert.equal(task.id, 'now');
  const nackAt = performance.now();
  await task.nack({ delay: 2500 }); // whole seconds on an etcd lease: 3 s
  await assert.rejects(q.claim({ timeout: 0 }), { code: 'WOULD_BLOCK' });
  assert.equal((await q.stats()).delayed, 2);
  const later = await q.claim({ timeout: 10_000 });
  assert.equal(later.id, 'later');
  assert.ok(performance.now() - putAt >= 2000, `claimed after ${performance.now() - putAt} ms`);
  await later.ack();
  const now = await q.claim({ timeout: 10_000 });
  assert.deepEqual([now.id, now.attempts], ['now', 2]);
  assert.ok(performance.now() - nackAt >= 3000, `claimed again after ${performance.now() - nackAt} ms`);
  await now.ack();
});

// covers: QUEUE-DEAD-001
test('an item goes to the dead letters after its last attempt, and can be requeued or deleted', async (t) => {
  const c = client(t);
  const name = prefix('tq-dead');
  const q = c.queue(name, { ttl: 10, maxAttempts: 2 });
  await q.put('p', { id: 'p', priority: 3 });
  await (await q.claim({ timeout: 0 })).nack();
  await (await q.claim({ timeout: 0 })).nack();
  await assert.rejects(q.claim({ timeout: 0 }), { code: 'WOULD_BLOCK' });
  assert.deepEqual(await q.dead(), [{ id: 'p', payload: Buffer.from('p'), attempts: 2, priority: 3 }]);
  assert.equal((await q.stats()).dead, 1);
  assert.equal(await q.requeueDead('p'), true);
  assert.equal(await q.requeueDead('p'), false);
  const back = await q.claim({ timeout: 0 });
  assert.deepEqual([back.id, back.attempts, back.priority], ['p', 1, 3]);
  await back.ack();
  // Given back with a delay on its last attempt: dead at once, no delay.
  await q.put('q', { id: 'q' });
  await (await q.claim({ timeout: 0 })).nack();
  await (await q.claim({ timeout: 0 })).nack({ delay: 5000 });
  assert.deepEqual((await q.dead()).map((d) => [d.id, d.attempts]), [['q', 2]]);
  assert.equal(await q.deleteDead('q'), true);
  assert.deepEqual(await q.dead(), []);
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// covers: QUEUE-INPUT-001
test('bad input is rejected INVALID_ARGUMENT with nothing written; Closed after close', async (t) => {
  const c = client(t);
  const name = prefix('tq-input');
  const invalid = { code: 'INVALID_ARGUMENT' };
  for (const [n, o] of [['', {}], [`${name}/`, {}], [name, { ttl: 0 }], [name, { ttl: -1 }], [name, { ttl: 1.5 }], [name, { ttl: '5' }], [name, { maxAttempts: 0 }], [name, { maxAttempts: 1.5 }], [name, { maxAttempts: '5' }], [42, {}], [name, 'x']]) {
    assert.throws(() => c.queue(n, o), invalid, `queue(${JSON.stringify(n)}, ${JSON.stringify(o)})`);
  }
  const q = c.queue(name);
  const bad = [
    () => q.put(Buffer.alloc(MAX_TASK_PAYLOAD_LEN + 1)),
    () => q.put('x', { id: '' }),
    () => q.put('x', { id: 'a\nb' }),
    () => q.put('x', { id: 'i'.repeat(257) }),
    () => q.put('x', { id: 7 }),
    () => q.put('x', { delay: -1 }),
    () => q.put('x', { delay: NaN }),
    () => q.put('x', { delay: Infinity }),
    () => q.put('x', { delay: 1e15 }), // beyond etcd's largest lease TTL
    () => q.put('x', { priority: 'high' }),
    () => q.put('x', { priority: 1.5 }),
    () => q.put('x', { priority: 2 ** 31 }),
    () => q.put(42),
    () => q.put('x', 'options'),
    () => q.claim({ timeout: -1 }),
    () => q.claim({ timeout: '5' }),
    () => q.claim({ worker: 'w'.repeat(4097) }),
    () => q.claim({ signal: 'soon' }),
    () => q.requeueDead(7),
    () => q.deleteDead(''),
    () => c.put(`${name}-k`, 'v', { ifHeld: {} }),
  ];
  for (const f of bad) await assert.rejects(f(), invalid, f.toString());
  assert.deepEqual(keysUnder(name), []);
  // The largest payload goes through.
  const big = Buffer.alloc(MAX_TASK_PAYLOAD_LEN, 7);
  await q.put(big, { id: 'big' });
  const task = await q.claim({ timeout: 5000 });
  assert.equal(task.payload.length, MAX_TASK_PAYLOAD_LEN);
  assert.ok(task.payload.equals(big));
  for (const f of [() => task.ack({ puts: 'k=v' }), () => task.ack({ puts: [['k']] }), () => task.ack({ deletes: 'k' }), () => task.nack({ delay: -5 })]) {
    await assert.rejects(f(), invalid, f.toString());
  }
  assert.equal(task.isHeld(), true, 'bad arguments changed nothing');
  await task.ack();
  assert.deepEqual(keysUnder(`${name}/`), []);
  await c.close();
  await assert.rejects(q.put('x'), { code: 'CLOSED' });
  await assert.rejects(q.claim({ timeout: 0 }), { code: 'CLOSED' });
  await assert.rejects(c.queue(prefix('tq-closed')).stats(), { code: 'CLOSED' });
});

// covers: QUEUE-CANCEL-001
test('AbortSignal: an aborted claim, waiting for an item or for its turn, leaves nothing behind', async (t) => {
  const c = client(t);
  const name = prefix('tq-abort');
  const q = c.queue(name, { ttl: 10 });
  // An already-aborted signal sends nothing.
  await assert.rejects(q.claim({ signal: AbortSignal.abort() }), { name: 'AbortError' });
  assert.deepEqual(keysUnder(`${name}/`), []);
  // Two claims wait: the first for an item, the second for its turn behind it.
  const [first, second] = [new AbortController(), new AbortController()];
  const waiting = q.claim({ signal: first.signal, timeout: 20_000 }).then(() => null, (e) => e);
  await waitFor(() => keysUnder(`${name}/workers/`).length === 1, 5000, 'the first claim to wait');
  const behind = q.claim({ signal: second.signal, timeout: 20_000, worker: 'second' }).then((task) => task, (e) => e);
  await waitFor(() => keysUnder(`${name}/workers/`).length === 2, 5000, 'the second claim to queue');
  const reason = new Error('stop');
  first.abort(reason);
  const err = await waiting;
  assert.ok(err instanceof AbortError, String(err));
  assert.equal(err.cause, reason);
  // The second is the only one waiting now, and gets the next item.
  await waitFor(() => keysUnder(`${name}/workers/`).length === 1, 5000, "the first claim's key to go");
  await q.put('job', { id: 'job' });
  const task = await behind;
  assert.ok(task instanceof Task, String(task));
  second.abort(); // after the claim: no effect
  assert.equal(task.isHeld(), true);
  await task.ack();
  // A lone waiter aborted: nothing left at all.
  const ac = new AbortController();
  const lone = q.claim({ signal: ac.signal }).then(() => null, (e) => e);
  await waitFor(() => keysUnder(`${name}/workers/`).length === 1, 5000, 'the claim to wait');
  ac.abort();
  assert.equal((await lone).name, 'AbortError');
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// A worker in a child process: claims from the queue QNAME (TTL QTTL), says so, then acks with
// a result write when told to on stdin.
const WORKER = `
const { Client } = require(${JSON.stringify(PKG)});
const readline = require('node:readline');
(async () => {
  const name = process.env.QNAME;
  const client = new Client({ endpoints: process.env.ETCDLOCK_ENDPOINTS.split(',') });
  const q = client.queue(name, { ttl: Number(process.env.QTTL) });
  const task = await q.claim({ timeout: 10000, worker: 'pid ' + process.pid });
  console.log('claimed', task.id, task.attempts);
  const rl = readline.createInterface({ input: process.stdin });
  await new Promise((resolve) => rl.once('line', resolve));
  rl.close();
  try {
    await task.ack({ puts: { [name + '-result']: 'first' } });
    console.log('acked');
  } catch (e) {
    console.log(e.code === 'NOT_HELD' ? 'not held' : 'error ' + e.code);
  }
  await client.close();
})();
`;

/** Starts a worker on queue `name`; resolves once it has claimed (bounded). */
async function startWorker(t, name, ttl) {
  const child = spawn(process.execPath, ['-e', WORKER], {
    cwd: PKG,
    env: { ...process.env, ETCDLOCK_ENDPOINTS: ENDPOINTS.join(','), QNAME: name, QTTL: String(ttl) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const w = { child, stdout: '', stderr: '', exited: null };
  child.stdout.on('data', (d) => (w.stdout += d));
  child.stderr.on('data', (d) => (w.stderr += d));
  child.on('exit', (code, signal) => (w.exited = { code, signal }));
  t.after(() => {
    if (w.exited === null) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
  });
  await waitFor(() => w.stdout.includes('\n') || w.exited !== null, 15_000, `the worker to claim (stderr: ${w.stderr})`);
  assert.match(w.stdout, /^claimed job 1\n$/, w.stderr);
  return w;
}

// covers: QUEUE-KILL-001
test('a worker SIGKILLed mid-task loses it to another within TTL + 1.5 s, with attempts 2', async (t) => {
  const c = client(t);
  const name = prefix('tq-kill');
  const q = c.queue(name, { ttl: 2 });
  await q.put('job', { id: 'job' });
  const w = await startWorker(t, name, 2);
  w.child.kill('SIGKILL');
  await waitFor(() => w.exited !== null, 10_000, 'the worker to die');
  const killed = performance.now();
  const task = await q.claim({ timeout: 10_000 });
  const took = performance.now() - killed;
  assert.deepEqual([task.id, task.attempts], ['job', 2]);
  assert.ok(took < 2000 + 1500, `claimed again after ${took.toFixed(0)} ms`);
  await task.ack();
  assert.deepEqual(keysUnder(`${name}/`), []);
});

// covers: QUEUE-STOP-001
test("a worker SIGSTOPped past its TTL cannot ack, and the other worker's result stands", async (t) => {
  const c = client(t);
  const name = prefix('tq-stop');
  const q = c.queue(name, { ttl: 2 });
  await q.put('job', { id: 'job' });
  const w = await startWorker(t, name, 2);
  w.child.kill('SIGSTOP');
  try {
    const task = await q.claim({ timeout: 10_000 });
    assert.equal(task.attempts, 2);
    await task.ack({ puts: { [`${name}-result`]: 'second' } });
  } finally {
    w.child.kill('SIGCONT');
  }
  w.child.stdin.write('go\n');
  await waitFor(() => w.exited !== null, 20_000, `the worker to finish (stdout: ${w.stdout})`);
  assert.equal(w.stdout.trim().split('\n').pop(), 'not held', w.stderr);
  assert.equal((await c.get(`${name}-result`)).toString(), 'second');
  await c.delete(`${name}-result`);
  assert.deepEqual(keysUnder(`${name}/`), []);
});

test('the ESM entry exports the task queue (the same objects)', async () => {
  const m = await esm;
  assert.equal(m.TaskQueue, TaskQueue);
  assert.equal(m.Task, Task);
  assert.equal(m.MAX_TASK_PAYLOAD_LEN, 1536 * 1024 - 8192);
});
