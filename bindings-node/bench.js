#!/usr/bin/env node
'use strict';
// `node bench.js [--endpoints URLS] [--seconds S] [--rounds R]`, or `--endpoints URLS --serve`
//
// The Rust benchmark's lock workloads (bench/src/workloads.rs), through the Node binding, with
// the same definitions: cycles/s of lock+release on one client (1 loop, then 64 concurrent
// loops each on its own name) and N clients contending for one name (handoff = next holder's
// acquire resolution minus the previous holder's release start; p50/p99; Jain's index); and the
// task queue's (bench/src/queue.rs): one producer and N workers, tasks acked per second; and the
// semaphore's and the pool's (bench/src/recipes.rs): N clients cycling acquire/release on one
// semaphore of P permits, or on one slot of a pool of S slots (cycles/s, Jain's index).
// Rounds interleave the workloads; each prints its median round as one JSON line shaped like
// Report::json with "lang":"node". Without --endpoints (or ETCDLOCK_ENDPOINTS) it starts a
// throwaway etcd with tests/etcd_harness.py. With --serve it runs one workload per stdin line
// (`SECONDS WORKLOAD NAME`) and answers each with one JSON line, until stdin closes (for
// bench/run.py).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { Client } = require('./index.js');

function parseArgs(argv) {
  const args = { endpoints: process.env.ETCDLOCK_ENDPOINTS || null, seconds: 1, rounds: 5, serve: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--endpoints') args.endpoints = argv[++i];
    else if (a === '--seconds') args.seconds = Number(argv[++i]);
    else if (a === '--rounds') args.rounds = Number(argv[++i]);
    else if (a === '--serve') args.serve = true;
    else if (a === '-h' || a === '--help') {
      console.log('usage: node bench.js [--endpoints URL[,URL]] [--seconds N] [--rounds N] [--serve]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!(args.seconds > 0) || !(Number.isInteger(args.rounds) && args.rounds > 0)) throw new Error('--seconds N --rounds N');
  return args;
}

// This process's user and system CPU in microseconds so far (every thread, the addon's runtime's too).
const processCpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const perCycle = (cpu0, cycles) => (cycles > 0 ? (processCpu() - cpu0) / cycles : null);

const unique = (tag) => `bench/${tag}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

/** `tasks` loops on one client, each locking its own name (workloads.rs lock_many). */
async function lockMany(endpoints, tasks, seconds) {
  const client = await Client.connect({ endpoints });
  const prefix = unique('lock');
  const cpu0 = processCpu();
  const deadline = performance.now() + seconds * 1000;
  const loops = Array.from({ length: tasks }, async (_, t) => {
    const name = `${prefix}/${t}`;
    // Grant the handle's lease before timing starts, as the Rust loop does.
    await (await client.lock(name, { ttl: 30 })).release();
    let n = 0;
    while (performance.now() < deadline) {
      const lock = await client.lock(name, { ttl: 30 });
      await lock.release();
      n++;
    }
    return n;
  });
  const total = (await Promise.all(loops)).reduce((a, b) => a + b, 0);
  const cpu = perCycle(cpu0, total);
  await client.close();
  return { total, cpu };
}

/** N clients contending for one name (workloads.rs contended). */
async function contended(endpoints, clients, seconds) {
  const name = unique('contended');
  const timeline = []; // [acquired, releasing] in ms
  // One connection per contender, as separate processes would have.
  const conns = [];
  for (let i = 0; i < clients; i++) conns.push(await Client.connect({ endpoints }));
  const cpu0 = processCpu();
  const start = performance.now();
  const deadline = start + seconds * 1000;
  const counts = await Promise.all(
    conns.map(async (c) => {
      let n = 0;
      while (performance.now() < deadline) {
        const lock = await c.lock(name, { ttl: 30 });
        const acquired = performance.now();
        const releasing = performance.now();
        await lock.release();
        timeline.push([acquired, releasing]);
        n++;
      }
      return n;
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const cpu = perCycle(cpu0, counts.reduce((a, b) => a + b, 0));
  await Promise.all(conns.map((c) => c.close()));
  timeline.sort((a, b) => a[0] - b[0]);
  const handoffs = [];
  for (let i = 1; i < timeline.length; i++) handoffs.push(Math.max(0, timeline[i][0] - timeline[i - 1][1]));
  handoffs.sort((a, b) => a - b);
  const pct = (p) => (handoffs.length ? handoffs[Math.round((handoffs.length - 1) * p)] : null);
  const sum = counts.reduce((a, b) => a + b, 0);
  const sq = counts.reduce((a, b) => a + b * b, 0);
  return {
    name: `lock contended (${clients} clients)`,
    cyclesPerSec: sum / elapsed,
    p50: pct(0.5),
    p99: pct(0.99),
    jain: sq > 0 ? (sum * sum) / (counts.length * sq) : null,
    cpu,
  };
}

// bench/src/queue.rs's: the producer stays at most this many items per worker ahead of the acks.
const BACKLOG_PER_WORKER = 2;
const PAYLOAD = Buffer.from('task-0123456789');

/**
 * One producer and `workers` workers, each a client of its own, on a queue of its own
 * (bench/src/queue.rs): the producer puts while fewer than BACKLOG_PER_WORKER x workers items
 * are unacked, each worker claims and acks until the window ends; tasks acked by its end per
 * second. What is left is claimed and acked afterwards, untimed.
 */
async function queue(endpoints, workers, seconds) {
  const name = unique('queue');
  const opts = { ttl: 10, maxAttempts: 5 };
  const producer = await Client.connect({ endpoints });
  const conns = [];
  for (let i = 0; i < workers; i++) conns.push(await Client.connect({ endpoints }));
  let free = BACKLOG_PER_WORKER * workers;
  let wake = null; // the producer's, while it waits for a free slot
  const wakeProducer = () => {
    const w = wake;
    wake = null;
    if (w) w();
  };
  const cpu0 = processCpu();
  const deadline = performance.now() + seconds * 1000;
  const loops = conns.map(async (c) => {
    const q = c.queue(name, opts);
    let n = 0;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      let task;
      try {
        task = await q.claim({ timeout: Math.ceil(left) });
      } catch (e) {
        if (e.code === 'LOCK_TIMEOUT') break;
        throw e;
      }
      await task.ack();
      free++;
      wakeProducer();
      if (performance.now() <= deadline) n++;
    }
    return n;
  });
  const q = producer.queue(name, opts);
  const end = setTimeout(wakeProducer, seconds * 1000);
  while (performance.now() < deadline) {
    if (free === 0) {
      await new Promise((resolve) => (wake = resolve));
      continue;
    }
    free--;
    await q.put(PAYLOAD);
  }
  clearTimeout(end);
  const acked = (await Promise.all(loops)).reduce((a, b) => a + b, 0);
  const cpu = perCycle(cpu0, acked);
  for (;;) {
    // What is left, so that the next window's etcd holds nothing of this one's.
    let task;
    try {
      task = await q.claim({ timeout: 0 });
    } catch (e) {
      if (e.code === 'WOULD_BLOCK') break;
      throw e;
    }
    await task.ack();
  }
  await Promise.all(conns.map((c) => c.close()));
  await producer.close();
  return simple(`queue (${workers} workers)`, { total: acked, cpu }, seconds);
}

/**
 * `clients` clients, each a connection of its own, cycling acquire/release on one semaphore of
 * `size` permits (kind 'semaphore') or on one slot of a pool of `size` slots (kind 'pool'), on a
 * name of its own (bench/src/recipes.rs): cycles/s over all of them, Jain's index of the counts.
 */
async function recipeContended(endpoints, kind, clients, size, seconds) {
  const name = unique(kind);
  const conns = [];
  for (let i = 0; i < clients; i++) conns.push(await Client.connect({ endpoints }));
  const cpu0 = processCpu();
  const start = performance.now();
  const deadline = start + seconds * 1000;
  const counts = await Promise.all(
    conns.map(async (c) => {
      let n = 0;
      if (kind === 'pool') {
        const pool = c.pool(name, { size, ttl: 30 });
        while (performance.now() < deadline) {
          const held = await pool.acquire({ count: 1 });
          await held.release();
          n++;
        }
      } else {
        while (performance.now() < deadline) {
          const permit = await c.semaphore(name, { permits: size, ttl: 30 });
          await permit.release();
          n++;
        }
      }
      return n;
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const sum = counts.reduce((a, b) => a + b, 0);
  const cpu = perCycle(cpu0, sum);
  await Promise.all(conns.map((c) => c.close()));
  const sq = counts.reduce((a, b) => a + b * b, 0);
  return {
    name: kind === 'pool' ? `pool contended (${clients} clients, ${size} slots)` : `semaphore contended (${clients} clients, ${size} permits)`,
    cyclesPerSec: sum / elapsed,
    p50: null,
    p99: null,
    jain: sq > 0 ? (sum * sum) / (counts.length * sq) : null,
    cpu,
  };
}

const WORKLOADS = [
  { name: 'lock uncontended', run: async (ep, s) => simple('lock uncontended', await lockMany(ep, 1, s), s) },
  { name: 'lock many (64 tasks)', run: async (ep, s) => simple('lock many (64 tasks)', await lockMany(ep, 64, s), s) },
  { name: 'lock contended (4 clients)', run: (ep, s) => contended(ep, 4, s) },
  { name: 'lock contended (16 clients)', run: (ep, s) => contended(ep, 16, s) },
  { name: 'queue (4 workers)', run: (ep, s) => queue(ep, 4, s) },
  { name: 'queue (16 workers)', run: (ep, s) => queue(ep, 16, s) },
  { name: 'semaphore contended (16 clients, 4 permits)', run: (ep, s) => recipeContended(ep, 'semaphore', 16, 4, s) },
  { name: 'pool contended (16 clients, 4 slots)', run: (ep, s) => recipeContended(ep, 'pool', 16, 4, s) },
];

function simple(name, { total, cpu }, seconds) {
  return { name, cyclesPerSec: total / seconds, p50: null, p99: null, jain: null, cpu };
}

/** Report::json's exact shape and number formats. */
function json(r) {
  const ms = (v) => (v === null ? 'null' : v.toFixed(4));
  return `{"lang":"node","workload":"${r.name}","cycles_per_sec":${r.cyclesPerSec.toFixed(1)},"handoff_p50_ms":${ms(r.p50)},"handoff_p99_ms":${ms(r.p99)},"jain":${r.jain === null ? 'null' : r.jain.toFixed(4)},"cpu_us_per_cycle":${r.cpu === null ? 'null' : r.cpu.toFixed(1)}}`;
}

function startEtcd() {
  const harness = path.join(__dirname, '..', 'tests', 'etcd_harness.py');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'etcdlock-node-bench-'));
  const state = path.join(dir, 'etcd.json');
  const r = spawnSync('python3', [harness, 'start', '--members', '1', '--state', state], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`cannot start etcd: ${r.stderr}`);
  const stop = () => {
    spawnSync('python3', [harness, 'stop', '--state', state], { timeout: 30_000 });
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { endpoints: r.stdout.trim().split('\n').pop(), stop };
}

/** One workload per stdin line, one JSON line back for each. */
async function serve(endpoints) {
  const lines = require('node:readline').createInterface({ input: process.stdin });
  for await (const line of lines) {
    const m = /^(\S+) (.+)$/.exec(line.trim());
    if (!m) break;
    const w = WORKLOADS.find((x) => x.name === m[2]);
    if (!w) throw new Error(`unknown workload ${m[2]}`);
    console.log(json(await w.run(endpoints, Number(m[1]))));
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.serve) {
    if (!args.endpoints) throw new Error('--serve needs --endpoints');
    return serve(args.endpoints.split(','));
  }
  const own = args.endpoints ? null : startEtcd();
  try {
    const endpoints = (args.endpoints || own.endpoints).split(',');
    // Warm up the server and the runtime before anything is timed.
    await lockMany(endpoints, 1, 0.5);
    const rounds = WORKLOADS.map(() => []);
    for (let r = 0; r < args.rounds; r++) {
      for (let i = 0; i < WORKLOADS.length; i++) rounds[i].push(await WORKLOADS[i].run(endpoints, args.seconds));
    }
    for (const rs of rounds) {
      rs.sort((a, b) => a.cyclesPerSec - b.cyclesPerSec);
      console.log(json(rs[Math.floor(rs.length / 2)]));
    }
  } finally {
    if (own) own.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
