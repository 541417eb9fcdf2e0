'use strict';
// The plain objects that the Client takes (options) and returns (a lock's queue, metrics): JSDoc
// only, for index.d.ts.

/** @import { Bytes, Pem } from './args.js' */
/** @import { LostReason } from './lost.js' */
/** @import { RegistrationLostReason } from './registration.js' */

/**
 * @typedef {object} ClientOptions
 * @property {string[] | string} endpoints etcd URLs like `http://127.0.0.1:2379` (a string may list several, comma-separated)
 * @property {number} [timeout] connect and per-request timeout in ms (default 5000)
 * @property {number} [connectTimeout] overrides `timeout` for connecting
 * @property {number} [requestTimeout] overrides `timeout` for each request
 * @property {{ user: string, password: string }} [auth] for etcd with authentication enabled
 * @property {number} [maxInFlight] requests in flight at once (default 256)
 * @property {TlsOptions} [tls] for `https://` endpoints (without it they trust the system's roots)
 * @property {string} [name] the client's name, the `client` label of its metrics (any non-empty
 *   text; default `etcdlock-<n>`, unique in the process)
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
 * @property {number} permits permits in all, 1 to 1024; every participant of the name must give the same
 * @property {number} [count] permits this acquisition takes at once, 1 to `permits` (default 1): one key, one fencing token, all given back by `release()`; it waits at the head of the queue until that many are free, and later requests wait behind it
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
 *   semaphore's of N (`'permits=N,count=K'` for an acquisition of K permits), `''` for a lock's
 *   or an election's (the value comes without it)
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

module.exports = {};
