// ES module: try-once and AbortSignal; run with ETCDLOCK_ENDPOINTS set.
import { Client } from 'etcdlock';

const endpoints = (process.env.ETCDLOCK_ENDPOINTS || 'http://127.0.0.1:2379').split(',');
const client = await Client.connect({ endpoints });

const first = await client.lock('demo/report', { timeout: 0 }); // try once
try {
  await client.lock('demo/report', { timeout: 0 });
} catch (err) {
  console.log(`second try: ${err.code}`); // WOULD_BLOCK: held by `first`
}

// Give up waiting after 200 ms; the queue entry is removed before the promise settles.
try {
  await client.lock('demo/report', { signal: AbortSignal.timeout(200) });
} catch (err) {
  console.log(`waiting: ${err.name}`); // AbortError
}

await first.release();
await client.close();
