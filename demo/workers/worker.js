// The Node demo worker: acquire → guarded increment → work → release, reported as JSON lines.
// Environment: ETCDLOCK_ENDPOINTS, DEMO_LOCK, DEMO_COUNTER, DEMO_TTL, DEMO_WORK_MS,
// DEMO_UNTIL_NS (a CLOCK_MONOTONIC deadline; process.hrtime reads that clock on Linux).
'use strict';
const path = require('node:path');
const { Client } = require(path.join(__dirname, '..', '..', 'bindings-node'));

const now = () => process.hrtime.bigint();
const emit = (fields) =>
  process.stdout.write(JSON.stringify({ t: now().toString(), ...fields }).replace(/"t":"(\d+)"/, '"t":$1') + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const env = process.env;
  const until = BigInt(env.DEMO_UNTIL_NS);
  const work = Number(env.DEMO_WORK_MS);
  const client = new Client({ endpoints: env.ETCDLOCK_ENDPOINTS.split(',') });
  emit({ ev: 'ready' });
  while (now() < until) {
    emit({ ev: 'waiting' });
    let lock;
    try {
      lock = await client.lock(env.DEMO_LOCK, { ttl: Number(env.DEMO_TTL) });
    } catch (e) {
      emit({ ev: 'error', error: `${e.code}: ${e.message}` });
      await sleep(200);
      continue;
    }
    const token = Number(lock.fencingToken);
    emit({ ev: 'acquired', token, key: lock.key.toString() });
    lock.onLost((reason) => emit({ ev: 'lost', token, reason }));
    await sleep(work);
    const current = Number((await client.get(env.DEMO_COUNTER))?.toString() ?? 0);
    try {
      await client.put(env.DEMO_COUNTER, String(current + 1), { ifHeld: lock });
      emit({ ev: 'wrote', token, value: current + 1 });
    } catch (e) {
      emit({ ev: 'write_refused', token, error: e.code });
    }
    emit({ ev: 'releasing', token });
    await lock.release().catch(() => {});
  }
  await client.close();
  emit({ ev: 'done' });
}

main().catch((e) => {
  emit({ ev: 'error', error: String(e) });
  process.exit(1);
});
