// Type-checked by test/types.test.js against the generated index.d.ts (not run).
import {
  Client,
  EtcdlockError,
  codes,
  MAX_PERMITS,
  grpcEndpoint,
  grpcEndpointAddr,
  type Lock,
  type Leadership,
  type Leader,
  type WatchEvent,
  type LostReason,
  type TlsOptions,
  type Registration,
  type RegistrationLostReason,
  type Instance,
  type Instances,
  type Metrics,
} from 'etcdlock';

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

export async function registry(client: Client, signal: AbortSignal): Promise<bigint> {
  const reg: Registration = await client.register('svc/api', 'node-1', grpcEndpoint('10.0.0.7:50051'), { ttl: 10, replace: false, signal });
  const key: Buffer = reg.key;
  const lease: bigint | null = reg.leaseId;
  const up: boolean = reg.registered;
  const off: () => void = reg.onLost((reason: RegistrationLostReason) => console.log(reason, key, lease, up));
  off();
  reg.onRestored((leaseId: bigint) => console.log(leaseId.toString(16)));
  reg.onTakenOver(() => console.log('taken over'));
  const rev: bigint = await reg.update(Buffer.from('v2'));
  const now: Instances = await client.instances('svc/api');
  for await (const set of client.discover('svc/api', { signal })) {
    const first: Instance | undefined = set.instances[0];
    const addr: string | null = first ? grpcEndpointAddr(first.value) : null;
    console.log(first?.name.toString(), first?.lease, first?.modRevision, addr, set.revision, now.revision);
    break;
  }
  const m: Metrics = client.metrics();
  console.log(m.registrationsAlive, m.reregistrations.key_deleted, m.discoverySnapshots);
  await reg.close();
  return rev;
}
