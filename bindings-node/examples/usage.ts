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
  type TaskQueue,
  type Task,
  type QueueStats,
  type DeadTask,
  type OnceSlot,
  type OnceOptions,
  type Pool,
  type PoolHolding,
  type PoolOptions,
  type SlotInfo,
  LockSet,
  type SetMember,
  type SetMemberSpec,
  type LockSetOptions,
  MAX_LOCK_SET,
  MAX_TASK_PAYLOAD_LEN,
  MAX_POOL_SLOTS,
  MAX_POOL_COUNT,
  Fence,
  StaleFence,
  type FenceKind,
  type Cache,
  type CacheEvent,
  type CacheSnapshot,
} from 'etcdlock';
import { pg, sqlite, type PgClient, type SqliteDatabase } from 'etcdlock/fencing';

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
  const two: Lock = await client.semaphore('jobs/encoders', { permits: 4, count: 2, timeout: 5000 });
  await two.release();
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

export async function tasks(client: Client, signal: AbortSignal): Promise<bigint> {
  const q: TaskQueue = client.queue('jobs/resize', { ttl: 10, maxAttempts: 5 });
  const id: string = await q.put(Buffer.alloc(Math.min(16, MAX_TASK_PAYLOAD_LEN)), { id: 'img-17', priority: 1, delay: 500 });
  const task: Task = await q.claim({ timeout: 5000, signal, worker: 'host-a' });
  const payload: Buffer = task.payload;
  const token: bigint = task.fencingToken;
  const off: () => void = task.onLost((reason: LostReason) => console.log(reason, task.lostReason(), task.isHeld()));
  off();
  await client.put('results/img-17', 'ok', { ifHeld: task });
  const rev: bigint = await task.ack({ puts: { 'results/img-17': payload }, deletes: ['results/tmp'] });
  await task.ack({ puts: new Map([['a', 'b']]) }).catch(() => {});
  await task.ack({ puts: [['a', new Uint8Array([1])]] }).catch(() => {});
  for await (const t of q.tasks({ timeout: 1000, signal })) {
    console.log(t.id, t.attempts, t.priority);
    await t.nack({ delay: 2000 });
  }
  const s: QueueStats = await q.stats();
  const dead: DeadTask[] = await q.dead();
  const requeued: boolean = await q.requeueDead(dead[0]?.id ?? id);
  const deleted: boolean = await q.deleteDead(id);
  console.log(s.pending, s.pendingByPriority[1], s.revision, requeued, deleted, q.name.toString());
  await task[Symbol.asyncDispose]();
  return rev + token;
}

export async function once(client: Client): Promise<bigint> {
  const options: OnceOptions = { every: 3_600_000, ttl: 10, at: new Date(), keepPeriods: 3 };
  const slot: OnceSlot | null = await client.once('reports/hourly', options);
  if (slot === null) return 0n;
  const index: number = slot.slot;
  const off: () => void = slot.onLost((reason: LostReason) => console.log(reason, slot.lostReason(), slot.isHeld()));
  off();
  try {
    console.log(index);
    await slot.done();
  } catch {
    await slot.release();
  }
  const fenced: bigint = await client.put('reports/last', 'x', { ifHeld: slot });
  console.log(fenced);
  const later = await client.once('reports/hourly', { every: 3_600_000, at: Date.now() });
  if (later) await later[Symbol.asyncDispose]();
  return slot.fencingToken;
}

export async function pools(client: Client, signal: AbortSignal): Promise<bigint> {
  const options: PoolOptions = { slots: ['gpu0', 'gpu1'], ttl: 10, reuseDelay: 5000 };
  const gpus: Pool = client.pool('gpus', options);
  const workers: Pool = client.pool('snowflake/workers', { size: Math.min(1024, MAX_POOL_SLOTS) });
  const held: PoolHolding = await gpus.acquire({ count: Math.min(2, MAX_POOL_COUNT), owner: 'job-7', timeout: 5000, signal });
  const ids: string[] = held.slots;
  const tokens: Record<string, bigint> = held.tokens;
  const token: bigint = held.fencingToken;
  const owner: string | null = held.owner;
  const off: () => void = held.onLost((reason: LostReason) => console.log(reason, held.lostReason(), held.isHeld(), held.leaseId));
  off();
  const rev: bigint = await client.put(`jobs/7/device`, ids[0] ?? '', { ifHeld: held });
  const after: string[] = await gpus.addSlots(['gpu2']);
  await gpus.removeSlots(['gpu2']);
  const states: SlotInfo[] = await gpus.slots();
  for (const s of states) console.log(s.id, s.state, s.token, s.lease, s.ttl, s.acquisition, s.owner);
  const same: SlotInfo[] | null = await client.inspectPool('gpus');
  console.log(tokens.gpu0, owner, after, same, gpus.name.toString());
  await held.release();
  const id = await workers.acquire();
  await id[Symbol.asyncDispose]();
  return rev + token;
}

export async function lockSets(client: Client, signal: AbortSignal): Promise<bigint> {
  const members: SetMemberSpec[] = ['acct/1', Buffer.from('acct/2'), { name: 'cfg', mode: 'read' }, { name: 'gpus', permits: 4 }];
  const options: LockSetOptions = { ttl: 10, timeout: 5000, signal, value: 'host-a' };
  const locks: LockSet = await client.lockSet(members.slice(0, MAX_LOCK_SET), options);
  const token: bigint = locks.fencingToken;
  const names: Buffer[] = locks.names;
  const all: SetMember[] = locks.members;
  const keys: Buffer[] = locks.keys;
  const off: () => void = locks.onLost((reason: LostReason) => console.log(reason, locks.lostReason(), locks.isHeld(), locks.leaseId));
  off();
  console.log(names, keys, all.map((m) => [m.name, m.mode, m.permits]));
  const rev: bigint = await client.put('ledger/acct-1', '95', { ifHeld: locks });
  await locks.put('ledger/acct-2', '105');
  await locks.release();
  const again = await client.lockSet([{ name: 'jobs/a', mode: 'write' }]);
  await again[Symbol.asyncDispose]();
  return rev + token;
}

export async function fences(client: Client, lock: Lock, task: Task, db: PgClient, file: SqliteDatabase): Promise<boolean> {
  const f: Fence = await lock.fence();
  const kind: FenceKind = f.kind;
  const parts: [Buffer, bigint, bigint, string] = [f.name, f.token, f.cluster, f.resource];
  const again: Fence = Fence.parse(String(f));
  const claim: Fence = await task.fence();
  await pg.install(db);
  try {
    const mark: bigint = await pg.check(db, f, 'accounts/7');
    console.log(mark, sqlite.check(file, claim), kind, parts, again.equals(f));
  } catch (e) {
    if (e instanceof StaleFence && e.code === 'NOT_HELD') return false;
    throw e;
  }
  sqlite.install(file);
  return (await client.checkFence(f)) && (await client.checkFence(new Fence('q', 'accounts/7', 5n, f.cluster).toString()));
}

export async function cached(client: Client, signal: AbortSignal): Promise<bigint> {
  const cache: Cache = await client.cache('config/');
  const value: Buffer | null = cache.get('config/a');
  const snap: CacheSnapshot = cache.snapshot();
  const keys: Buffer[] = snap.entries.map((e) => e.key);
  await cache.waitFor(await client.put('config/a', '1'), { timeout: 5000, signal });
  await cache.waitFor(5);
  for await (const ev of cache.events({ signal })) {
    const e: CacheEvent = ev;
    const prev: Buffer | undefined = e.prevValue;
    console.log(e.type === 'put' || e.type === 'delete' || e.type === 'resynced', e.key, e.value, prev, value, keys);
    break;
  }
  const size: number = cache.size;
  const at: bigint = cache.revision;
  cache.close();
  await cache[Symbol.asyncDispose]();
  return at + BigInt(size) + snap.revision;
}
