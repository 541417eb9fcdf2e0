// Type-checked by test/types.test.js against the generated index.d.ts (not run).
import { Client, EtcdlockError, codes, type Lock, type WatchEvent, type LostReason, type TlsOptions } from 'etcdlock';

export async function demo(signal: AbortSignal): Promise<bigint> {
  const client = new Client({ endpoints: ['http://127.0.0.1:2379'], timeout: 5000 });
  const lock: Lock = await client.lock('orders', { ttl: 10, timeout: 5000, signal });
  const token: bigint = lock.fencingToken;
  const key: Buffer = lock.key;
  const held: boolean = lock.isHeld();
  const off: () => void = lock.onLost((reason: LostReason) => console.log(reason, key, held));
  off();
  const rev: bigint = await client.put('k', new Uint8Array([1]), { ifHeld: lock });
  const value: Buffer | null = await client.get(Buffer.from('k'));
  const existed: boolean = await client.delete('k');
  const lease = await client.lease(10);
  const id: bigint = lease.id;
  await client.put('k', 'v', { lease });
  await lease.revoke();
  const watch = client.watch('jobs/', { prefix: true, startRevision: rev });
  for await (const ev of watch) {
    const e: WatchEvent = ev;
    const r: bigint = e.revision;
    console.log(e.type === 'put' || e.type === 'delete', r, value, existed, id);
    watch.close();
  }
  try {
    await lock.release();
  } catch (err) {
    if (err instanceof EtcdlockError && err.code === codes.NOT_HELD) console.log(err.compactRevision);
  }
  await client.close();
  return token;
}

export async function secured(ca: string, cert: Buffer, key: Buffer): Promise<Client> {
  const tls: TlsOptions = { ca: [ca, cert], cert, key, serverName: 'etcd.example' };
  return Client.connect({ endpoints: ['https://10.0.0.1:2379'], tls, auth: { user: 'app', password: 'secret' } });
}
