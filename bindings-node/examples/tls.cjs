// A secured etcd: TLS, here with a client certificate (mTLS). PEM text as Buffers (or strings).
const fs = require('node:fs');
const { Client } = require('etcdlock');

async function main() {
  const env = process.env;
  const client = await Client.connect({
    endpoints: (env.ETCDLOCK_TLS_ENDPOINTS || 'https://etcd-1.example:2379,https://etcd-2.example:2379').split(','),
    tls: {
      ca: fs.readFileSync(env.ETCDLOCK_CA_FILE || '/etc/etcd/ca.pem'), // omit to trust the system's roots
      cert: fs.readFileSync(env.ETCDLOCK_CERT_FILE || '/etc/etcd/client.pem'), // client certificate (mTLS)
      key: fs.readFileSync(env.ETCDLOCK_KEY_FILE || '/etc/etcd/client.key'), // and its private key
      serverName: env.ETCDLOCK_SERVER_NAME, // check this name instead of the endpoint's host
    },
    timeout: 5000,
  });
  const lock = await client.lock('readme/tls', { ttl: 10, timeout: 5000 });
  await client.put('readme/tls-state', 'done', { ifHeld: lock });
  await lock.release();
  console.log(`readme/tls-state: ${await client.get('readme/tls-state')}`);
  await client.delete('readme/tls-state');
  await client.close();
}

main().catch((err) => {
  console.error(`${err.code}: ${err.message}`);
  process.exitCode = 1;
});
