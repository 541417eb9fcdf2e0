// ESM entry: the same objects as the CommonJS entry (one native addon instance per process).
import etcdlock from './index.js';

export const { Client, Lock, Leadership, Election, Observer, RwLock, Lease, Watch, Cache, CacheEvents, Registration, Discovery, TaskQueue, Task, OnceSlot, Pool, PoolHolding, LockSet, Fence, StaleFence, EtcdlockError, AbortError, codes, logChannels, traceChannels, setCallerSpin, callerSpin, grpcEndpoint, grpcEndpointAddr, MAX_PERMITS, MAX_TASK_PAYLOAD_LEN, MAX_POOL_SLOTS, MAX_POOL_COUNT, MAX_LOCK_SET } = etcdlock;
export default etcdlock;
