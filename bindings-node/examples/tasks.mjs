// ES module: a task queue (put, claim, ack with a result, nack, dead letters); run with ETCDLOCK_ENDPOINTS set.
import { Client } from 'etcdlock';

const endpoints = (process.env.ETCDLOCK_ENDPOINTS || 'http://127.0.0.1:2379').split(',');
const client = await Client.connect({ endpoints });

// A claim lives on this client's lease (TTL 10 s): if this process dies, its task is claimable
// again within 10 s. After 2 deliveries an item goes to the dead letters.
const q = client.queue('readme/jobs', { ttl: 10, maxAttempts: 2 });
await q.put('resize img-17', { id: 'img-17' });
await q.put('resize img-18', { id: 'img-18', priority: 5 }); // higher priority: claimed first
await q.put('resize again', { id: 'img-17' }); // an item with that id exists: changes nothing
console.log(`pending: ${(await q.stats()).pending}`);

// One claim after another; the loop ends when a claim has waited 500 ms for nothing.
for await (const task of q.tasks({ timeout: 500 })) {
  console.log(`claimed ${task.id}, attempt ${task.attempts}: ${task.payload}`);
  if (task.id === 'img-18') {
    await task.nack(); // the work failed: given back (or, after its last attempt, dead)
    continue;
  }
  // The result and the ack commit in one transaction, only while the claim holds.
  await task.ack({ puts: { [`readme/results/${task.id}`]: 'done' } });
}

console.log(`dead: ${(await q.dead()).map((d) => `${d.id} after ${d.attempts} attempts`)}`);
await q.requeueDead('img-18');
const task = await q.claim({ timeout: 5000 }); // WOULD_BLOCK with timeout 0 and nothing there
console.log(`requeued ${task.id}, attempt ${task.attempts}`);
await client.put('readme/results/img-18', 'done', { ifHeld: task }); // NOT_HELD once the claim is lost
await task.ack(); // `await using task = ...` (Node 24+) acks at the end of the block

for (const id of ['img-17', 'img-18']) {
  console.log(`readme/results/${id}: ${await client.get(`readme/results/${id}`)}`);
  await client.delete(`readme/results/${id}`);
}
await client.close();
