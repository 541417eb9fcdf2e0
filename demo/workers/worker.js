// The Node demo worker: acquire → guarded increment → work → release, reported as JSON lines.
// Environment: ETCDLOCK_ENDPOINTS, DEMO_LOCK, DEMO_COUNTER, DEMO_TTL, DEMO_WORK_MS,
// DEMO_UNTIL_NS (a CLOCK_MONOTONIC deadline; process.hrtime reads that clock on Linux); with
// https:// endpoints (demo.sh --tls) also DEMO_TLS_CA, DEMO_TLS_CERT, DEMO_TLS_KEY (PEM file paths).
// DEMO_BREAK=stale is for the soak's positive control only (tests/history/soak.py): the worker then
// also writes the counter without the lock after each release, which the history checker must catch.
// DEMO_MODE=election or DEMO_MODE=semaphore runs the demo's second phase instead (demo/coordination.py):
// campaign in DEMO_ELECTION proposing DEMO_LABEL and, while leading, proclaim and make fenced writes
// to DEMO_TERM_KEY every DEMO_WRITE_MS; or loop acquire -> hold DEMO_HOLD_MS -> release on the
// semaphore DEMO_SEMAPHORE with DEMO_PERMITS permits. Both stop at DEMO_UNTIL_NS.
// DEMO_MODE=produce or DEMO_MODE=tasks runs the demo's third phase (demo/tasks.py): put DEMO_TASK_COUNT
// tasks with the ids DEMO_TASK_PREFIX00.. into the queue DEMO_QUEUE; or loop claim (DEMO_CLAIM_MS at
// most) -> work DEMO_WORK_MS -> ack with the result DEMO_RESULTS<id> = "<token>:DEMO_LABEL" in the
// ack's own transaction, until DEMO_UNTIL_NS has passed and the queue is empty.
// With DEMO_SERVICE set, the mutex worker registers itself there as DEMO_LABEL while it runs.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require(path.join(__dirname, '..', '..', 'bindings-node'));

const now = () => process.hrtime.bigint();
const emit = (fields) =>
  process.stdout.write(JSON.stringify({ t: now().toString(), ...fields }).replace(/"t":"(\d+)"/, '"t":$1') + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const readCounter = async (client, key) => Number((await client.get(key))?.toString() ?? 0);

async function main() {
  const env = process.env;
  const until = BigInt(env.DEMO_UNTIL_NS);
  const work = Number(env.DEMO_WORK_MS);
  const options = { endpoints: env.ETCDLOCK_ENDPOINTS.split(',') };
  if (env.DEMO_TLS_CA) {
    const pem = (name) => (env[name] ? fs.readFileSync(env[name]) : undefined);
    options.tls = { ca: pem('DEMO_TLS_CA'), cert: pem('DEMO_TLS_CERT'), key: pem('DEMO_TLS_KEY') };
  }
  const client = new Client(options);
  const modes = { election, semaphore, produce, tasks };
  if (Object.hasOwn(modes, env.DEMO_MODE ?? '')) {
    await modes[env.DEMO_MODE](client, env, until);
    await client.close();
    emit({ ev: 'done' });
    return;
  }
  const registration = await register(client, env);
  emit({ ev: 'ready' });
  while (now() < until) {
    emit({ ev: 'waiting' });
    let lock;
    try {
      lock = await client.lock(env.DEMO_LOCK, { ttl: Number(env.DEMO_TTL), value: `node pid ${process.pid}` });
    } catch (e) {
      emit({ ev: 'error', error: `${e.code}: ${e.message}` });
      await sleep(200);
      continue;
    }
    const token = Number(lock.fencingToken);
    emit({ ev: 'acquired', token, key: lock.key.toString() });
    lock.onLost((reason) => emit({ ev: 'lost', token, reason }));
    await sleep(work);
    // No write without the value it increments; release all the same.
    const current = await readCounter(client, env.DEMO_COUNTER).catch((e) => {
      emit({ ev: 'error', error: `read ${e.code}: ${e.message}` });
      return null;
    });
    if (current !== null) {
      try {
        await client.put(env.DEMO_COUNTER, String(current + 1), { ifHeld: lock });
        emit({ ev: 'wrote', token, value: current + 1 });
      } catch (e) {
        // NOT_HELD: refused; a timeout: unknown (run.py tells them apart)
        emit({ ev: 'write_refused', token, value: current + 1, error: e.code });
      }
    }
    emit({ ev: 'releasing', token });
    await lock.release().then(
      () => emit({ ev: 'released', token }),
      (e) => emit({ ev: 'release_failed', token, error: e.code }),
    );
    if (env.DEMO_BREAK === 'stale') {
      // BROKEN on purpose: a write without the lock (one that fails is simply not reported).
      try {
        const stale = (await readCounter(client, env.DEMO_COUNTER)) + 1;
        await client.put(env.DEMO_COUNTER, String(stale));
        emit({ ev: 'wrote', token, value: stale });
      } catch {}
    }
  }
  await registration?.close();
  emit({ ev: 'metrics', text: client.metricsText() });
  await client.close();
  emit({ ev: 'done' });
}

// Registers this worker in DEMO_SERVICE (if set) as DEMO_LABEL, reporting losses.
async function register(client, env) {
  if (!env.DEMO_SERVICE) return null;
  const reg = await client.register(env.DEMO_SERVICE, env.DEMO_LABEL, `node pid ${process.pid}`, { ttl: Number(env.DEMO_TTL) });
  reg.onLost((reason) => emit({ ev: 'unregistered', reason }));
  reg.onRestored((lease) => emit({ ev: 'registered_again', lease: Number(lease) }));
  reg.onTakenOver(() => emit({ ev: 'unregistered', reason: 'taken_over' }));
  return reg;
}

// Milliseconds left before until, null once it passed.
const left = (until) => {
  const n = now();
  return n < until ? Math.max(1, Number((until - n) / 1000000n)) : null;
};

async function election(client, env, until) {
  const label = env.DEMO_LABEL;
  const every = Number(env.DEMO_WRITE_MS);
  const elect = client.election(env.DEMO_ELECTION, { ttl: Number(env.DEMO_TTL) });
  emit({ ev: 'ready' });
  while (left(until) !== null) {
    emit({ ev: 'campaigning' });
    let leadership;
    try {
      leadership = await elect.campaign(label, { timeout: left(until) ?? 1 });
    } catch (e) {
      emit({ ev: 'campaign_ended', error: e.code }); // LOCK_TIMEOUT at the deadline
      if (left(until) !== null) await sleep(200);
      continue;
    }
    const token = Number(leadership.fencingToken);
    emit({ ev: 'leading', token, key: leadership.key.toString() });
    leadership.onLost((reason) => emit({ ev: 'lost', token, reason }));
    try {
      emit({ ev: 'proclaimed', token, rev: Number(await leadership.proclaim(`${label} leads`)) });
    } catch (e) {
      emit({ ev: 'proclaim_refused', token, error: e.code });
    }
    for (let seq = 1; left(until) !== null && leadership.isHeld(); seq++) {
      try {
        const rev = await client.put(env.DEMO_TERM_KEY, `${label} token ${token} write ${seq}`, { ifHeld: leadership });
        emit({ ev: 'term_write', token, seq, rev: Number(rev) });
      } catch (e) {
        emit({ ev: 'term_refused', token, seq, error: e.code });
      }
      await sleep(every);
    }
    await leadership.resign().then(
      () => emit({ ev: 'resigned', token }),
      (e) => emit({ ev: 'resign_failed', token, error: e.code }),
    );
  }
}

async function semaphore(client, env, until) {
  const hold = Number(env.DEMO_HOLD_MS);
  emit({ ev: 'ready' });
  while (left(until) !== null) {
    emit({ ev: 'waiting' });
    let permit;
    try {
      permit = await client.semaphore(env.DEMO_SEMAPHORE, {
        permits: Number(env.DEMO_PERMITS), ttl: Number(env.DEMO_TTL), timeout: left(until) ?? 1,
      });
    } catch (e) {
      emit({ ev: 'error', error: `${e.code}: ${e.message}` }); // LOCK_TIMEOUT at the deadline
      if (left(until) !== null) await sleep(200);
      continue;
    }
    const token = Number(permit.fencingToken);
    emit({ ev: 'acquired', token, key: permit.key.toString() });
    await sleep(hold);
    emit({ ev: 'releasing', token });
    await permit.release().then(
      () => emit({ ev: 'released', token }),
      (e) => emit({ ev: 'release_failed', token, error: e.code }),
    );
  }
}

const queueOf = (client, env) =>
  client.queue(env.DEMO_QUEUE, { ttl: Number(env.DEMO_TTL), maxAttempts: Number(env.DEMO_MAX_ATTEMPTS) });

async function produce(client, env) {
  const q = queueOf(client, env);
  emit({ ev: 'ready' });
  for (let i = 0; i < Number(env.DEMO_TASK_COUNT); i++) {
    const id = `${env.DEMO_TASK_PREFIX}${String(i).padStart(2, '0')}`;
    try {
      await q.put(`task ${id} from ${env.DEMO_LABEL}`, { id });
      emit({ ev: 'put', id });
    } catch (e) {
      emit({ ev: 'put_failed', id, error: `${e.code}: ${e.message}` }); // a timeout: it may be there
    }
  }
}

async function tasks(client, env, until) {
  const q = queueOf(client, env);
  const label = env.DEMO_LABEL;
  emit({ ev: 'ready' });
  for (;;) {
    let task;
    try {
      task = await q.claim({ timeout: Number(env.DEMO_CLAIM_MS), worker: label });
    } catch (e) {
      if (e.code !== 'LOCK_TIMEOUT') {
        emit({ ev: 'error', error: `claim ${e.code}: ${e.message}` });
        await sleep(200);
      } else if (left(until) === null) {
        const s = await q.stats();
        if (s.pending + s.delayed + s.claimed === 0) return;
      }
      continue;
    }
    const token = Number(task.fencingToken);
    emit({ ev: 'claimed', id: task.id, token, attempts: task.attempts });
    await sleep(Number(env.DEMO_WORK_MS));
    try {
      // The result and the ack in one transaction, only while the claim holds.
      const rev = await task.ack({ puts: { [`${env.DEMO_RESULTS}${task.id}`]: `${token}:${label}` } });
      emit({ ev: 'acked', id: task.id, token, rev: Number(rev) });
    } catch (e) {
      if (e.code === 'NOT_HELD') emit({ ev: 'refused', id: task.id, token, stage: 'ack', error: e.code });
      else emit({ ev: 'ack_unknown', id: task.id, token, error: `${e.code}: ${e.message}` }); // may have committed
    }
  }
}

main().catch((e) => {
  emit({ ev: 'error', error: String(e) });
  process.exit(1);
});
