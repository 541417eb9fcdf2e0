export type ClientOptions = {
    /**
     * etcd URLs like `http://127.0.0.1:2379` (a string may list several, comma-separated)
     */
    endpoints: string[] | string;
    /**
     * connect and per-request timeout in ms (default 5000)
     */
    timeout?: number;
    /**
     * overrides `timeout` for connecting
     */
    connectTimeout?: number;
    /**
     * overrides `timeout` for each request
     */
    requestTimeout?: number;
    /**
     * for etcd with authentication enabled
     */
    auth?: {
        user: string;
        password: string;
    };
    /**
     * requests in flight at once (default 256)
     */
    maxInFlight?: number;
    /**
     * for `https://` endpoints (without it they trust the system's roots)
     */
    tls?: TlsOptions;
    /**
     * the client's name, the `client` label of its metrics (any non-empty
     * text; default `etcdlock-<n>`, unique in the process)
     */
    name?: string;
};
/**
 * TLS settings for `https://` endpoints (giving them with `http://` endpoints is `INVALID_ARGUMENT`).
 */
export type TlsOptions = {
    /**
     * CA certificates that sign the members' certificates (default: the system's roots)
     */
    ca?: Pem | Pem[];
    /**
     * this client's certificate chain, for members that require client certificates (mTLS)
     */
    cert?: Pem;
    /**
     * the private key of `cert`
     */
    key?: Pem;
    /**
     * the name to check in the members' certificates instead of each endpoint's host
     */
    serverName?: string;
};
export type LockOptions = {
    /**
     * lease TTL in whole seconds (default 10)
     */
    ttl?: number;
    /**
     * ms to wait; 0 = try once (`WOULD_BLOCK` if taken); omitted = forever
     */
    timeout?: number;
    /**
     * aborting rejects with an AbortError and removes the queue key
     */
    signal?: AbortSignal;
    /**
     * stored in the queue key for `inspect()` to show (who holds or waits: a
     * host, a pid, a short text); at most 4096 bytes (`INVALID_ARGUMENT` otherwise); default empty,
     * as `etcdctl lock` stores
     */
    value?: Bytes;
};
export type SemaphoreOptions = {
    /**
     * permits in all, 1 to 1024; every participant of the name must give the same
     */
    permits: number;
    /**
     * permits this acquisition takes at once, 1 to `permits` (default 1): one key, one fencing token, all given back by `release()`; it waits at the head of the queue until that many are free, and later requests wait behind it
     */
    count?: number;
    /**
     * lease TTL in whole seconds (default 10)
     */
    ttl?: number;
    /**
     * ms to wait; 0 = try once (`WOULD_BLOCK` if no permit is free); omitted = forever
     */
    timeout?: number;
    /**
     * aborting rejects with an AbortError and removes the queue key
     */
    signal?: AbortSignal;
    /**
     * stored in the queue key for `inspect()` to show; at most 4096 bytes
     */
    value?: Bytes;
};
/**
 * Options of {@link Client#election} and {@link Client#rwlock}.
 */
export type HandleOptions = {
    /**
     * lease TTL in whole seconds of every acquisition (default 10)
     */
    ttl?: number;
};
/**
 * One acquisition in a lock's queue.
 */
export type QueueEntry = {
    /**
     * the queue key, `<name>/<lease hex>[-n]`
     */
    key: Buffer;
    /**
     * the key's create revision: its token once it holds
     */
    fencingToken: bigint;
    /**
     * the lease the key is bound to
     */
    lease: bigint;
    /**
     * seconds the lease has left on the server (null: gone)
     */
    ttl: number | null;
    /**
     * what the acquire attached (`lock(name, { value })`), an election's
     * proposal; empty for none
     */
    value: Buffer;
    /**
     * `'read'` or `'write'` for a read-write lock's key, `'permits=N'` for a
     * semaphore's of N (`'permits=N,count=K'` for an acquisition of K permits), `''` for a lock's
     * or an election's (the value comes without it)
     */
    mode: string;
};
/**
 * A lock's queue as etcd has it at one revision.
 */
export type LockState = {
    /**
     * the oldest key; null when the lock is free
     */
    holder: QueueEntry | null;
    /**
     * every key that holds, oldest first: the holder alone for a lock,
     * an election or a writer; up to N for a semaphore of N; the readers older than every writer
     */
    holders: QueueEntry[];
    /**
     * the keys that do not hold, in queue order
     */
    waiters: QueueEntry[];
    /**
     * the etcd revision the queue was read at
     */
    revision: bigint;
};
/**
 * A histogram read at one moment.
 */
export type HistogramSnapshot = {
    /**
     * how many were recorded
     */
    count: number;
    /**
     * their sum, in seconds
     */
    sum: number;
    /**
     * `[upper bound in seconds, cumulative count]`, increasing; `count` is the `+Inf` bucket
     */
    buckets: Array<[number, number]>;
};
/**
 * A client's metrics since it connected (`client.metrics()`).
 */
export type Metrics = {
    /**
     * acquires that took the lock
     */
    acquisitions: number;
    /**
     * acquires whose own timeout passed (`LOCK_TIMEOUT`)
     */
    lockTimeouts: number;
    /**
     * try-once acquires that found the lock busy (`WOULD_BLOCK`)
     */
    wouldBlock: number;
    /**
     * acquires that failed otherwise (aborted, closed, unreachable...)
     */
    acquireFailures: number;
    /**
     * releases that deleted the lock key
     */
    releases: number;
    /**
     * releases that rejected (not held any more, unreachable...)
     */
    releaseFailures: number;
    /**
     * held locks lost, by reason
     */
    losses: Record<LostReason, number>;
    /**
     * how long acquires that took the lock waited
     */
    lockWaitSeconds: HistogramSnapshot;
    /**
     * how long locks were held, until released or lost
     */
    lockHoldSeconds: HistogramSnapshot;
    /**
     * requests to etcd sent and not answered yet (now)
     */
    requestsInFlight: number;
    /**
     * request attempts after a request's first
     */
    requestRetries: number;
    /**
     * streams moved to the next member
     */
    streamReopens: Record<"keepalive" | "watch", number>;
    /**
     * times KV requests left a member that failed, went silent or had no leader
     */
    memberSwitches: number;
    /**
     * leases kept alive now (the shared lock leases too)
     */
    leasesAlive: number;
    /**
     * watches open now (also one per waiting acquire and held lock)
     */
    watchesOpen: number;
    /**
     * from each lease keepalive sent to its answer
     */
    keepaliveRttSeconds: HistogramSnapshot;
    /**
     * service registrations open now (`client.register()`, not closed or taken over)
     */
    registrationsAlive: number;
    /**
     * registrations lost and registered again, by reason
     */
    reregistrations: Record<RegistrationLostReason, number>;
    /**
     * instance sets delivered by `client.discover()` iterators
     */
    discoverySnapshots: number;
};
import type { Pem } from './args.js';
import type { Bytes } from './args.js';
import type { LostReason } from './lost.js';
import type { RegistrationLostReason } from './registration.js';
