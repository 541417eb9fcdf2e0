// Type-checked by test/types.test.js against the generated index.d.ts (not run).
import { Client, EtcdlockError, codes, MAX_PERMITS, type Lock, type Leadership, type Leader, type WatchEvent, type LostReason, type TlsOptions } from 'etcdlock';

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

export async function recipes(client: Client, signal: AbortSignal): Promise<bigint> {
  const election = client.election('svc/leader', { ttl: 10 });
  const leadership: Leadership = await election.campaign('node-1', { timeout: 5000, signal });
  const lead: boolean = leadership.isLeader();
  const proclaimed: bigint = await leadership.proclaim(Buffer.from('node-1 ready'));
  await client.put('svc/state', 'v', { ifHeld: leadership });
  const leader: Leader | null = await election.leader();
  if (leader !== null) console.log(leader.value.toString(), leader.key, leader.revision === leadership.fencingToken, leader.lease);
  for await (const l of election.observe()) {
    const v: Buffer | undefined = l?.value;
    console.log(v, lead, proclaimed);
    break;
  }
  await leadership.resign();
  const permit: Lock = await client.semaphore('jobs/slots', { permits: Math.min(3, MAX_PERMITS), ttl: 10, timeout: 0, value: 'worker-1' });
  await permit.release();
  const rw = client.rwlock('config', { ttl: 10 });
  const read: Lock = await rw.read({ timeout: 1000, signal });
  await read.release();
  const write: Lock = await rw.write({ value: 'writer' });
  await write.put('config/data', 'v2');
  await write.release();
  return permit.fencingToken;
}
