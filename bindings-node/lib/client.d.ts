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
     * Takes one of `permits` (or `count` of them at once) of the fair semaphore `name` (at most
     * `permits` taken at once, across every client, served in arrival order); resolves to the
     * held {@link Lock} (its own fencing token, `onLost`, `ifHeld` guarded writes, `release()`,
     * which gives back all `count`). A request for `count` permits waits at the head of the queue
     * until that many are free, and later requests wait behind it (never starved by smaller
     * ones). Every participant of the name must give the same `permits`: one that gives another
     * rejects `INVALID_ARGUMENT` (naming the count in use) and leaves nothing; the count can
     * change once nobody holds or waits. `count` above `permits` is `INVALID_ARGUMENT`, nothing
     * sent. Otherwise rejects as `lock()` does.
     * @param {Bytes} name
     * @param {SemaphoreOptions} options
     * @returns {Promise<Lock>}
     */
    semaphore(name: Bytes, options: SemaphoreOptions): Promise<Lock>;
    /**
     * Takes several lock names together, all or none, with one fencing token; resolves to the
     * held {@link LockSet} once every member holds. `members`: 1 to 64 names (each exclusive, as
     * `lock()`), `{ name, mode: 'read' | 'write' }` (a read-write lock's reader or writer) or
     * `{ name, permits }` (one of the semaphore's permits), in any order: callers listing the same
     * names in other orders never deadlock. Rejects `INVALID_ARGUMENT` (nothing sent) for no
     * names, more than 64, a name twice or under another (`a` and `a/b`), a bad name, `ttl` or
     * `permits`; otherwise as `lock()` does (`LOCK_TIMEOUT`, `WOULD_BLOCK`, an AbortError,
     * `CLOSED`), and then no key is left in any queue and no member is held.
     * @param {SetMemberSpec[]} members
     * @param {LockSetOptions} [options]
     * @returns {Promise<LockSet>}
     */
    lockSet(members: SetMemberSpec[], options?: LockSetOptions): Promise<LockSet>;
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
     * The task queue `name`: `put(payload, options)`, `claim(options)` (a {@link Task}, held on
     * this client's lease for `ttl` seconds), `tasks()`, `stats()`, the dead letters. Throws
     * `INVALID_ARGUMENT` for a bad name (as a lock's), `ttl`, `maxAttempts` or `maxProcessing`; sends nothing.
     * @param {Bytes} name
     * @param {QueueOptions} [options]
     * @returns {TaskQueue}
     */
    queue(name: Bytes, options?: QueueOptions): TaskQueue;
    /**
     * The pool `name`: named slots (worker ids, devices, test clusters) that are never handed out
     * to two holders at once: `acquire({ count, owner, timeout, signal })` (a {@link PoolHolding},
     * held on this client's lease for `ttl` seconds), `addSlots()`, `removeSlots()`, `slots()`.
     * Give `slots` (the ids) or `size` (slots `'0'` to `String(size - 1)`); a slot whose holder
     * died rests `reuseDelay` ms before it is handed out again. Throws `INVALID_ARGUMENT` for a bad
     * name (as a lock's), no slots, a duplicate or bad id, both or neither of `slots` and `size`,
     * a bad `ttl` or a negative `reuseDelay`; sends nothing.
     * @param {Bytes} name
     * @param {PoolOptions} options
     * @returns {Pool}
     */
    pool(name: Bytes, options: PoolOptions): Pool;
    /**
     * Triggers the once-per-period job `name`: resolves to the {@link OnceSlot} if this trigger
     * won the period (the job is this caller's to run: then `done()`, or `release()` if it
     * failed), or null if the period's job is done or another trigger is running it. The period's
     * slot is the boundary (a multiple of `every` since the epoch) nearest to `at`, so hosts whose
     * clocks differ by less than half a period pick the same one. Never waits for another
     * trigger. Rejects `INVALID_ARGUMENT`, sending nothing, for a bad name (as a lock's), `every`
     * under 1000 ms, `keepPeriods` under 2, a bad `ttl`, an `at` before 1970 or a wrong type;
     * `CLOSED`, `UNAVAILABLE`.
     * @param {Bytes} name
     * @param {OnceOptions} options
     * @returns {Promise<OnceSlot | null>}
     */
    once(name: Bytes, options: OnceOptions): Promise<OnceSlot | null>;
    /**
     * The queue of lock `name` as etcd has it now, whoever holds or waits (this client, another,
     * `etcdctl lock`): the holder (null when free) and the waiters in order. Changes nothing.
     * @param {Bytes} name
     * @returns {Promise<LockState>}
     */
    inspect(name: Bytes): Promise<LockState>;
    /**
     * The slots of the pool `name` as etcd has them now (as {@link Pool#slots}, without the
     * pool's definition at hand: for dashboards and `status` tools), or null if no pool is
     * defined there. Changes nothing.
     * @param {Bytes} name
     * @returns {Promise<SlotInfo[] | null>}
     */
    inspectPool(name: Bytes): Promise<SlotInfo[] | null>;
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
     * `etcdlock_lock_wait_seconds` ...), every series labelled `client="<name>"`, for a
     * `/metrics` endpoint (or see `etcdlock/prometheus` for a prom-client registry).
     * @returns {string}
     */
    metricsText(): string;
    /**
     * The client's name: the `client` label of its metrics (`options.name`, else `etcdlock-<n>`,
     * unique in the process).
     * @returns {string}
     */
    get name(): string;
    /**
     * Grants a lease of `ttl` seconds, kept alive in the background until revoked.
     * @param {number} ttl
     * @returns {Promise<Lease>}
     */
    lease(ttl: number): Promise<Lease>;
    /**
     * Writes `value` at `key`. With `lease`, the key is deleted when the lease ends. With
     * `ifHeld: lock` (or a claimed task, a won once slot, a pool holding, a lock set), the write
     * happens only if that lock (or claim, or every slot of the holding, every member of the set)
     * is still held (checked by etcd in the same transaction) and rejects `NOT_HELD`, writing
     * nothing, otherwise.
     * @param {Bytes} key
     * @param {Bytes} value
     * @param {{ lease?: Lease, ifHeld?: Lock | Task | OnceSlot | PoolHolding | LockSet }} [options] `ifHeld`: a lock, a permit, a read or write, a leadership, a task, a once slot, a pool holding or a lock set
     * @returns {Promise<bigint>} the revision of the write
     */
    put(key: Bytes, value: Bytes, options?: {
        lease?: Lease;
        ifHeld?: Lock | Task | OnceSlot | PoolHolding | LockSet;
    }): Promise<bigint>;
    /**
     * Whether the acquisition `fence` names (a {@link Fence}, or its string form from another
     * process or language) still holds, now: one linearizable read. False for a fence of another
     * etcd cluster. Advisory: it may stop holding right after; a database that checks the token
     * itself (`etcdlock/fencing`) is what refuses a late write. `INVALID_ARGUMENT` if malformed.
     * @param {Fence | string} fence
     * @returns {Promise<boolean>}
     */
    checkFence(fence: Fence | string): Promise<boolean>;
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
     * A local copy of every key under `prefix` (`''`: all), kept in step with etcd: resolves once
     * loaded at one revision ({@link Cache}: `get`, `snapshot`, `revision`, `waitFor`, `events`).
     * Rejects `CLOSED`, `UNAVAILABLE`; `INVALID_ARGUMENT` (sending nothing) for a prefix that is
     * not a string or bytes.
     * @param {Bytes} prefix
     * @returns {Promise<Cache>}
     */
    cache(prefix: Bytes): Promise<Cache>;
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
import type { Bytes } from './args.js';
import type { LockOptions } from './types.js';
import { Lock } from "./lock.js";
import type { SemaphoreOptions } from './types.js';
import type { SetMemberSpec } from './lockset.js';
import type { LockSetOptions } from './lockset.js';
import { LockSet } from "./lockset.js";
import type { HandleOptions } from './types.js';
import { RwLock } from "./recipes.js";
import { Election } from "./recipes.js";
import type { QueueOptions } from './tasks.js';
import { TaskQueue } from "./tasks.js";
import type { PoolOptions } from './pool.js';
import { Pool } from "./pool.js";
import type { OnceOptions } from './once.js';
import { OnceSlot } from "./once.js";
import type { LockState } from './types.js';
import type { SlotInfo } from './pool.js';
import type { Metrics } from './types.js';
import { Lease } from "./lease.js";
import { Task } from "./tasks.js";
import { PoolHolding } from "./pool.js";
import { Fence } from "./fence.js";
import type { WatchOptions } from './watch.js';
import { Watch } from "./watch.js";
import { Cache } from "./cache.js";
import type { RegisterOptions } from './registration.js';
import { Registration } from "./registration.js";
import type { Instances } from './discovery.js';
import type { DiscoverOptions } from './discovery.js';
import { Discovery } from "./discovery.js";
import type { ClientOptions } from './types.js';
