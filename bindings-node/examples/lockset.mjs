// ES module: a lock set: several names taken together, in any order, with one fencing token; run with ETCDLOCK_ENDPOINTS set.
import { Client } from 'etcdlock';

const endpoints = (process.env.ETCDLOCK_ENDPOINTS || 'http://127.0.0.1:2379').split(',');
const client = await Client.connect({ endpoints });

// A transfer takes both accounts' locks at once; transfers the other way list them in the other
// order, and none deadlocks. The balances are outside the locks' queues (`readme/acct/1/...`).
async function transfer(from, to, amount) {
  const locks = await client.lockSet([`readme/acct/${from}`, `readme/acct/${to}`], { ttl: 10, timeout: 5000 });
  try {
    const a = Number(await client.get(`readme/balance/${from}`));
    const b = Number(await client.get(`readme/balance/${to}`));
    // Written only while both locks are this set's (etcd checks every member in the same transaction).
    await client.put(`readme/balance/${from}`, String(a - amount), { ifHeld: locks });
    await client.put(`readme/balance/${to}`, String(b + amount), { ifHeld: locks });
  } finally {
    await locks.release(); // one transaction releases every member
  }
}

await client.put('readme/balance/1', '100');
await client.put('readme/balance/2', '100');
await Promise.all([transfer(1, 2, 30), transfer(2, 1, 5), transfer(1, 2, 10)]);
console.log(`balances: ${await client.get('readme/balance/1')} + ${await client.get('readme/balance/2')}`);

// Members may also read a read-write lock or take one of a semaphore's permits.
const job = await client.lockSet(['readme/acct/1', { name: 'readme/settings', mode: 'read' }, { name: 'readme/render', permits: 2 }], { timeout: 5000 });
const busy = await client.lockSet(['readme/acct/2', 'readme/acct/1'], { timeout: 0 }).catch((e) => e.code);
console.log(`held: ${job.members.map((m) => m.mode).join(', ')} (one token: ${job.fencingToken > 0n}); acct 2 and 1 meanwhile: ${busy}`);
await job.release(); // `await using job = ...` (Node 24+) releases at the end of the block

await client.delete('readme/balance/1');
await client.delete('readme/balance/2');
await client.close();
