// ESM entry: the same objects as the CommonJS entry (one native addon instance per process).
import etcdlock from './index.js';

export const { Client, Lock, Lease, Watch, EtcdlockError, AbortError, codes, logChannels, setCallerSpin, callerSpin } = etcdlock;
export default etcdlock;
