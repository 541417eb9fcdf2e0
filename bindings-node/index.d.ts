/**
 * Keys, values and names: a string (UTF-8) or bytes.
 */
export type Bytes = string | Uint8Array;
export type ErrorCode = keyof typeof codes;
/**
 * PEM text: a string, or its bytes (as `tls.connect` takes `ca`, `cert` and `key`).
 */
export type Pem = string | Uint8Array;
export type LostReason = "expired" | "revoked" | "key_deleted" | "closed";
/**
 * An election's leader as etcd has it: the candidate with the lowest create revision.
 */
export type Leader = {
    /**
     * the proposal: the value given to `campaign()` or the last `proclaim()`
     */
    value: Buffer;
    /**
     * the leader's key, `<name>/<lease hex>`
     */
    key: Buffer;
    /**
     * the key's create revision: the leader's fencing token, greater than every earlier leader's
     */
    revision: bigint;
    /**
     * the lease the key is bound to
     */
    lease: bigint;
};
export type CampaignOptions = {
    /**
     * ms to wait; 0 = only if nobody leads or campaigns (`WOULD_BLOCK` otherwise); omitted = forever
     */
    timeout?: number;
    /**
     * aborting rejects with an AbortError and removes the candidate's key
     */
    signal?: AbortSignal;
};
export type AcquireOptions = {
    /**
     * ms to wait; 0 = try once (`WOULD_BLOCK` if taken); omitted = forever
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
 * One change seen by a watch.
 */
export type WatchEvent = {
    type: "put" | "delete";
    key: Buffer;
    /**
     * empty for deletes
     */
    value: Buffer;
    /**
     * the revision of this change
     */
    revision: bigint;
    createRevision: bigint;
    version: bigint;
    /**
     * 0n when none
     */
    lease: bigint;
    /**
     * with `prevKv: true`
     */
    prevValue?: Buffer;
};
/**
 * Why a registration was lost (it is being registered again by then).
 */
export type RegistrationLostReason = "expired" | "revoked" | "key_deleted";
/**
 * One registered instance, as etcd has it.
 */
export type Instance = {
    /**
     * the instance's name: its key after `<service>/` (`name.toString()` for text)
     */
    name: Buffer;
    /**
     * what it registered (for Go gRPC clients: {@link grpcEndpoint}'s value)
     */
    value: Buffer;
    /**
     * the lease its key is on (0n for a key put without one, e.g. by hand)
     */
    lease: bigint;
    /**
     * the revision of the registration's latest put
     */
    modRevision: bigint;
};
/**
 * A service's instances at one revision.
 */
export type Instances = {
    /**
     * ordered by name (bytewise)
     */
    instances: Instance[];
    /**
     * the etcd revision this set is the state at
     */
    revision: bigint;
};
export type RegisterOptions = {
    /**
     * lease TTL in whole seconds (default 10): how long the instance stays
     * listed after this process stops without closing it
     */
    ttl?: number;
    /**
     * take the name over if another registrant holds it (whose
     * registration then ends with 'takenOver'); without it that is `WOULD_BLOCK`
     */
    replace?: boolean;
    /**
     * aborting while registering rejects with an AbortError and
     * leaves nothing; aborting later closes the registration (as `server.listen({ signal })` closes
     * a server)
     */
    signal?: AbortSignal;
};
export type DiscoverOptions = {
    /**
     * aborting closes the discovery: a pending or later `next()`
     * rejects with an AbortError (so a `for await` loop throws it)
     */
    signal?: AbortSignal;
};
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
     * holders at most, 1 to 1024; every participant of the name must give the same
     */
    permits: number;
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
     * semaphore's of N, `''` for a lock's or an election's (the value comes without it)
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
export type WatchOptions = {
    /**
     * watch every key that starts with `key`
     */
    prefix?: boolean;
    /**
     * first revision to deliver (default: changes from now on)
     */
    startRevision?: bigint | number;
    /**
     * include each event's previous value as `prevValue`
     */
    prevKv?: boolean;
};
/**
 * @typedef {object} ClientOptions
 * @property {string[] | string} endpoints etcd URLs like `http://127.0.0.1:2379` (a string may list several, comma-separated)
 * @property {number} [timeout] connect and per-request timeout in ms (default 5000)
 * @property {number} [connectTimeout] overrides `timeout` for connecting
 * @property {number} [requestTimeout] overrides `timeout` for each request
 * @property {{ user: string, password: string }} [auth] for etcd with authentication enabled
 * @property {number} [maxInFlight] requests in flight at once (default 256)
 * @property {TlsOptions} [tls] for `https://` endpoints (without it they trust the system's roots)
 */
/**
 * TLS settings for `https://` endpoints (giving them with `http://` endpoints is `INVALID_ARGUMENT`).
 * @typedef {object} TlsOptions
 * @property {Pem | Pem[]} [ca] CA certificates that sign the members' certificates (default: the system's roots)
 * @property {Pem} [cert] this client's certificate chain, for members that require client certificates (mTLS)
 * @property {Pem} [key] the private key of `cert`
 * @property {string} [serverName] the name to check in the members' certificates instead of each endpoint's host
 */
/**
 * @typedef {object} LockOptions
 * @property {number} [ttl] lease TTL in whole seconds (default 10)
 * @property {number} [timeout] ms to wait; 0 = try once (`WOULD_BLOCK` if taken); omitted = forever
 * @property {AbortSignal} [signal] aborting rejects with an AbortError and removes the queue key
 * @property {Bytes} [value] stored in the queue key for `inspect()` to show (who holds or waits: a
 *   host, a pid, a short text); at most 4096 bytes (`INVALID_ARGUMENT` otherwise); default empty,
 *   as `etcdctl lock` stores
 */
/**
 * @typedef {object} SemaphoreOptions
 * @property {number} permits holders at most, 1 to 1024; every participant of the name must give the same
 * @property {number} [ttl] lease TTL in whole seconds (default 10)
 * @property {number} [timeout] ms to wait; 0 = try once (`WOULD_BLOCK` if no permit is free); omitted = forever
 * @property {AbortSignal} [signal] aborting rejects with an AbortError and removes the queue key
 * @property {Bytes} [value] stored in the queue key for `inspect()` to show; at most 4096 bytes
 */
/**
 * Options of {@link Client#election} and {@link Client#rwlock}.
 * @typedef {object} HandleOptions
 * @property {number} [ttl] lease TTL in whole seconds of every acquisition (default 10)
 */
/**
 * One acquisition in a lock's queue.
 * @typedef {object} QueueEntry
 * @property {Buffer} key the queue key, `<name>/<lease hex>[-n]`
 * @property {bigint} fencingToken the key's create revision: its token once it holds
 * @property {bigint} lease the lease the key is bound to
 * @property {number | null} ttl seconds the lease has left on the server (null: gone)
 * @property {Buffer} value what the acquire attached (`lock(name, { value })`), an election's
 *   proposal; empty for none
 * @property {string} mode `'read'` or `'write'` for a read-write lock's key, `'permits=N'` for a
 *   semaphore's of N, `''` for a lock's or an election's (the value comes without it)
 */
/**
 * A lock's queue as etcd has it at one revision.
 * @typedef {object} LockState
 * @property {QueueEntry | null} holder the oldest key; null when the lock is free
 * @property {QueueEntry[]} holders every key that holds, oldest first: the holder alone for a lock,
 *   an election or a writer; up to N for a semaphore of N; the readers older than every writer
 * @property {QueueEntry[]} waiters the keys that do not hold, in queue order
 * @property {bigint} revision the etcd revision the queue was read at
 */
/**
 * A histogram read at one moment.
 * @typedef {object} HistogramSnapshot
 * @property {number} count how many were recorded
 * @property {number} sum their sum, in seconds
 * @property {Array<[number, number]>} buckets `[upper bound in seconds, cumulative count]`, increasing; `count` is the `+Inf` bucket
 */
/**
 * A client's metrics since it connected (`client.metrics()`).
 * @typedef {object} Metrics
 * @property {number} acquisitions acquires that took the lock
 * @property {number} lockTimeouts acquires whose own timeout passed (`LOCK_TIMEOUT`)
 * @property {number} wouldBlock try-once acquires that found the lock busy (`WOULD_BLOCK`)
 * @property {number} acquireFailures acquires that failed otherwise (aborted, closed, unreachable...)
 * @property {number} releases releases that deleted the lock key
 * @property {number} releaseFailures releases that rejected (not held any more, unreachable...)
 * @property {Record<LostReason, number>} losses held locks lost, by reason
 * @property {HistogramSnapshot} lockWaitSeconds how long acquires that took the lock waited
 * @property {HistogramSnapshot} lockHoldSeconds how long locks were held, until released or lost
 * @property {number} requestsInFlight requests to etcd sent and not answered yet (now)
 * @property {number} requestRetries request attempts after a request's first
 * @property {Record<'keepalive' | 'watch', number>} streamReopens streams moved to the next member
 * @property {number} memberSwitches times KV requests left a member that failed, went silent or had no leader
 * @property {number} leasesAlive leases kept alive now (the shared lock leases too)
 * @property {number} watchesOpen watches open now (also one per waiting acquire and held lock)
 * @property {HistogramSnapshot} keepaliveRttSeconds from each lease keepalive sent to its answer
 * @property {number} registrationsAlive service registrations open now (`client.register()`, not closed or taken over)
 * @property {Record<RegistrationLostReason, number>} reregistrations registrations lost and registered again, by reason
 * @property {number} discoverySnapshots instance sets delivered by `client.discover()` iterators
 */
/**
 * @typedef {object} WatchOptions
 * @property {boolean} [prefix] watch every key that starts with `key`
 * @property {bigint | number} [startRevision] first revision to deliver (default: changes from now on)
 * @property {boolean} [prevKv] include each event's previous value as `prevValue`
 */
/**
 * A connection to an etcd cluster. The constructor returns at once and connects in the
 * background; every call waits for the connection (`await client.ready`, or use
 * `await Client.connect(options)`, to see connection errors up front).
 */
export class Client {
    /**
     * Connects and resolves once etcd answered (rejects `UNAVAILABLE`, `AUTH`, `INVALID_ARGUMENT`).
     * @param {ClientOptions} options
     * @returns {Promise<Client>}
     */
    static connect(options: ClientOptions): Promise<Client>;
    /** @param {ClientOptions} options */
    constructor(options: ClientOptions);
    /** Resolves once connected; rejects with the connection error. @returns {Promise<void>} */
    get ready(): Promise<void>;
    /**
     * Acquires the fair (FIFO) lock `name`; resolves once it is held.
     * Rejects `LOCK_TIMEOUT` (timeout passed), `WOULD_BLOCK` (timeout 0 and taken), an AbortError
     * (signal aborted), `CLOSED`, `UNAVAILABLE`; in every case the queue key is gone by then.
     * @param {Bytes} name
     * @param {LockOptions} [options]
     * @returns {Promise<Lock>}
     */
    lock(name: Bytes, options?: LockOptions): Promise<Lock>;
    /**
     * Takes one of `permits` of the fair semaphore `name` (at most that many holders at once,
     * across every client, served in arrival order); resolves to the held {@link Lock} (its own
     * fencing token, `onLost`, `ifHeld` guarded writes, `release()`). Every participant of the
     * name must give the same `permits`: one that gives another rejects `INVALID_ARGUMENT`
     * (naming the count in use) and leaves nothing; the count can change once nobody holds or
     * waits. Otherwise rejects as `lock()` does.
     * @param {Bytes} name
     * @param {SemaphoreOptions} options
     * @returns {Promise<Lock>}
     */
    semaphore(name: Bytes, options: SemaphoreOptions): Promise<Lock>;
    /**
     * The read-write lock `name`: `read(options)` and `write(options)` resolve to a held
     * {@link Lock}, with `lock()`'s options except `ttl`, which is given here. Throws
     * `INVALID_ARGUMENT` for a bad name or TTL; sends nothing.
     * @param {Bytes} name
     * @param {HandleOptions} [options]
     * @returns {RwLock}
     */
    rwlock(name: Bytes, options?: HandleOptions): RwLock;
    /**
     * The election `name` (candidates' keys on this client's shared lease of `ttl` seconds):
     * `campaign(value, options)`, `leader()`, `observe()`. Shares its keys with etcd's Go
     * `concurrency.Election` and `etcdctl elect`. Throws `INVALID_ARGUMENT` for a bad name or
     * TTL; sends nothing.
     * @param {Bytes} name
     * @param {HandleOptions} [options]
     * @returns {Election}
     */
    election(name: Bytes, options?: HandleOptions): Election;
    /**
     * The queue of lock `name` as etcd has it now, whoever holds or waits (this client, another,
     * `etcdctl lock`): the holder (null when free) and the waiters in order. Changes nothing.
     * @param {Bytes} name
     * @returns {Promise<LockState>}
     */
    inspect(name: Bytes): Promise<LockState>;
    /**
     * This client's metrics since it connected: counts of acquisitions, timeouts, busy tries,
     * failures, releases and failed releases, losses by reason, and the wait and hold histograms
     * (seconds). Synchronous: it reads counters in memory and sends nothing; zeros before the
     * client is connected, and still readable after `close()`.
     * @returns {Metrics}
     */
    metrics(): Metrics;
    /**
     * The same metrics in the Prometheus text format (`etcdlock_lock_acquisitions_total`,
     * `etcdlock_lock_wait_seconds` ...), for a `/metrics` endpoint.
     * @returns {string}
     */
    metricsText(): string;
    /**
     * Grants a lease of `ttl` seconds, kept alive in the background until revoked.
     * @param {number} ttl
     * @returns {Promise<Lease>}
     */
    lease(ttl: number): Promise<Lease>;
    /**
     * Writes `value` at `key`. With `lease`, the key is deleted when the lease ends. With
     * `ifHeld: lock`, the write happens only if that lock is still held (checked by etcd in the
     * same transaction) and rejects `NOT_HELD`, writing nothing, otherwise.
     * @param {Bytes} key
     * @param {Bytes} value
     * @param {{ lease?: Lease, ifHeld?: Lock }} [options] `ifHeld`: a lock, a permit, a read or write, or a leadership
     * @returns {Promise<bigint>} the revision of the write
     */
    put(key: Bytes, value: Bytes, options?: {
        lease?: Lease;
        ifHeld?: Lock;
    }): Promise<bigint>;
    /**
     * The value at `key`, or null.
     * @param {Bytes} key
     * @returns {Promise<Buffer | null>}
     */
    get(key: Bytes): Promise<Buffer | null>;
    /**
     * Deletes `key`; resolves whether it existed.
     * @param {Bytes} key
     * @returns {Promise<boolean>}
     */
    delete(key: Bytes): Promise<boolean>;
    /**
     * Watches `key` (or every key under it with `prefix: true`). Returns at once; iterate it with
     * `for await`. `await watch.ready` to know etcd has confirmed it.
     * @param {Bytes} key
     * @param {WatchOptions} [options]
     * @returns {Watch}
     */
    watch(key: Bytes, options?: WatchOptions): Watch;
    /**
     * Registers `instance` of `service`: puts `<service>/<instance>` = `value` on a lease of its
     * own and keeps it there (registered again on a new lease whenever it is lost) until
     * {@link Registration#close}, the client's close or process exit. Resolves once registered.
     * Rejects `WOULD_BLOCK` if another registrant holds the name (unless `replace: true`),
     * `INVALID_ARGUMENT` for an empty service or instance name, a service ending with `/`, an
     * instance with `/` or NUL, a value over 4096 bytes, a bad `ttl`; `CLOSED`, `UNAVAILABLE`;
     * an AbortError if `signal` fired. Nothing is left in etcd when it rejects.
     * @param {Bytes} service the service's name, e.g. `svc/api` (instances are the keys under `<service>/`)
     * @param {Bytes} instance the instance's name, e.g. `node-1` (no `/`)
     * @param {Bytes} value what it registers (an address, JSON, {@link grpcEndpoint}'s value); at most 4096 bytes
     * @param {RegisterOptions} [options]
     * @returns {Promise<Registration>}
     */
    register(service: Bytes, instance: Bytes, value: Bytes, options?: RegisterOptions): Promise<Registration>;
    /**
     * The instances of `service` now (one read), whoever registered them (this client, another,
     * Go's endpoints manager), ordered by name.
     * @param {Bytes} service
     * @returns {Promise<Instances>}
     */
    instances(service: Bytes): Promise<Instances>;
    /**
     * Follows the instances of `service`: an async iterable of {@link Instances}, the current set
     * first, then the whole set after each change. Returns at once and sends nothing until
     * iterated; throws `INVALID_ARGUMENT` for a bad service name.
     * @param {Bytes} service
     * @param {DiscoverOptions} [options]
     * @returns {Discovery}
     */
    discover(service: Bytes, options?: DiscoverOptions): Discovery;
    /**
     * Closes the client: pending calls reject with `CLOSED`, its leases are revoked (so its locks
     * are released and their `onLost` callbacks get 'closed'). Idempotent.
     * @returns {Promise<void>}
     */
    close(): Promise<void>;
    /** Whether close() was called. */
    get closed(): boolean;
    /** `await using client = new Client(...)` closes it. */
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
/** @typedef {'expired' | 'revoked' | 'key_deleted' | 'closed'} LostReason */
/**
 * A held lock, from {@link Client#lock}. Release it with {@link Lock#release} (or `await using`).
 * A Lock that is dropped without release stays held until its client is closed or the process
 * exits: garbage collection never releases it behind your back.
 */
export class Lock {
    /**
     * Not constructed directly: {@link Client#lock} returns one (protected: {@link Leadership} is one too).
     * @protected
     * @param {any} nativeLock
     * @param {Client} client
     */
    protected constructor();
    /** The fencing token: strictly greater than every earlier holder's (create revision of the key). */
    get fencingToken(): bigint;
    /** This holder's queue key in etcd (`<name>/<lease hex>`). */
    get key(): Buffer<ArrayBuffer>;
    /** ID of the lease the key is attached to, shared by the client's locks with the same TTL. @type {bigint} */
    get leaseId(): bigint;
    /**
     * Cheap local check: not released, not lost, lease not past its conservative deadline.
     * @returns {boolean}
     */
    isHeld(): boolean;
    /** Why the lock was lost, or null. @returns {LostReason | null} */
    lostReason(): LostReason | null;
    /**
     * Calls `cb(reason)` once, on the JS thread, when the lock is lost (not when it is released);
     * at once if it already is. Does not keep the process alive. Returns a function that removes `cb`.
     * @param {(reason: LostReason) => void} cb
     * @returns {() => void}
     */
    onLost(cb: (reason: LostReason) => void): () => void;
    /**
     * Releases the lock (fenced: deletes the key only if it is still this acquisition's).
     * Rejects with `NOT_HELD` if it was already released or lost.
     * @returns {Promise<void>}
     */
    release(): Promise<void>;
    /**
     * Writes `value` at `key` only if this lock is still held (atomically checked by etcd);
     * rejects with `NOT_HELD`, writing nothing, otherwise. Same as `client.put(key, value, { ifHeld: lock })`.
     * @param {Bytes} key
     * @param {Bytes} value
     * @param {{ lease?: Lease }} [options]
     * @returns {Promise<bigint>} the revision of the write
     */
    put(key: Bytes, value: Bytes, options?: {
        lease?: Lease;
    }): Promise<bigint>;
    /** `await using lock = await client.lock(...)` releases it (unless already released). */
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
/**
 * An election's leader as etcd has it: the candidate with the lowest create revision.
 * @typedef {object} Leader
 * @property {Buffer} value the proposal: the value given to `campaign()` or the last `proclaim()`
 * @property {Buffer} key the leader's key, `<name>/<lease hex>`
 * @property {bigint} revision the key's create revision: the leader's fencing token, greater than every earlier leader's
 * @property {bigint} lease the lease the key is bound to
 */
/**
 * Leading an election, from {@link Election#campaign}: a {@link Lock} that is held while this
 * candidate leads (fencing token, `onLost`, `ifHeld` guarded writes), plus `proclaim()` and
 * `resign()`. `await using` resigns at the end of the block.
 */
export class Leadership extends Lock {
    /**
     * Cheap local check: still leading (not resigned, not known lost). Same as `isHeld()`.
     * @returns {boolean}
     */
    isLeader(): boolean;
    /**
     * Replaces the leader's value (what `leader()`, observers and `etcdctl elect -l` see), only
     * while still leading: rejects `NOT_HELD`, writing nothing, otherwise.
     * @param {Bytes} value at most 4096 bytes
     * @returns {Promise<bigint>} the revision of the write
     */
    proclaim(value: Bytes): Promise<bigint>;
    /**
     * Steps down (fenced: deletes the leader's key only if it is still this one's; the next
     * candidate leads). Rejects `NOT_HELD` if already resigned or lost. Same as `release()`.
     * @returns {Promise<void>}
     */
    resign(): Promise<void>;
}
/**
 * @typedef {object} CampaignOptions
 * @property {number} [timeout] ms to wait; 0 = only if nobody leads or campaigns (`WOULD_BLOCK` otherwise); omitted = forever
 * @property {AbortSignal} [signal] aborting rejects with an AbortError and removes the candidate's key
 */
/**
 * The election `name`, from {@link Client#election}: campaign, read the leader, observe it.
 * Candidates are queue keys of the fair lock (`<name>/<lease hex>`, the proposal as the value),
 * the same keys as etcd's Go `concurrency.Election` and `etcdctl elect`. Creating it sends
 * nothing.
 */
export class Election {
    /**
     * Not constructed directly: {@link Client#election} returns one.
     * @private
     * @param {Client} client
     * @param {Buffer} name
     * @param {number} ttl
     */
    private constructor();
    /** The election's name. @type {Buffer} */
    get name(): Buffer;
    /**
     * Waits to lead, proposing `value`; resolves to the {@link Leadership}. Rejects
     * `LOCK_TIMEOUT` (timeout passed), `WOULD_BLOCK` (timeout 0 and someone leads or
     * campaigns), `LOCK_LOST` (this candidate's lease or key went while it waited), an
     * AbortError (signal aborted), `CLOSED`; in every case the candidate's key is gone by then.
     * @param {Bytes} value the proposal, at most 4096 bytes
     * @param {CampaignOptions} [options]
     * @returns {Promise<Leadership>}
     */
    campaign(value: Bytes, options?: CampaignOptions): Promise<Leadership>;
    /**
     * The current leader, or null when nobody campaigns. Changes nothing.
     * @returns {Promise<Leader | null>}
     */
    leader(): Promise<Leader | null>;
    /**
     * Follows the leader: an async iterable of {@link Leader} (or null when nobody leads),
     * starting with the current state, then one per change (a new leader, a proclamation, null
     * when the last candidate goes; a new candidate behind the leader is no change), across
     * reconnects and compaction. Ends when closed (`close()`, leaving a `for await` loop) or when
     * the client closes. Sends nothing until iterated.
     * @returns {Observer}
     */
    observe(): Observer;
    #private;
}
/**
 * Leader changes of an election, from {@link Election#observe}: `for await (const leader of
 * observer)`, each a {@link Leader} or null (no leader). Changes that come faster than they are
 * read may be merged into the latest state, which is never skipped.
 * @implements {AsyncIterableIterator<Leader | null>}
 */
export class Observer implements AsyncIterableIterator<Leader | null> {
    /**
     * Not constructed directly: {@link Election#observe} returns one.
     * @private
     * @param {Promise<any>} nativeObserver
     */
    private constructor();
    /**
     * The next change (the current leader on the first call); done once closed or the client
     * closed. Rejects `CLOSED` if the client was closed before the observer started.
     * @returns {Promise<IteratorResult<Leader | null, undefined>>}
     */
    next(): Promise<IteratorResult<Leader | null, undefined>>;
    /**
     * Ends a `for await` loop early: closes the observer.
     * @returns {Promise<IteratorReturnResult<undefined>>}
     */
    return(): Promise<IteratorReturnResult<undefined>>;
    /** Stops observing; a pending `next()` resolves done. Idempotent. */
    close(): void;
    [Symbol.asyncIterator](): this;
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
/**
 * @typedef {object} AcquireOptions
 * @property {number} [timeout] ms to wait; 0 = try once (`WOULD_BLOCK` if taken); omitted = forever
 * @property {AbortSignal} [signal] aborting rejects with an AbortError and removes the queue key
 * @property {Bytes} [value] stored in the queue key for `inspect()` to show; at most 4096 bytes
 */
/**
 * The read-write lock `name`, from {@link Client#rwlock}: readers hold together, a writer
 * alone, served in arrival order (a reader never overtakes a writer that queued first). A
 * plain `client.lock(name)` (or `etcdctl lock`) on the same name counts as a writer. Creating it
 * sends nothing.
 */
export class RwLock {
    /**
     * Not constructed directly: {@link Client#rwlock} returns one.
     * @private
     * @param {Client} client
     * @param {Buffer} name
     * @param {number} ttl
     */
    private constructor();
    /** The lock's name. @type {Buffer} */
    get name(): Buffer;
    /**
     * Acquires a read; resolves to the held {@link Lock} once no writer holds or waits ahead of
     * it. Rejects as `client.lock()` does.
     * @param {AcquireOptions} [options]
     * @returns {Promise<Lock>}
     */
    read(options?: AcquireOptions): Promise<Lock>;
    /**
     * Acquires the write; resolves to the held {@link Lock} once everyone ahead of it is gone.
     * Rejects as `client.lock()` does.
     * @param {AcquireOptions} [options]
     * @returns {Promise<Lock>}
     */
    write(options?: AcquireOptions): Promise<Lock>;
    #private;
}
/**
 * A lease from {@link Client#lease}, kept alive in the background until revoked, lost, or its
 * client is closed. Dropping the object does not revoke it.
 */
export class Lease {
    /**
     * Not constructed directly: {@link Client#lease} returns one.
     * @private
     * @param {any} nativeLease
     * @param {Client} client
     */
    private constructor();
    /** The lease ID. */
    get id(): bigint;
    /** The TTL etcd granted, in seconds. @type {number} */
    get ttl(): number;
    /**
     * Cheap local check: not lost and not past its conservative local deadline.
     * @returns {boolean}
     */
    isAlive(): boolean;
    /**
     * Milliseconds left before the conservative local deadline (0 once lost).
     * @returns {number}
     */
    remaining(): number;
    /** Why the lease was lost, or null. @returns {LostReason | null} */
    lostReason(): LostReason | null;
    /**
     * Calls `cb(reason)` once, on the JS thread, when the lease is lost ('revoked' after
     * {@link Lease#revoke}). Does not keep the process alive. Returns a function that removes `cb`.
     * @param {(reason: LostReason) => void} cb
     * @returns {() => void}
     */
    onLost(cb: (reason: LostReason) => void): () => void;
    /**
     * Revokes the lease, deleting every key attached to it. Idempotent.
     * @returns {Promise<void>}
     */
    revoke(): Promise<void>;
    /** `await using lease = await client.lease(10)` revokes it. */
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
/**
 * One change seen by a watch.
 * @typedef {object} WatchEvent
 * @property {'put' | 'delete'} type
 * @property {Buffer} key
 * @property {Buffer} value empty for deletes
 * @property {bigint} revision the revision of this change
 * @property {bigint} createRevision
 * @property {bigint} version
 * @property {bigint} lease 0n when none
 * @property {Buffer} [prevValue] with `prevKv: true`
 */
/**
 * A watch from {@link Client#watch}: an async iterable of {@link WatchEvent}s that resumes
 * across disconnects without gaps or duplicates. Ends when closed; throws `COMPACTED` if the
 * history it needs is gone, `CLOSED` if the client is closed.
 * @implements {AsyncIterableIterator<WatchEvent>}
 */
export class Watch implements AsyncIterableIterator<WatchEvent> {
    /**
     * Not constructed directly: {@link Client#watch} returns one.
     * @private
     * @param {Promise<any>} nativeWatch
     */
    private constructor();
    /**
     * Resolves once etcd has confirmed the watch: without `startRevision`, every change made after
     * this resolves is delivered. Rejects if the watch could not be created (errors met later,
     * such as `COMPACTED` for a `startRevision` etcd no longer has, come from `next()`).
     * @returns {Promise<void>}
     */
    get ready(): Promise<void>;
    /** @returns {Promise<IteratorResult<WatchEvent, undefined>>} */
    next(): Promise<IteratorResult<WatchEvent, undefined>>;
    /**
     * Ends a `for await` loop early: closes the watch.
     * @returns {Promise<IteratorReturnResult<undefined>>}
     */
    return(): Promise<IteratorReturnResult<undefined>>;
    /** Stops the watch; a pending `next()` resolves done. Idempotent. */
    close(): void;
    [Symbol.asyncIterator](): this;
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
/**
 * Why a registration was lost (it is being registered again by then).
 * @typedef {'expired' | 'revoked' | 'key_deleted'} RegistrationLostReason
 */
/**
 * One registered instance, as etcd has it.
 * @typedef {object} Instance
 * @property {Buffer} name the instance's name: its key after `<service>/` (`name.toString()` for text)
 * @property {Buffer} value what it registered (for Go gRPC clients: {@link grpcEndpoint}'s value)
 * @property {bigint} lease the lease its key is on (0n for a key put without one, e.g. by hand)
 * @property {bigint} modRevision the revision of the registration's latest put
 */
/**
 * A service's instances at one revision.
 * @typedef {object} Instances
 * @property {Instance[]} instances ordered by name (bytewise)
 * @property {bigint} revision the etcd revision this set is the state at
 */
/**
 * @typedef {object} RegisterOptions
 * @property {number} [ttl] lease TTL in whole seconds (default 10): how long the instance stays
 *   listed after this process stops without closing it
 * @property {boolean} [replace] take the name over if another registrant holds it (whose
 *   registration then ends with 'takenOver'); without it that is `WOULD_BLOCK`
 * @property {AbortSignal} [signal] aborting while registering rejects with an AbortError and
 *   leaves nothing; aborting later closes the registration (as `server.listen({ signal })` closes
 *   a server)
 */
/**
 * @typedef {object} DiscoverOptions
 * @property {AbortSignal} [signal] aborting closes the discovery: a pending or later `next()`
 *   rejects with an AbortError (so a `for await` loop throws it)
 */
/**
 * An instance registered under a service, from {@link Client#register}: the key
 * `<service>/<instance>` with its value, on a lease of its own that the core keeps alive. When
 * the registration is lost (the lease expired or was revoked, the key deleted), the core
 * registers it again on a new lease as soon as etcd allows, and reports both
 * ({@link Registration#onLost}, {@link Registration#onRestored}); another registrant taking the
 * name over (`replace: true`) ends it ({@link Registration#onTakenOver}). `close()` (or
 * `await using`) deregisters. Like a held lock it does not keep the process alive, garbage
 * collection never closes it, and closing its client or exiting the process deregisters it.
 */
export class Registration {
    /**
     * Not constructed directly: {@link Client#register} returns one.
     * @private
     * @param {any} nativeRegistration
     * @param {Client} client
     * @param {AbortSignal | undefined} signal
     */
    private constructor();
    /** `<service>/<instance>`, the key in etcd. */
    get key(): Buffer<ArrayBuffer>;
    /**
     * The lease the key is on now; null while it is being registered again, once taken over and
     * once closed. A new one after each restore.
     * @type {bigint | null}
     */
    get leaseId(): bigint | null;
    /**
     * Whether the instance is registered now, as far as this process knows (cheap, local): false
     * while being registered again, once taken over, once closed.
     * @type {boolean}
     */
    get registered(): boolean;
    /**
     * Calls `cb(reason)` on the JS thread each time the registration is lost from now on
     * ('expired', 'revoked', 'key_deleted'); the core is registering it again by then, and
     * {@link Registration#onRestored} follows (unless the name was taken over meanwhile). Not
     * called for `close()`. Returns a function that removes `cb`.
     * @param {(reason: RegistrationLostReason) => void} cb
     * @returns {() => void}
     */
    onLost(cb: (reason: RegistrationLostReason) => void): () => void;
    /**
     * Calls `cb(leaseId)` on the JS thread each time the instance is registered again after a
     * loss, with the new lease's ID. Returns a function that removes `cb`.
     * @param {(leaseId: bigint) => void} cb
     * @returns {() => void}
     */
    onRestored(cb: (leaseId: bigint) => void): () => void;
    /**
     * Calls `cb()` once, on the JS thread, when another registrant takes the name over: the
     * registration has ended (its key is the other's; `update()` rejects `NOT_HELD`); at once
     * (asynchronously) if it already was. Returns a function that removes `cb`.
     * @param {() => void} cb
     * @returns {() => void}
     */
    onTakenOver(cb: () => void): () => void;
    /**
     * Replaces the registered value (kept for every later re-registration too). Written only
     * while the key is on this registration's lease: rejects `NOT_HELD`, writing nothing, while
     * it is being registered again (the value is then used when it is), once taken over or closed.
     * @param {Bytes} value at most 4096 bytes
     * @returns {Promise<bigint>} the revision of the write
     */
    update(value: Bytes): Promise<bigint>;
    /**
     * Deregisters: stops keeping it, deletes the key if it is still this registration's (a
     * taker's stays) and revokes the lease, both done when this resolves (if etcd is unreachable
     * the lease expires after its TTL at worst). Idempotent; resolves at once after the client
     * was closed, which deregistered it already.
     * @returns {Promise<void>}
     */
    close(): Promise<void>;
    /** `await using reg = await client.register(...)` closes it. */
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
/**
 * A service's instance sets, from {@link Client#discover}: `for await (const set of
 * discovery)`, each an {@link Instances} — the current set first, then the whole set after each
 * change (changes that arrive together come as one set; every set is the state at its
 * `revision`), across reconnects and compaction. Ends when closed (`close()`, leaving the loop)
 * or when the client closes; a pending `next()` keeps the process alive, as an iterated watch
 * does. Sends nothing until iterated.
 * @implements {AsyncIterableIterator<Instances>}
 */
export class Discovery implements AsyncIterableIterator<Instances> {
    /**
     * Not constructed directly: {@link Client#discover} returns one.
     * @private
     * @param {Promise<any>} nativeDiscovery
     * @param {AbortSignal | undefined} signal
     */
    private constructor();
    /**
     * The next set (the current one on the first call); done once closed or the client closed.
     * Rejects `CLOSED` if the client was closed before the discovery started, an AbortError once
     * its signal fired.
     * @returns {Promise<IteratorResult<Instances, undefined>>}
     */
    next(): Promise<IteratorResult<Instances, undefined>>;
    /**
     * Ends a `for await` loop early: closes the discovery.
     * @returns {Promise<IteratorReturnResult<undefined>>}
     */
    return(): Promise<IteratorReturnResult<undefined>>;
    /** Stops following (its watch is closed); a pending `next()` resolves done. Idempotent. */
    close(): void;
    [Symbol.asyncIterator](): this;
    [Symbol.asyncDispose](): Promise<void>;
    #private;
}
/** @typedef {keyof typeof codes} ErrorCode */
/** An error from etcdlock; `code` is one of {@link codes}. */
export class EtcdlockError extends Error {
    /**
     * @param {string} code
     * @param {string} message
     * @param {{ compactRevision?: bigint }} [extra]
     */
    constructor(code: string, message: string, extra?: {
        compactRevision?: bigint;
    });
    /** One of {@link codes}. @type {ErrorCode} */
    code: ErrorCode;
    /** For `COMPACTED`: the oldest revision etcd still has. @type {bigint | undefined} */
    compactRevision: bigint | undefined;
}
/** Rejection of an acquire whose AbortSignal fired (`name === 'AbortError'`). */
export class AbortError extends Error {
    /**
     * @param {string} [message]
     * @param {{ cause?: unknown }} [options]
     */
    constructor(message?: string, options?: {
        cause?: unknown;
    });
    code: string;
}
/**
 * Every `code` an {@link EtcdlockError} can carry (core's closed set of error kinds).
 * @readonly
 */
export const codes: Readonly<{
    INVALID_ARGUMENT: "INVALID_ARGUMENT";
    UNAVAILABLE: "UNAVAILABLE";
    LOCK_TIMEOUT: "LOCK_TIMEOUT";
    TIMEOUT: "TIMEOUT";
    WOULD_BLOCK: "WOULD_BLOCK";
    LOCK_LOST: "LOCK_LOST";
    NOT_HELD: "NOT_HELD";
    COMPACTED: "COMPACTED";
    CLOSED: "CLOSED";
    AUTH: "AUTH";
    WRONG_CONTEXT: "WRONG_CONTEXT";
    INTERNAL: "INTERNAL";
}>;
/**
 * The diagnostics_channel names the library publishes its events on, one per area. Each message
 * is `{ level, area, message, fields }`: level 'error' | 'warn' | 'info' | 'debug', the event's
 * fixed message, and its fields (`lock`, `token`, `reason`, `held_ms`, `lease`, `member`...).
 * Debug events (each acquisition and release) are sent while a channel has subscribers, as seen
 * at each `new Client()` and `lock()`, or with NODE_DEBUG=etcdlock (which prints every event).
 * @readonly
 */
export const logChannels: Readonly<{
    lock: "etcdlock:lock";
    lease: "etcdlock:lease";
    watch: "etcdlock:watch";
    connection: "etcdlock:connection";
}>;
/**
 * How long the JS thread may keep polling its event loop, instead of sleeping in it, while it
 * waits for the library's reply, for every later call in this process, in milliseconds: off (0)
 * by default; `ETCDLOCK_SPIN_US` sets it in microseconds. With it, the runtime's workers also
 * linger for the next call. It saves the wake-up of a sleeping thread when a local etcd answers
 * quickly, for CPU: worth it on a host with idle cores, not on a busy one. It happens only while
 * at most two calls are pending and recent replies came within it. INVALID_ARGUMENT (and no
 * change) below 0 or above 10.
 * @param {number} ms
 */
export function setCallerSpin(ms: number): void;
/** The caller spin in effect, in milliseconds (see setCallerSpin). @returns {number} */
export function callerSpin(): number;
/**
 * The value etcd's Go endpoints manager (`client/v3/naming/endpoints`) writes for a gRPC server
 * at `addr` (`{"Op":0,"Addr":"<addr>","Metadata":null}`): register it as an instance's value and
 * Go gRPC clients dialing `etcd:///<service>` (the `naming/resolver` package) reach it.
 * @param {string} addr `host:port`
 * @returns {string}
 */
export function grpcEndpoint(addr: string): string;
/**
 * The address in an endpoint value written by Go's endpoints manager or {@link grpcEndpoint}
 * (an {@link Instance}'s `value`), or null for any other value.
 * @param {Bytes} value
 * @returns {string | null}
 */
export function grpcEndpointAddr(value: Bytes): string | null;
/**
 * The most permits a semaphore may have (1024, the core's `MAX_PERMITS`).
 * @type {number}
 */
export const MAX_PERMITS: number;
