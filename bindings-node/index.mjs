// ESM entry: the same objects as the CommonJS entry (one native addon instance per process).
import etcdlock from './index.js';

export const { Client, Lock, Leadership, Election, Observer, RwLock, Lease, Watch, Registration, Discovery, EtcdlockError, AbortError, codes, logChannels, setCallerSpin, callerSpin, grpcEndpoint, grpcEndpointAddr, MAX_PERMITS } = etcdlock;
export default etcdlock;
