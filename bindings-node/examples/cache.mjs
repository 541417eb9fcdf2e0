// ES module: a local copy of a prefix, kept in step with etcd; run with ETCDLOCK_ENDPOINTS set.
import { Client } from 'etcdlock';

const endpoints = (process.env.ETCDLOCK_ENDPOINTS || 'http://127.0.0.1:2379').split(',');
const client = await Client.connect({ endpoints });
await client.put('readme/config/a', '1');

const cache = await client.cache('readme/config/'); // loaded at one revision, then follows etcd
console.log(`a: ${cache.get('readme/config/a')}, ${cache.size} key(s)`); // local reads: no I/O
const events = cache.events(); // the changes from now on

const rev = await client.put('readme/config/b', '2');
await cache.waitFor(rev, { timeout: 5000 }); // read-your-writes: the copy is at rev or later
const { entries } = cache.snapshot(); // every key and value, at the snapshot's revision
console.log(`copy: ${entries.map((e) => `${e.key}=${e.value}`).join(', ')}`);

await client.delete('readme/config/a');
for await (const ev of events) {
  // 'put', 'delete' or 'resynced' (read again after a compaction), in revision order
  console.log(`${ev.type} ${ev.key}${ev.prevValue ? ` (was ${ev.prevValue})` : ''}`);
  if (ev.type === 'delete') break; // leaves the loop and closes the iterator
}

cache.close(); // `await using cache = ...` (Node 24+) closes it at the end of the block
await client.delete('readme/config/b');
await client.close();
