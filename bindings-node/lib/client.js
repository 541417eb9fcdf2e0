'use strict';
// The Client: a connection to an etcd cluster, and every call that starts from one (locks and
// the recipes' handles, leases, key-value, watches, the service registry, task queues,
// once-per-period jobs, pools, prefix caches). It owns what it hands out that must stay reachable (held locks,
// live leases, open registrations, claimed tasks, won once slots, pool holdings).

/** @import { Bytes } from './args.js' */
/** @import { ClientOptions, LockOptions, SemaphoreOptions, HandleOptions, LockState, Metrics } from './types.js' */
/** @import { WatchOptions } from './watch.js' */
/** @import { RegisterOptions } from './registration.js' */
/** @import { Instances, DiscoverOptions } from './discovery.js' */
/** @import { QueueOptions } from './tasks.js' */
/** @import { OnceOptions } from './once.js' */
/** @import { PoolOptions, SlotInfo } from './pool.js' */
/** @import { SetMemberSpec, LockSetOptions } from './lockset.js' */

const native = require('./addon.js');
const log = require('../log.js');
const { toMetrics } = require('../metrics.js');
const { EtcdlockError, codes, invalid, fromNative, abortError } = require('./errors.js');
const {
  DEFAULT_LOCK_TTL,
  describe,
  toBytes,
  toOptions,
  toTtl,
  toMillis,
  toRevision,
  toSignal,
  toPermits,
  acquireOptions,
  checkHandle,
  toFlag,
  toConnectOptions,
} = require('./args.js');
const { installExitHook } = require('./runtime.js');
const { Lock } = require('./lock.js');
const { Fence } = require('./fence.js');
const { Election, RwLock } = require('./recipes.js');
const { Lease, checkLease } = require('./lease.js');
const { Watch } = require('./watch.js');
const { Cache } = require('./cache.js');
const { Registration } = require('./registration.js');
const { Discovery } = require('./discovery.js');
const { Task, TaskQueue, checkQueue } = require('./tasks.js');
const { OnceSlot, checkOnce } = require('./once.js');
const { Pool, PoolHolding, checkPool } = require('./pool.js');
const { LockSet, toMembers } = require('./lockset.js');
const internal = require('./internal.js');
const trace = require('./trace.js');

/** Registration TTL in seconds when `register()` is not given one (the core's default). */
const DEFAULT_REGISTER_TTL = 10;

/**
 * A connection to an etcd cluster. The constructor returns at once and connects in the
 * background; every call waits for the connection (`await client.ready`, or use
 * `await Client.connect(options)`, to see connection errors up front).
 */
class Client {
  /** @type {any} */ #native = null;
  /** @type {Promise<any>} */ #connecting;
  /** @type {string} */ #name;
  #closed = false;
  /** @type {Promise<void> | null} */ #closing = null;
  /** Held locks, live leases, claimed tasks, won once slots, pool holdings: kept reachable so garbage collection never releases them. */
  #owned = new Set();

  /** @param {ClientOptions} options */
  constructor(options) {
    log.refresh(native);
    const opts = toConnectOptions(options);
    // Now, not on connect: the name labels the metrics before the connection too.
    try {
      opts.name = this.#name = native.resolveClientName(opts.name);
    } catch (e) {
      throw fromNative(e);
    }
    installExitHook();
    this.#connecting = native.NativeClient.connect(opts).then(
      (n) => (this.#native = n),
      (e) => {
        throw fromNative(e);
      },
    );
    // Reported by every call (and by `ready`), never as an unhandled rejection.
    this.#connecting.catch(() => {});
  }

  /**
   * Connects and resolves once etcd answered (rejects `UNAVAILABLE`, `AUTH`, `INVALID_ARGUMENT`).
   * @param {ClientOptions} options
   * @returns {Promise<Client>}
   */
  static async connect(options) {
    const c = new Client(options);
    await c.ready;
    return c;
  }

  /** Resolves once connected; rejects with the connection error. @returns {Promise<void>} */
  get ready() {
    return this.#connecting.then(() => undefined);
  }

  async #client() {
    if (this.#closed) throw new EtcdlockError(codes.CLOSED, 'the client is closed');
    return this.#native || (await this.#connecting);
  }

  /**
   * Acquires the fair (FIFO) lock `name`; resolves once it is held.
   * Rejects `LOCK_TIMEOUT` (timeout passed), `WOULD_BLOCK` (timeout 0 and taken), an AbortError
   * (signal aborted), `CLOSED`, `UNAVAILABLE`; in every case the queue key is gone by then.
   * @param {Bytes} name
   * @param {LockOptions} [options]
   * @returns {Promise<Lock>}
   */
  async lock(name, options) {
    log.refresh(native);
    const n = toBytes(name, 'name');
    const o = toOptions(options, 'options');
    const ttl = o.ttl === undefined ? DEFAULT_LOCK_TTL : toTtl(o.ttl, 'ttl');
    const timeout = toMillis(o.timeout, 'timeout');
    const signal = toSignal(o.signal);
    const value = o.value === undefined ? undefined : toBytes(o.value, 'value');
    return trace.acquire('acquire', n, () => this.#acquire(signal, (c, token) => c.lock(n, ttl, timeout, token, value), (nl) => new Lock(nl, this)));
  }

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
  async semaphore(name, options) {
    log.refresh(native);
    const n = toBytes(name, 'name');
    const o = toOptions(options, 'options');
    const permits = toPermits(o.permits);
    const count = o.count === undefined || o.count === null ? undefined : toPermits(o.count, 'count');
    const ttl = o.ttl === undefined ? DEFAULT_LOCK_TTL : toTtl(o.ttl, 'ttl');
    const { timeout, signal, value } = acquireOptions(o, [], 'semaphore()');
    return trace.acquire('acquire', n, () => this.#acquire(signal, (c, token) => c.semaphore(n, permits, ttl, timeout, token, value, count), (nl) => new Lock(nl, this)));
  }

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
  async lockSet(members, options) {
    log.refresh(native);
    const ms = toMembers(members);
    const o = toOptions(options, 'options');
    const ttl = o.ttl === undefined ? DEFAULT_LOCK_TTL : toTtl(o.ttl, 'ttl');
    const { timeout, signal, value } = acquireOptions(o, [], 'lockSet()');
    const name = ms.map((m) => m.name.toString()).join(',');
    return trace.acquire('acquire', name, () => this.#acquire(signal, (c, token) => c.lockSet(ms, ttl, timeout, token, value), (n) => new LockSet(n, this, ms)));
  }

  /**
   * The read-write lock `name`: `read(options)` and `write(options)` resolve to a held
   * {@link Lock}, with `lock()`'s options except `ttl`, which is given here. Throws
   * `INVALID_ARGUMENT` for a bad name or TTL; sends nothing.
   * @param {Bytes} name
   * @param {HandleOptions} [options]
   * @returns {RwLock}
   */
  rwlock(name, options) {
    const { n, ttl } = checkHandle(name, options);
    return new RwLock(this, n, ttl);
  }

  /**
   * The election `name` (candidates' keys on this client's shared lease of `ttl` seconds):
   * `campaign(value, options)`, `leader()`, `observe()`. Shares its keys with etcd's Go
   * `concurrency.Election` and `etcdctl elect`. Throws `INVALID_ARGUMENT` for a bad name or
   * TTL; sends nothing.
   * @param {Bytes} name
   * @param {HandleOptions} [options]
   * @returns {Election}
   */
  election(name, options) {
    const { n, ttl } = checkHandle(name, options);
    return new Election(this, n, ttl);
  }

  /**
   * The task queue `name`: `put(payload, options)`, `claim(options)` (a {@link Task}, held on
   * this client's lease for `ttl` seconds), `tasks()`, `stats()`, the dead letters. Throws
   * `INVALID_ARGUMENT` for a bad name (as a lock's), `ttl`, `maxAttempts` or `maxProcessing`; sends nothing.
   * @param {Bytes} name
   * @param {QueueOptions} [options]
   * @returns {TaskQueue}
   */
  queue(name, options) {
    const { n, ttl, maxAttempts, maxProcessing } = checkQueue(name, options, DEFAULT_LOCK_TTL);
    return new TaskQueue(this, n, ttl, maxAttempts, maxProcessing);
  }

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
  pool(name, options) {
    return new Pool(this, checkPool(name, options));
  }

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
  async once(name, options) {
    log.refresh(native);
    const { n, every, ttl, at, keepPeriods } = checkOnce(name, options, DEFAULT_LOCK_TTL);
    const client = await this.#client();
    let slot;
    try {
      const ns = await client.once(n, every, ttl, at, keepPeriods);
      if (ns === null || ns === undefined) return null;
      slot = new OnceSlot(ns, this);
    } catch (e) {
      throw fromNative(e);
    }
    this.#owned.add(slot);
    return slot;
  }

  /**
   * Any acquire (a lock, a permit, a read or write, a campaign, a lock set): AbortSignal, the
   * error conversion and ownership, the same for all.
   * @template {Lock | LockSet} L
   * @param {AbortSignal | undefined} signal
   * @param {(c: any, token: any) => Promise<any>} start
   * @param {(n: any) => L} wrap
   * @returns {Promise<L>}
   */
  async #acquire(signal, start, wrap) {
    if (signal && signal.aborted) throw abortError(signal);
    const client = await this.#client();
    let token;
    let onAbort;
    if (signal) {
      token = new native.CancelToken();
      onAbort = () => token.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    let lock;
    try {
      lock = wrap(await start(client, token));
    } catch (e) {
      if (signal && signal.aborted && e && e.code === 'CANCELLED') throw abortError(signal);
      throw fromNative(e);
    } finally {
      if (signal) signal.removeEventListener('abort', onAbort);
    }
    if (signal && signal.aborted) {
      // The core fails an acquire that succeeds after its token was cancelled (and releases
      // it); this covers what Node adds: the signal fired while the result was on its way to
      // the event loop, after the core had returned. Honour it, leaving nothing behind.
      await lock.release().catch(() => {});
      throw abortError(signal);
    }
    this.#owned.add(lock);
    return lock;
  }

  /**
   * The queue of lock `name` as etcd has it now, whoever holds or waits (this client, another,
   * `etcdctl lock`): the holder (null when free) and the waiters in order. Changes nothing.
   * @param {Bytes} name
   * @returns {Promise<LockState>}
   */
  async inspect(name) {
    const n = toBytes(name, 'name');
    const client = await this.#client();
    try {
      return await client.inspect(n);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * The slots of the pool `name` as etcd has them now (as {@link Pool#slots}, without the
   * pool's definition at hand: for dashboards and `status` tools), or null if no pool is
   * defined there. Changes nothing.
   * @param {Bytes} name
   * @returns {Promise<SlotInfo[] | null>}
   */
  async inspectPool(name) {
    const n = toBytes(name, 'name');
    const client = await this.#client();
    try {
      return (await client.inspectPool(n)) ?? null;
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * This client's metrics since it connected: counts of acquisitions, timeouts, busy tries,
   * failures, releases and failed releases, losses by reason, and the wait and hold histograms
   * (seconds). Synchronous: it reads counters in memory and sends nothing; zeros before the
   * client is connected, and still readable after `close()`.
   * @returns {Metrics}
   */
  metrics() {
    return /** @type {Metrics} */ (toMetrics(this.#native ? this.#native.metrics() : native.emptyMetrics()));
  }

  /**
   * The same metrics in the Prometheus text format (`etcdlock_lock_acquisitions_total`,
   * `etcdlock_lock_wait_seconds` ...), every series labelled `client="<name>"`, for a
   * `/metrics` endpoint (or see `etcdlock/prometheus` for a prom-client registry).
   * @returns {string}
   */
  metricsText() {
    return this.#native ? this.#native.metricsText() : native.emptyMetricsText(this.#name);
  }

  /**
   * The client's name: the `client` label of its metrics (`options.name`, else `etcdlock-<n>`,
   * unique in the process).
   * @returns {string}
   */
  get name() {
    return this.#name;
  }

  /**
   * Grants a lease of `ttl` seconds, kept alive in the background until revoked.
   * @param {number} ttl
   * @returns {Promise<Lease>}
   */
  async lease(ttl) {
    toTtl(ttl, 'ttl');
    const client = await this.#client();
    try {
      const lease = new Lease(await client.lease(ttl), this);
      this.#owned.add(lease);
      return lease;
    } catch (e) {
      throw fromNative(e);
    }
  }

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
  async put(key, value, options) {
    const k = toBytes(key, 'key');
    const v = toBytes(value, 'value');
    const o = toOptions(options, 'options');
    const lease = o.lease === undefined || o.lease === null ? undefined : checkLease(o.lease);
    if (o.ifHeld instanceof Task) {
      const client = await this.#client();
      try {
        return await client.put(k, v, lease && internal.leaseNative(lease), internal.taskNative(o.ifHeld));
      } catch (e) {
        throw fromNative(e);
      }
    }
    if (o.ifHeld instanceof OnceSlot || o.ifHeld instanceof PoolHolding || o.ifHeld instanceof LockSet) {
      const h = o.ifHeld;
      const held = h instanceof OnceSlot ? internal.onceNative(h) : h instanceof PoolHolding ? internal.holdingNative(h) : internal.lockSetNative(h);
      await this.#client();
      try {
        return await held.put(k, v, lease && lease.id);
      } catch (e) {
        throw fromNative(e);
      }
    }
    if (o.ifHeld !== undefined && o.ifHeld !== null) {
      if (!(o.ifHeld instanceof Lock)) throw invalid(`ifHeld must be a Lock (or a Leadership), a Task, a OnceSlot, a PoolHolding or a LockSet, got ${describe(o.ifHeld)}`);
      await this.#client();
      return o.ifHeld.put(k, v, { lease });
    }
    const client = await this.#client();
    try {
      return await client.put(k, v, lease && internal.leaseNative(lease));
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Whether the acquisition `fence` names (a {@link Fence}, or its string form from another
   * process or language) still holds, now: one linearizable read. False for a fence of another
   * etcd cluster. Advisory: it may stop holding right after; a database that checks the token
   * itself (`etcdlock/fencing`) is what refuses a late write. `INVALID_ARGUMENT` if malformed.
   * @param {Fence | string} fence
   * @returns {Promise<boolean>}
   */
  async checkFence(fence) {
    const s = Fence.parse(fence).toString();
    const client = await this.#client();
    try {
      return await client.checkFence(s);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * The value at `key`, or null.
   * @param {Bytes} key
   * @returns {Promise<Buffer | null>}
   */
  async get(key) {
    const k = toBytes(key, 'key');
    const client = await this.#client();
    try {
      return (await client.get(k)) ?? null;
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Deletes `key`; resolves whether it existed.
   * @param {Bytes} key
   * @returns {Promise<boolean>}
   */
  async delete(key) {
    const k = toBytes(key, 'key');
    const client = await this.#client();
    try {
      return await client.delete(k);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Watches `key` (or every key under it with `prefix: true`). Returns at once; iterate it with
   * `for await`. `await watch.ready` to know etcd has confirmed it.
   * @param {Bytes} key
   * @param {WatchOptions} [options]
   * @returns {Watch}
   */
  watch(key, options) {
    const k = toBytes(key, 'key');
    const o = toOptions(options, 'options');
    const startRevision = toRevision(o.startRevision, 'startRevision');
    return new Watch(this.#client().then((c) => c.watch(k, !!o.prefix, startRevision, !!o.prevKv)));
  }

  /**
   * A local copy of every key under `prefix` (`''`: all), kept in step with etcd: resolves once
   * loaded at one revision ({@link Cache}: `get`, `snapshot`, `revision`, `waitFor`, `events`).
   * Rejects `CLOSED`, `UNAVAILABLE`; `INVALID_ARGUMENT` (sending nothing) for a prefix that is
   * not a string or bytes.
   * @param {Bytes} prefix
   * @returns {Promise<Cache>}
   */
  async cache(prefix) {
    const p = toBytes(prefix, 'prefix');
    const client = await this.#client();
    try {
      return new Cache(await client.cache(p));
    } catch (e) {
      throw fromNative(e);
    }
  }

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
  async register(service, instance, value, options) {
    const s = toBytes(service, 'service');
    const i = toBytes(instance, 'instance');
    const v = toBytes(value, 'value');
    const o = toOptions(options, 'options');
    const ttl = o.ttl === undefined ? DEFAULT_REGISTER_TTL : toTtl(o.ttl, 'ttl');
    const replace = toFlag(o.replace, 'replace');
    const signal = toSignal(o.signal);
    if (signal && signal.aborted) throw abortError(signal, 'The registration');
    return trace.call('register', false, () => ({ name: `${s}/${i}` }), () => this.#register(s, i, v, ttl, replace, signal), (ctx) => { ctx.outcome = 'registered'; });
  }

  /**
   * @param {Buffer} s @param {Buffer} i @param {Buffer} v @param {number} ttl @param {boolean} replace
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<Registration>}
   */
  async #register(s, i, v, ttl, replace, signal) {
    const client = await this.#client();
    let reg;
    try {
      reg = new Registration(await client.register(s, i, v, ttl, replace), this, signal);
    } catch (e) {
      throw fromNative(e);
    }
    if (signal && signal.aborted) {
      // Fired while the registration was on its way: honour it, leaving nothing behind.
      await reg.close().catch(() => {});
      throw abortError(signal, 'The registration');
    }
    this.#owned.add(reg);
    return reg;
  }

  /**
   * The instances of `service` now (one read), whoever registered them (this client, another,
   * Go's endpoints manager), ordered by name.
   * @param {Bytes} service
   * @returns {Promise<Instances>}
   */
  async instances(service) {
    const s = toBytes(service, 'service');
    const client = await this.#client();
    try {
      return await client.instances(s);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Follows the instances of `service`: an async iterable of {@link Instances}, the current set
   * first, then the whole set after each change. Returns at once and sends nothing until
   * iterated; throws `INVALID_ARGUMENT` for a bad service name.
   * @param {Bytes} service
   * @param {DiscoverOptions} [options]
   * @returns {Discovery}
   */
  discover(service, options) {
    // A copy: the discovery starts later, and the caller's Buffer must not change it.
    const s = Buffer.from(toBytes(service, 'service'));
    const o = toOptions(options, 'options');
    const signal = toSignal(o.signal);
    try {
      native.checkServiceName(s);
    } catch (e) {
      throw fromNative(e);
    }
    return new Discovery(this.#client().then((c) => c.discover(s)), signal);
  }

  /**
   * Closes the client: pending calls reject with `CLOSED`, its leases are revoked (so its locks
   * are released and their `onLost` callbacks get 'closed'). Idempotent.
   * @returns {Promise<void>}
   */
  close() {
    if (!this.#closing) {
      this.#closed = true;
      this.#closing = this.#connecting.then(
        (n) => n.close(),
        () => {},
      ).then(() => {
        for (const o of this.#owned) if (o instanceof Registration) internal.registrationEnded(o);
        this.#owned.clear();
      });
    }
    return this.#closing;
  }

  /** Whether close() was called. */
  get closed() {
    return this.#closed;
  }

  /** `await using client = new Client(...)` closes it. */
  async [Symbol.asyncDispose]() {
    await this.close();
  }

  static {
    internal.forget = (/** @type {Client} */ client, obj) => client.#owned.delete(obj);
    internal.releaseNative = async (/** @type {Client} */ client, obj, held) => {
      try {
        await held.release();
      } catch (e) {
        throw fromNative(e);
      } finally {
        client.#owned.delete(obj);
      }
    };
    internal.own = (/** @type {Client} */ client, obj) => client.#owned.add(obj);
    internal.findOwned = (/** @type {Client} */ client, pred) => {
      for (const o of client.#owned) if (pred(o)) return o;
      return undefined;
    };
    internal.clientNative = (/** @type {Client} */ client) => client.#client();
    internal.metricItems = (/** @type {Client} */ client) => (client.#native ? client.#native.metrics() : native.emptyMetrics());
    internal.acquireWith = (/** @type {Client} */ client, signal, start, wrap) => client.#acquire(signal, start, wrap);
  }
}

module.exports = { Client };
