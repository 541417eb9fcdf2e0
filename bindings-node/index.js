'use strict';
// The public API of the `etcdlock` npm package: a thin JavaScript layer over the native addon
// (native.js) that adds what is idiomatic in Node and nothing else — argument checks that throw
// before anything is sent, AbortSignal, `Symbol.asyncDispose`, async iteration, and Error objects
// with a stable `code`. All behaviour (leases, keepalive, fair fenced locking, resilient watches)
// lives in the Rust core (the election, semaphore and read-write lock too: each acquisition is a
// Lock). The API is in lib/, one module per job:
//   lib/client.js        Client: the connection, and every call that starts from one
//   lib/lock.js          Lock, a held lock (lib/lost.js: its and a lease's onLost callbacks)
//   lib/recipes.js       Election (Leadership, Observer) and RwLock
//   lib/lease.js         Lease
//   lib/watch.js         Watch
//   lib/cache.js         Cache and CacheEvents (a local copy of a prefix kept in step with etcd)
//   lib/registration.js  Registration (the service registry's writing side)
//   lib/discovery.js     Discovery, grpcEndpoint, grpcEndpointAddr (its reading side)
//   lib/tasks.js         TaskQueue and Task (the task queue), MAX_TASK_PAYLOAD_LEN
//   lib/once.js          OnceSlot (once-per-period jobs)
//   lib/pool.js          Pool and PoolHolding (pools of named slots), MAX_POOL_SLOTS, MAX_POOL_COUNT
//   lib/lockset.js       LockSet (several lock names at once, one token), MAX_LOCK_SET
//   lib/fence.js         Fence (an acquisition as a database checks it) and StaleFence
//   lib/fencing.js       `etcdlock/fencing`: the database's fence check (pg, sqlite helpers)
//   lib/errors.js        EtcdlockError, AbortError, codes
//   lib/args.js          argument checks (INVALID_ARGUMENT before anything is sent), MAX_PERMITS
//   lib/runtime.js       the process-wide runtime: caller spin, closing every client at exit
//   lib/types.js         the option and result objects (JSDoc only)
//   lib/addon.js         the native addon, set up once; lib/internal.js: access between modules
// `index.d.ts` and `lib/*.d.ts` are generated from the JSDoc (`npm run types`).

const log = require('./log.js');
const { Client } = require('./lib/client.js');
const { Lock } = require('./lib/lock.js');
const { Leadership, Election, Observer, RwLock } = require('./lib/recipes.js');
const { Lease } = require('./lib/lease.js');
const { Watch } = require('./lib/watch.js');
const { Cache, CacheEvents } = require('./lib/cache.js');
const { Registration } = require('./lib/registration.js');
const { Discovery, grpcEndpoint, grpcEndpointAddr } = require('./lib/discovery.js');
const { EtcdlockError, AbortError, codes } = require('./lib/errors.js');
const { setCallerSpin, callerSpin } = require('./lib/runtime.js');
const { MAX_PERMITS } = require('./lib/args.js');
const { TaskQueue, Task, MAX_TASK_PAYLOAD_LEN } = require('./lib/tasks.js');
const { OnceSlot } = require('./lib/once.js');
const { Pool, PoolHolding, MAX_POOL_SLOTS, MAX_POOL_COUNT } = require('./lib/pool.js');
const { LockSet, MAX_LOCK_SET } = require('./lib/lockset.js');
const { Fence, StaleFence } = require('./lib/fence.js');
const trace = require('./lib/trace.js');

/**
 * The diagnostics_channel names the library publishes its events on, one per area. Each message
 * is `{ level, area, message, fields }`: level 'error' | 'warn' | 'info' | 'debug', the event's
 * fixed message, and its fields (`lock`, `token`, `reason`, `held_ms`, `lease`, `member`...).
 * Debug events (each acquisition and release) are sent while a channel has subscribers, as seen
 * at each `new Client()` and `lock()`, or with NODE_DEBUG=etcdlock (which prints every event).
 * @readonly
 */
const logChannels = log.channels;
/**
 * The diagnostics_channel TracingChannel names the library publishes spans on (lib/trace.js):
 * one context object per operation, `{ name, fencingToken, outcome, errorCode, lostReason }` (a
 * task's claim and ack: also `taskId`; a pool's acquire, hold and release: also `slots`; a lock
 * set's are named by its members' names, comma-joined), on its start, end, asyncStart, asyncEnd
 * and error events. Nothing is published while a channel has no subscribers.
 * @readonly
 */
const traceChannels = trace.names;

module.exports = { Client, Lock, Leadership, Election, Observer, RwLock, Lease, Watch, Cache, CacheEvents, Registration, Discovery, TaskQueue, Task, OnceSlot, Pool, PoolHolding, LockSet, Fence, StaleFence, EtcdlockError, AbortError, codes, logChannels, traceChannels, setCallerSpin, callerSpin, grpcEndpoint, grpcEndpointAddr, MAX_PERMITS, MAX_TASK_PAYLOAD_LEN, MAX_POOL_SLOTS, MAX_POOL_COUNT, MAX_LOCK_SET };

// The types of the API's plain objects, which index.d.ts exports: each is defined in the module of
// its class, or in lib/types.js; a summary is repeated here for what editors show on `etcdlock`'s.
/**
 * Keys, values and names: a string (UTF-8) or bytes.
 * @typedef {import('./lib/args.js').Bytes} Bytes
 */
/** @typedef {import('./lib/errors.js').ErrorCode} ErrorCode */
/**
 * PEM text: a string, or its bytes (as `tls.connect` takes `ca`, `cert` and `key`).
 * @typedef {import('./lib/args.js').Pem} Pem
 */
/** @typedef {import('./lib/lost.js').LostReason} LostReason */
/** @typedef {import('./lib/health.js').Health} Health */
/**
 * An election's leader as etcd has it: the candidate with the lowest create revision.
 * @typedef {import('./lib/recipes.js').Leader} Leader
 */
/** @typedef {import('./lib/recipes.js').CampaignOptions} CampaignOptions */
/** @typedef {import('./lib/recipes.js').AcquireOptions} AcquireOptions */
/**
 * One change seen by a watch.
 * @typedef {import('./lib/watch.js').WatchEvent} WatchEvent
 */
/**
 * Why a registration was lost (it is being registered again by then).
 * @typedef {import('./lib/registration.js').RegistrationLostReason} RegistrationLostReason
 */
/**
 * One registered instance, as etcd has it.
 * @typedef {import('./lib/discovery.js').Instance} Instance
 */
/**
 * A service's instances at one revision.
 * @typedef {import('./lib/discovery.js').Instances} Instances
 */
/** @typedef {import('./lib/registration.js').RegisterOptions} RegisterOptions */
/** @typedef {import('./lib/discovery.js').DiscoverOptions} DiscoverOptions */
/** @typedef {import('./lib/types.js').ClientOptions} ClientOptions */
/**
 * TLS settings for `https://` endpoints (giving them with `http://` endpoints is `INVALID_ARGUMENT`).
 * @typedef {import('./lib/types.js').TlsOptions} TlsOptions
 */
/** @typedef {import('./lib/types.js').LockOptions} LockOptions */
/** @typedef {import('./lib/types.js').SemaphoreOptions} SemaphoreOptions */
/**
 * Options of {@link Client#election} and {@link Client#rwlock}.
 * @typedef {import('./lib/types.js').HandleOptions} HandleOptions
 */
/**
 * One acquisition in a lock's queue.
 * @typedef {import('./lib/types.js').QueueEntry} QueueEntry
 */
/**
 * A lock's queue as etcd has it at one revision.
 * @typedef {import('./lib/types.js').LockState} LockState
 */
/**
 * A histogram read at one moment.
 * @typedef {import('./lib/types.js').HistogramSnapshot} HistogramSnapshot
 */
/**
 * A client's metrics since it connected (`client.metrics()`).
 * @typedef {import('./lib/types.js').Metrics} Metrics
 */
/** @typedef {import('./lib/watch.js').WatchOptions} WatchOptions */
/**
 * One change of a cache's copy.
 * @typedef {import('./lib/cache.js').CacheEvent} CacheEvent
 */
/**
 * One key of a cache's copy.
 * @typedef {import('./lib/cache.js').CacheEntry} CacheEntry
 */
/**
 * A cache's whole copy and the revision it is at, read together.
 * @typedef {import('./lib/cache.js').CacheSnapshot} CacheSnapshot
 */
/** @typedef {import('./lib/cache.js').CacheWaitOptions} CacheWaitOptions */
/** @typedef {import('./lib/cache.js').CacheEventsOptions} CacheEventsOptions */
/**
 * Options of {@link Client#queue}.
 * @typedef {import('./lib/tasks.js').QueueOptions} QueueOptions
 */
/** @typedef {import('./lib/tasks.js').PutTaskOptions} PutTaskOptions */
/** @typedef {import('./lib/tasks.js').ClaimOptions} ClaimOptions */
/** @typedef {import('./lib/tasks.js').TasksOptions} TasksOptions */
/**
 * The writes an ack commits with the item's deletion.
 * @typedef {import('./lib/tasks.js').AckOptions} AckOptions
 */
/**
 * A queue's items by state, read at one revision.
 * @typedef {import('./lib/tasks.js').QueueStats} QueueStats
 */
/**
 * An item in the dead letters (it had its last delivery).
 * @typedef {import('./lib/tasks.js').DeadTask} DeadTask
 */
/**
 * Options of {@link Client#once}.
 * @typedef {import('./lib/once.js').OnceOptions} OnceOptions
 */
/**
 * Options of {@link Client#pool}.
 * @typedef {import('./lib/pool.js').PoolOptions} PoolOptions
 */
/** @typedef {import('./lib/pool.js').PoolAcquireOptions} PoolAcquireOptions */
/**
 * One slot of a pool as etcd has it.
 * @typedef {import('./lib/pool.js').SlotInfo} SlotInfo
 */
/**
 * How a lock set holds one name.
 * @typedef {import('./lib/lockset.js').SetMode} SetMode
 */
/**
 * One member given to `client.lockSet()`: a name (exclusive), `{ name, mode }` or `{ name, permits }`.
 * @typedef {import('./lib/lockset.js').SetMemberSpec} SetMemberSpec
 */
/**
 * One member of a held lock set.
 * @typedef {import('./lib/lockset.js').SetMember} SetMember
 */
/**
 * Options of {@link Client#lockSet}.
 * @typedef {import('./lib/lockset.js').LockSetOptions} LockSetOptions
 */
/**
 * What a fence names: `'q'`, a key of a lock's queue; `'k'`, a single key (a pool's slot).
 * @typedef {import('./lib/fence.js').FenceKind} FenceKind
 */
