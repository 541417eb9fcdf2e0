// ES module: leader election, a semaphore and a read-write lock; run with ETCDLOCK_ENDPOINTS set.
import { Client } from 'etcdlock';

const endpoints = (process.env.ETCDLOCK_ENDPOINTS || 'http://127.0.0.1:2379').split(',');
const client = await Client.connect({ endpoints });

// One active instance: the same keys as Go's concurrency.Election and `etcdctl elect`.
const election = client.election('readme/leader', { ttl: 10 });
const observer = election.observe(); // the current leader (or null), then each change
console.log(`leader before: ${(await observer.next()).value}`);
const leadership = await election.campaign('node-1', { timeout: 5000 }); // LOCK_TIMEOUT on timeout
leadership.onLost((reason) => console.error(`no longer leader: ${reason}`));
await leadership.proclaim('node-1 ready'); // fenced: NOT_HELD once not leader
await client.put('readme/state', 'from the leader', { ifHeld: leadership });
const leader = await election.leader(); // { value, key, revision, lease }
console.log(`leader: ${leader.value}, token ${leader.revision === leadership.fencingToken ? 'ours' : 'other'}`);
await leadership.resign();
console.log(`leader after: ${await election.leader()}`);
observer.close();

// At most 3 holders at once, served in arrival order; each permit is a Lock.
const permit = await client.semaphore('readme/slots', { permits: 3, ttl: 10, timeout: 5000 });
await client.put('readme/state', 'from a permit holder', { ifHeld: permit });
await permit.release();

// Readers together, a writer alone; a reader never overtakes a writer that came first.
const rw = client.rwlock('readme/config', { ttl: 10 });
const [r1, r2] = [await rw.read({ timeout: 5000 }), await rw.read({ timeout: 5000 })];
console.log(`two readers at once: ${r1.isHeld() && r2.isHeld()}`);
await Promise.all([r1.release(), r2.release()]);
const w = await rw.write({ timeout: 5000 });
await client.put('readme/state', 'v2', { ifHeld: w });
await w.release();

console.log(`readme/state: ${await client.get('readme/state')}`);
await client.delete('readme/state');
await client.close();
