// ESM entry: the same objects as the CommonJS entry (one native addon instance per process).
import etcdlock from './index.js';

export const { Client, Lock, Leadership, Election, Observer, RwLock, Lease, Watch, Registration, Discovery, TaskQueue, Task, OnceSlot, EtcdlockError, AbortError, codes, logChannels, setCallerSpin, callerSpin, grpcEndpoint, grpcEndpointAddr, MAX_PERMITS, MAX_TASK_PAYLOAD_LEN } = etcdlock;
export default etcdlock;
