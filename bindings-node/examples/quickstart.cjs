// CommonJS: lock, write only while holding it, watch, lease; run with ETCDLOCK_ENDPOINTS set.
const { Client } = require('etcdlock');

async function main() {
  const endpoints = (process.env.ETCDLOCK_ENDPOINTS || 'http://127.0.0.1:2379').split(',');
  const client = new Client({ endpoints, timeout: 5000 });

  const watch = client.watch('demo/jobs/', { prefix: true });
  await watch.ready;

  const lock = await client.lock('demo/orders', { ttl: 10, timeout: 5000 });
  lock.onLost((reason) => console.error(`lost the lock: ${reason}`));
  console.log(`holding demo/orders, fencing token ${lock.fencingToken}`);
  // Written only if the lock is still held (etcd checks it in the same transaction).
  await client.put('demo/jobs/nightly', 'running', { ifHeld: lock });
  await lock.release();

  const lease = await client.lease(10);
  await client.put('demo/jobs/worker-1', 'alive', { lease });
  await lease.revoke(); // deletes demo/jobs/worker-1

  for await (const ev of watch) {
    console.log(`${ev.type} ${ev.key} @${ev.revision}`);
    if (ev.type === 'delete') break; // ends the loop and closes the watch
  }
  console.log((await client.get('demo/jobs/nightly')).toString());
  await client.close();
}

main().catch((err) => {
  console.error(`${err.code}: ${err.message}`);
  process.exitCode = 1;
});
