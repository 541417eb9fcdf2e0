/**
 * Keys, values and names: a string (UTF-8) or bytes.
 */
export type Bytes = import("./lib/args.js").Bytes;
export type ErrorCode = import("./lib/errors.js").ErrorCode;
/**
 * PEM text: a string, or its bytes (as `tls.connect` takes `ca`, `cert` and `key`).
 */
export type Pem = import("./lib/args.js").Pem;
export type LostReason = import("./lib/lost.js").LostReason;
export type Health = import("./lib/health.js").Health;
/**
 * An election's leader as etcd has it: the candidate with the lowest create revision.
 */
export type Leader = import("./lib/recipes.js").Leader;
export type CampaignOptions = import("./lib/recipes.js").CampaignOptions;
export type AcquireOptions = import("./lib/recipes.js").AcquireOptions;
/**
 * One change seen by a watch.
 */
export type WatchEvent = import("./lib/watch.js").WatchEvent;
/**
 * Why a registration was lost (it is being registered again by then).
 */
export type RegistrationLostReason = import("./lib/registration.js").RegistrationLostReason;
/**
 * One registered instance, as etcd has it.
 */
export type Instance = import("./lib/discovery.js").Instance;
/**
 * A service's instances at one revision.
 */
export type Instances = import("./lib/discovery.js").Instances;
export type RegisterOptions = import("./lib/registration.js").RegisterOptions;
export type DiscoverOptions = import("./lib/discovery.js").DiscoverOptions;
export type ClientOptions = import("./lib/types.js").ClientOptions;
/**
 * TLS settings for `https://` endpoints (giving them with `http://` endpoints is `INVALID_ARGUMENT`).
 */
export type TlsOptions = import("./lib/types.js").TlsOptions;
export type LockOptions = import("./lib/types.js").LockOptions;
export type SemaphoreOptions = import("./lib/types.js").SemaphoreOptions;
/**
 * Options of {@link Client#election} and {@link Client#rwlock}.
 */
export type HandleOptions = import("./lib/types.js").HandleOptions;
/**
 * One acquisition in a lock's queue.
 */
export type QueueEntry = import("./lib/types.js").QueueEntry;
/**
 * A lock's queue as etcd has it at one revision.
 */
export type LockState = import("./lib/types.js").LockState;
/**
 * A histogram read at one moment.
 */
export type HistogramSnapshot = import("./lib/types.js").HistogramSnapshot;
/**
 * A client's metrics since it connected (`client.metrics()`).
 */
export type Metrics = import("./lib/types.js").Metrics;
export type WatchOptions = import("./lib/watch.js").WatchOptions;
/**
 * One change of a cache's copy.
 */
export type CacheEvent = import("./lib/cache.js").CacheEvent;
/**
 * One key of a cache's copy.
 */
export type CacheEntry = import("./lib/cache.js").CacheEntry;
/**
 * A cache's whole copy and the revision it is at, read together.
 */
export type CacheSnapshot = import("./lib/cache.js").CacheSnapshot;
export type CacheWaitOptions = import("./lib/cache.js").CacheWaitOptions;
export type CacheEventsOptions = import("./lib/cache.js").CacheEventsOptions;
/**
 * Options of {@link Client#queue}.
 */
export type QueueOptions = import("./lib/tasks.js").QueueOptions;
export type PutTaskOptions = import("./lib/tasks.js").PutTaskOptions;
export type ClaimOptions = import("./lib/tasks.js").ClaimOptions;
export type TasksOptions = import("./lib/tasks.js").TasksOptions;
/**
 * The writes an ack commits with the item's deletion.
 */
export type AckOptions = import("./lib/tasks.js").AckOptions;
/**
 * A queue's items by state, read at one revision.
 */
export type QueueStats = import("./lib/tasks.js").QueueStats;
/**
 * An item in the dead letters (it had its last delivery).
 */
export type DeadTask = import("./lib/tasks.js").DeadTask;
/**
 * Options of {@link Client#once}.
 */
export type OnceOptions = import("./lib/once.js").OnceOptions;
/**
 * Options of {@link Client#pool}.
 */
export type PoolOptions = import("./lib/pool.js").PoolOptions;
export type PoolAcquireOptions = import("./lib/pool.js").PoolAcquireOptions;
/**
 * One slot of a pool as etcd has it.
 */
export type SlotInfo = import("./lib/pool.js").SlotInfo;
/**
 * How a lock set holds one name.
 */
export type SetMode = import("./lib/lockset.js").SetMode;
/**
 * One member given to `client.lockSet()`: a name (exclusive), `{ name, mode }` or `{ name, permits }`.
 */
export type SetMemberSpec = import("./lib/lockset.js").SetMemberSpec;
/**
 * One member of a held lock set.
 */
export type SetMember = import("./lib/lockset.js").SetMember;
/**
 * Options of {@link Client#lockSet}.
 */
export type LockSetOptions = import("./lib/lockset.js").LockSetOptions;
/**
 * What a fence names: `'q'`, a key of a lock's queue; `'k'`, a single key (a pool's slot).
 */
export type FenceKind = import("./lib/fence.js").FenceKind;
import { Client } from "./lib/client.js";
import { Lock } from "./lib/lock.js";
import { Leadership } from "./lib/recipes.js";
import { Election } from "./lib/recipes.js";
import { Observer } from "./lib/recipes.js";
import { RwLock } from "./lib/recipes.js";
import { Lease } from "./lib/lease.js";
import { Watch } from "./lib/watch.js";
import { Cache } from "./lib/cache.js";
import { CacheEvents } from "./lib/cache.js";
import { Registration } from "./lib/registration.js";
import { Discovery } from "./lib/discovery.js";
import { TaskQueue } from "./lib/tasks.js";
import { Task } from "./lib/tasks.js";
import { OnceSlot } from "./lib/once.js";
import { Pool } from "./lib/pool.js";
import { PoolHolding } from "./lib/pool.js";
import { LockSet } from "./lib/lockset.js";
import { Fence } from "./lib/fence.js";
import { StaleFence } from "./lib/fence.js";
import { EtcdlockError } from "./lib/errors.js";
import { AbortError } from "./lib/errors.js";
import { codes } from "./lib/errors.js";
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
 * The diagnostics_channel TracingChannel names the library publishes spans on (lib/trace.js):
 * one context object per operation, `{ name, fencingToken, outcome, errorCode, lostReason }` (a
 * task's claim and ack: also `taskId`; a pool's acquire, hold and release: also `slots`; a lock
 * set's are named by its members' names, comma-joined), on its start, end, asyncStart, asyncEnd
 * and error events. Nothing is published while a channel has no subscribers.
 * @readonly
 */
export const traceChannels: Readonly<{
    acquire: "etcdlock:acquire";
    campaign: "etcdlock:campaign";
    hold: "etcdlock:hold";
    lead: "etcdlock:lead";
    release: "etcdlock:release";
    taskClaim: "etcdlock:task.claim";
    taskAck: "etcdlock:task.ack";
    register: "etcdlock:register";
}>;
import { setCallerSpin } from "./lib/runtime.js";
import { callerSpin } from "./lib/runtime.js";
import { grpcEndpoint } from "./lib/discovery.js";
import { grpcEndpointAddr } from "./lib/discovery.js";
import { MAX_PERMITS } from "./lib/args.js";
import { MAX_TASK_PAYLOAD_LEN } from "./lib/tasks.js";
import { MAX_POOL_SLOTS } from "./lib/pool.js";
import { MAX_POOL_COUNT } from "./lib/pool.js";
import { MAX_LOCK_SET } from "./lib/lockset.js";
export { Client, Lock, Leadership, Election, Observer, RwLock, Lease, Watch, Cache, CacheEvents, Registration, Discovery, TaskQueue, Task, OnceSlot, Pool, PoolHolding, LockSet, Fence, StaleFence, EtcdlockError, AbortError, codes, setCallerSpin, callerSpin, grpcEndpoint, grpcEndpointAddr, MAX_PERMITS, MAX_TASK_PAYLOAD_LEN, MAX_POOL_SLOTS, MAX_POOL_COUNT, MAX_LOCK_SET };
