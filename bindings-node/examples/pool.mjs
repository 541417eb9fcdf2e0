// ES module: a pool of named slots (GPUs): each holder gets ones nobody else holds; run with ETCDLOCK_ENDPOINTS set.
import { Client } from 'etcdlock';

const endpoints = (process.env.ETCDLOCK_ENDPOINTS || 'http://127.0.0.1:2379').split(',');
const client = await Client.connect({ endpoints });

// The slots live on this client's lease (TTL 10 s, kept alive while held): if this process
// dies, its slots rest 5 s after its lease ended before anyone gets them (a release frees them
// at once). Every participant must define the pool alike.
const gpus = client.pool('readme/gpus', { slots: ['gpu0', 'gpu1', 'gpu2'], ttl: 10, reuseDelay: 5000 });

const a = await gpus.acquire({ timeout: 5000 }); // one slot
const b = await gpus.acquire({ count: 2, timeout: 5000 }); // two at once
console.log(`a: ${a.slots}, b: ${b.slots.join(' + ')}`);
// Written only while a holds gpu0 (etcd checks it in the same transaction).
await client.put('readme/jobs/7/device', a.slots[0], { ifHeld: a });
const busy = await gpus.acquire({ timeout: 0 }).catch((e) => e.code);
console.log(`a fourth now: ${busy}`);

// Requests are served in order; this one waits until a slot is released.
const waiting = gpus.acquire({ owner: 'job-8', timeout: 5000 });
await a.release();
const c = await waiting;
console.log(`c: ${c.slots} (token ${c.tokens.gpu0 > a.tokens.gpu0 ? 'larger' : 'smaller'} than a's)`);
// With an owner, a retried acquire gets the holding it has instead of another slot.
console.log(`retried: ${(await gpus.acquire({ owner: 'job-8' })) === c}`);
console.log((await gpus.slots()).map((s) => `${s.id} ${s.state}${s.owner ? ` (${s.owner})` : ''}`).join(', '));

await b.release();
await c.release(); // `await using c = ...` (Node 24+) releases at the end of the block
await client.delete('readme/jobs/7/device');
await client.close();
