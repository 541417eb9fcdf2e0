'use strict';
// The public API of the `etcdlock` npm package: a thin JavaScript layer over the native addon
// (native.js) that adds what is idiomatic in Node and nothing else — argument checks that throw
// before anything is sent, AbortSignal, `Symbol.asyncDispose`, async iteration, and Error objects
// with a stable `code`. All behaviour (leases, keepalive, fair fenced locking, resilient watches)
// lives in the Rust core (the election, semaphore and read-write lock too: each acquisition is a
// Lock). `index.d.ts` is generated from the JSDoc here (`npm run types`).

const native = require('./native.js');
const log = require('./log.js');
const { toMetrics } = require('./metrics.js');
const { isMainThread } = require('node:worker_threads');

// The native side settles every promise through one threadsafe function per JS thread, which
// napi wants a JS function for; this one is never called for anything else.
native.initCompletions(() => {});
// The library's events on diagnostics_channel and NODE_DEBUG=etcdlock (log.js).
log.start(native);

/** Lock TTL in seconds when `lock()` is not given one. */
const DEFAULT_LOCK_TTL = 10;
/** Registration TTL in seconds when `register()` is not given one (the core's default). */
const DEFAULT_REGISTER_TTL = 10;
/** Connect and request timeout in milliseconds when the client options do not give one. */
const DEFAULT_TIMEOUT_MS = 5000;
/** Bound on revoking this process's leases at exit (see README "Exit policy"). */
const EXIT_REVOKE_MS = 1000;
const I64_MAX = (1n << 63n) - 1n;

/**
 * Every `code` an {@link EtcdlockError} can carry (core's closed set of error kinds).
 * @readonly
 */
const codes = Object.freeze({
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  UNAVAILABLE: 'UNAVAILABLE',
  LOCK_TIMEOUT: 'LOCK_TIMEOUT',
  TIMEOUT: 'TIMEOUT',
  WOULD_BLOCK: 'WOULD_BLOCK',
  LOCK_LOST: 'LOCK_LOST',
  NOT_HELD: 'NOT_HELD',
  COMPACTED: 'COMPACTED',
  CLOSED: 'CLOSED',
  AUTH: 'AUTH',
  WRONG_CONTEXT: 'WRONG_CONTEXT',
  INTERNAL: 'INTERNAL',
});
const CODE_SET = new Set(Object.values(codes));

/** @typedef {keyof typeof codes} ErrorCode */

/** An error from etcdlock; `code` is one of {@link codes}. */
class EtcdlockError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{ compactRevision?: bigint }} [extra]
   */
  constructor(code, message, extra) {
    super(message);
    this.name = 'EtcdlockError';
    /** One of {@link codes}. @type {ErrorCode} */
    this.code = /** @type {ErrorCode} */ (code);
    /** For `COMPACTED`: the oldest revision etcd still has. @type {bigint | undefined} */
    this.compactRevision = extra && extra.compactRevision;
  }
}

/** Rejection of an acquire whose AbortSignal fired (`name === 'AbortError'`). */
class AbortError extends Error {
  /**
   * @param {string} [message]
   * @param {{ cause?: unknown }} [options]
   */
  constructor(message = 'The operation was aborted', options) {
    super(message, options);
    this.name = 'AbortError';
    this.code = 'ABORT_ERR';
  }
}

// Filled by static blocks, which may read private fields: internal access without public methods.
/** @type {(client: Client, obj: object) => void} */
let forget;
/** @type {(lease: Lease) => any} */
let leaseNative;
/** @type {(lock: Lock) => any} */
let lockNative;
/** @type {(client: Client) => Promise<any>} */
let clientNative;
/** @type {(reg: Registration) => void} */
let registrationEnded;
/** @type {<L extends Lock>(client: Client, signal: AbortSignal | undefined, start: (c: any, token: any) => Promise<any>, wrap: (n: any) => L) => Promise<L>} */
let acquireWith;

/** @param {string} message */
function invalid(message) {
  return new EtcdlockError(codes.INVALID_ARGUMENT, message);
}

/** Re-creates a native rejection as an EtcdlockError (with a stack through the caller). */
function fromNative(e) {
  if (e && typeof e.code === 'string' && CODE_SET.has(e.code)) {
    return new EtcdlockError(e.code, e.message, { compactRevision: e.compactRevision });
  }
  return e;
}

/** @param {AbortSignal} signal @param {string} [what] */
function abortError(signal, what = 'The lock acquisition') {
  return new AbortError(`${what} was aborted`, { cause: signal.reason });
}

// --------------------------------------------------------------- argument checks ---

/**
 * Keys, values and names: a string (UTF-8) or bytes.
 * @typedef {string | Uint8Array} Bytes
 */

/** @param {unknown} v @param {string} what @returns {Buffer} */
function toBytes(v, what) {
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  if (Buffer.isBuffer(v)) return v;
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  throw invalid(`${what} must be a string, Buffer or Uint8Array, got ${describe(v)}`);
}

function describe(v) {
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return `${typeof v} ${v}`;
  return typeof v;
}

/** @param {unknown} o @param {string} what @returns {Record<string, any>} */
function toOptions(o, what) {
  if (o === undefined || o === null) return {};
  if (typeof o !== 'object' || Array.isArray(o)) throw invalid(`${what} must be an object, got ${describe(o)}`);
  return o;
}

/** Positive whole seconds. */
function toTtl(v, what) {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
    throw invalid(`${what} must be a positive whole number of seconds, got ${describe(v)}`);
  }
  return v;
}

/** Milliseconds >= 0; undefined/null/Infinity mean "no limit" (returns undefined). */
function toMillis(v, what) {
  if (v === undefined || v === null || v === Infinity) return undefined;
  if (typeof v !== 'number' || Number.isNaN(v) || v < 0) {
    throw invalid(`${what} must be a number of milliseconds >= 0, got ${describe(v)}`);
  }
  return v;
}

/** A 64-bit revision: bigint, or a number that is an exact integer (<= 2^53 - 1). */
function toRevision(v, what) {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) {
      throw invalid(`${what} must be a whole number >= 0 (use a bigint beyond 2^53 - 1), got ${describe(v)}`);
    }
    return BigInt(v);
  }
  if (typeof v === 'bigint') {
    if (v < 0n || v > I64_MAX) throw invalid(`${what} must be between 0 and 2^63 - 1, got ${v}`);
    return v;
  }
  throw invalid(`${what} must be a bigint or a number, got ${describe(v)}`);
}

function toSignal(v) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || typeof v.aborted !== 'boolean' || typeof v.addEventListener !== 'function') {
    throw invalid(`signal must be an AbortSignal, got ${describe(v)}`);
  }
  return v;
}

/**
 * PEM text: a string, or its bytes (as `tls.connect` takes `ca`, `cert` and `key`).
 * @typedef {string | Uint8Array} Pem
 */

const TLS_KEYS = ['ca', 'cert', 'key', 'serverName'];

/** @param {unknown} v @param {string} what @returns {Buffer} */
function toPem(v, what) {
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  throw invalid(`${what} must be PEM text (a string or a Buffer), got ${describe(v)}`);
}

/** The `tls` option for the native side: PEM as bytes; the PEM itself is checked by core. */
function toTls(v) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid(`tls must be an object, got ${describe(v)}`);
  for (const k of Object.keys(v)) {
    // A typo or an option of tls.connect we do not have (rejectUnauthorized, servername...)
    // must not go unnoticed: it would connect with other settings than the caller meant.
    if (!TLS_KEYS.includes(k)) throw invalid(`tls.${k} is not an option (tls takes ${TLS_KEYS.join(', ')})`);
  }
  /** @type {{ ca?: Buffer, cert?: Buffer, key?: Buffer, serverName?: string }} */
  const t = {};
  if (v.ca !== undefined && v.ca !== null) {
    // Several CAs: an array of PEMs, like tls.connect's `ca`.
    const cas = Array.isArray(v.ca) ? v.ca : [v.ca];
    if (cas.length === 0) throw invalid('tls.ca must not be an empty array');
    t.ca = Buffer.concat(cas.flatMap((c, i) => [toPem(c, Array.isArray(v.ca) ? `tls.ca[${i}]` : 'tls.ca'), Buffer.from('\n')]));
  }
  if (v.cert !== undefined && v.cert !== null) t.cert = toPem(v.cert, 'tls.cert');
  if (v.key !== undefined && v.key !== null) t.key = toPem(v.key, 'tls.key');
  if (v.serverName !== undefined && v.serverName !== null) {
    if (typeof v.serverName !== 'string' || v.serverName === '') {
      throw invalid(`tls.serverName must be a non-empty string, got ${describe(v.serverName)}`);
    }
    t.serverName = v.serverName;
  }
  return t;
}

/**
 * The most permits a semaphore may have (1024, the core's `MAX_PERMITS`).
 * @type {number}
 */
const MAX_PERMITS = native.maxPermits();

/** A semaphore's permit count: a whole number from 1 to MAX_PERMITS. */
function toPermits(v) {
  if (v === undefined) throw invalid(`permits is required (a whole number from 1 to ${MAX_PERMITS})`);
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > MAX_PERMITS) {
    throw invalid(`permits must be a whole number from 1 to ${MAX_PERMITS}, got ${describe(v)}`);
  }
  return v;
}

/**
 * An acquire's `timeout`, `signal` and `value` (as `lock()` takes them). `fixed` names the
 * options that belong to the handle instead (`ttl` of `client.rwlock()`, `value` of
 * `campaign(value)`): giving them here would be silently ignored, so it is INVALID_ARGUMENT.
 * @param {Record<string, any>} o
 * @param {string[]} fixed
 * @param {string} where
 */
function acquireOptions(o, fixed, where) {
  for (const k of fixed) {
    if (o[k] !== undefined) throw invalid(`${k} is not an option of ${where}`);
  }
  return {
    timeout: toMillis(o.timeout, 'timeout'),
    signal: toSignal(o.signal),
    value: o.value === undefined || fixed.includes('value') ? undefined : toBytes(o.value, 'value'),
  };
}

/** Name and TTL of a handle made synchronously (`client.election()`, `client.rwlock()`), checked as core checks a lock's. */
function checkHandle(name, options) {
  // A copy: the handle keeps the name, which the caller's Buffer must not change later.
  const n = Buffer.from(toBytes(name, 'name'));
  const o = toOptions(options, 'options');
  const ttl = o.ttl === undefined ? DEFAULT_LOCK_TTL : toTtl(o.ttl, 'ttl');
  try {
    native.checkName(n, ttl);
  } catch (e) {
    throw fromNative(e);
  }
  return { n, ttl };
}

/** An optional boolean option (absent: false). */
function toFlag(v, what) {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw invalid(`${what} must be a boolean, got ${describe(v)}`);
  return v;
}

function toCallback(v) {
  if (typeof v !== 'function') throw invalid(`callback must be a function, got ${describe(v)}`);
  return v;
}

// ------------------------------------------------------------------ caller spin ---

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
function setCallerSpin(ms) {
  if (typeof ms !== 'number') throw invalid('the caller spin must be a number of milliseconds');
  try {
    native.setCallerSpin(ms * 1000);
  } catch (e) {
    throw fromNative(e);
  }
}

/** The caller spin in effect, in milliseconds (see setCallerSpin). @returns {number} */
function callerSpin() {
  return native.callerSpin() / 1000;
}

// ------------------------------------------------------------------------- exit ---

let exitHookInstalled = false;
/**
 * At process exit, close every client (revoking its leases, so locks it still holds are freed at
 * once instead of after their TTL), bounded by EXIT_REVOKE_MS. Main thread only: the runtime is
 * shared by the whole process, and a worker thread exiting must not stop it.
 */
function installExitHook() {
  if (exitHookInstalled || !isMainThread) return;
  exitHookInstalled = true;
  process.once('exit', () => native.shutdown(EXIT_REVOKE_MS));
}

/**
 * Calls each callback once with the reason; shared by Lock and Lease. The native forwarder runs
 * on the JS thread and never keeps the process alive.
 */
class LostCallbacks {
  constructor(subscribe) {
    this.subscribe = subscribe;
    /** @type {Set<Function> | null} */
    this.callbacks = null;
    /** @type {string | null} */
    this.reason = null;
  }

  add(cb) {
    toCallback(cb);
    if (this.reason !== null) {
      // Already fired: this callback still gets it once, asynchronously like the others.
      const reason = this.reason;
      let live = true;
      setImmediate(() => live && cb(reason));
      return () => {
        live = false;
      };
    }
    if (this.callbacks === null) {
      this.callbacks = new Set();
      this.subscribe((reason) => {
        this.reason = reason;
        const cbs = this.callbacks;
        this.callbacks = new Set();
        for (const f of cbs) f(reason);
      });
    }
    this.callbacks.add(cb);
    return () => {
      if (this.callbacks) this.callbacks.delete(cb);
    };
  }
}

/** @typedef {'expired' | 'revoked' | 'key_deleted' | 'closed'} LostReason */

// ------------------------------------------------------------------------- Lock ---

/**
 * A held lock, from {@link Client#lock}. Release it with {@link Lock#release} (or `await using`).
 * A Lock that is dropped without release stays held until its client is closed or the process
 * exits: garbage collection never releases it behind your back.
 */
class Lock {
  /** @type {any} */ #native;
  /** @type {Client} */ #client;
  /** @type {bigint} */ #token;
  /** @type {Buffer | null} */ #key = null;
  #released = false;
  /** @type {LostCallbacks | null} */ #lost = null;

  /**
   * Not constructed directly: {@link Client#lock} returns one (protected: {@link Leadership} is one too).
   * @protected
   * @param {any} nativeLock
   * @param {Client} client
   */
  constructor(nativeLock, client) {
    this.#native = nativeLock;
    this.#client = client;
    // Only the token is read eagerly: lock/release loops should pay for nothing else.
    this.#token = nativeLock.fencingToken;
  }

  static {
    lockNative = (lock) => lock.#native;
  }

  /** The fencing token: strictly greater than every earlier holder's (create revision of the key). */
  get fencingToken() {
    return this.#token;
  }

  /** This holder's queue key in etcd (`<name>/<lease hex>`). */
  get key() {
    if (this.#key === null) this.#key = this.#native.key;
    return Buffer.from(this.#key);
  }

  /** ID of the lease the key is attached to, shared by the client's locks with the same TTL. @type {bigint} */
  get leaseId() {
    return this.#native.leaseId;
  }

  /**
   * Cheap local check: not released, not lost, lease not past its conservative deadline.
   * @returns {boolean}
   */
  isHeld() {
    return this.#native.isHeld();
  }

  /** Why the lock was lost, or null. @returns {LostReason | null} */
  lostReason() {
    return /** @type {LostReason | null} */ (this.#native.lostReason());
  }

  /**
   * Calls `cb(reason)` once, on the JS thread, when the lock is lost (not when it is released);
   * at once if it already is. Does not keep the process alive. Returns a function that removes `cb`.
   * @param {(reason: LostReason) => void} cb
   * @returns {() => void}
   */
  onLost(cb) {
    const native = this.#native;
    if (this.#lost === null) this.#lost = new LostCallbacks((f) => native.onLost(f));
    return this.#lost.add(cb);
  }

  /**
   * Releases the lock (fenced: deletes the key only if it is still this acquisition's).
   * Rejects with `NOT_HELD` if it was already released or lost.
   * @returns {Promise<void>}
   */
  async release() {
    this.#released = true;
    try {
      await this.#native.release();
    } catch (e) {
      throw fromNative(e);
    } finally {
      forget(this.#client, this);
    }
  }

  /**
   * Writes `value` at `key` only if this lock is still held (atomically checked by etcd);
   * rejects with `NOT_HELD`, writing nothing, otherwise. Same as `client.put(key, value, { ifHeld: lock })`.
   * @param {Bytes} key
   * @param {Bytes} value
   * @param {{ lease?: Lease }} [options]
   * @returns {Promise<bigint>} the revision of the write
   */
  async put(key, value, options) {
    const k = toBytes(key, 'key');
    const v = toBytes(value, 'value');
    const o = toOptions(options, 'options');
    const lease = o.lease === undefined || o.lease === null ? undefined : checkLease(o.lease).id;
    try {
      return await this.#native.put(k, v, lease);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /** `await using lock = await client.lock(...)` releases it (unless already released). */
  async [Symbol.asyncDispose]() {
    if (!this.#released) await this.release();
  }
}

// ------------------------------------------------- Election, semaphore, rwlock ---

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
class Leadership extends Lock {
  /**
   * Cheap local check: still leading (not resigned, not known lost). Same as `isHeld()`.
   * @returns {boolean}
   */
  isLeader() {
    return this.isHeld();
  }

  /**
   * Replaces the leader's value (what `leader()`, observers and `etcdctl elect -l` see), only
   * while still leading: rejects `NOT_HELD`, writing nothing, otherwise.
   * @param {Bytes} value at most 4096 bytes
   * @returns {Promise<bigint>} the revision of the write
   */
  async proclaim(value) {
    const v = toBytes(value, 'value');
    try {
      return await lockNative(this).setValue(v);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Steps down (fenced: deletes the leader's key only if it is still this one's; the next
   * candidate leads). Rejects `NOT_HELD` if already resigned or lost. Same as `release()`.
   * @returns {Promise<void>}
   */
  async resign() {
    await this.release();
  }
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
class Election {
  /** @type {Client} */ #client;
  /** @type {Buffer} */ #name;
  /** @type {number} */ #ttl;

  /**
   * Not constructed directly: {@link Client#election} returns one.
   * @private
   * @param {Client} client
   * @param {Buffer} name
   * @param {number} ttl
   */
  constructor(client, name, ttl) {
    this.#client = client;
    this.#name = name;
    this.#ttl = ttl;
  }

  /** The election's name. @type {Buffer} */
  get name() {
    return Buffer.from(this.#name);
  }

  /**
   * Waits to lead, proposing `value`; resolves to the {@link Leadership}. Rejects
   * `LOCK_TIMEOUT` (timeout passed), `WOULD_BLOCK` (timeout 0 and someone leads or
   * campaigns), `LOCK_LOST` (this candidate's lease or key went while it waited), an
   * AbortError (signal aborted), `CLOSED`; in every case the candidate's key is gone by then.
   * @param {Bytes} value the proposal, at most 4096 bytes
   * @param {CampaignOptions} [options]
   * @returns {Promise<Leadership>}
   */
  async campaign(value, options) {
    log.refresh(native);
    const v = toBytes(value, 'value');
    const o = toOptions(options, 'options');
    const { timeout, signal } = acquireOptions(o, ['ttl', 'value'], 'campaign() (the ttl is the election\'s, the value its first argument)');
    const [n, ttl, client] = [this.#name, this.#ttl, this.#client];
    return acquireWith(client, signal, (c, token) => c.campaign(n, ttl, v, timeout, token), (nl) => new Leadership(nl, client));
  }

  /**
   * The current leader, or null when nobody campaigns. Changes nothing.
   * @returns {Promise<Leader | null>}
   */
  async leader() {
    const c = await clientNative(this.#client);
    try {
      return (await c.leader(this.#name, this.#ttl)) ?? null;
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Follows the leader: an async iterable of {@link Leader} (or null when nobody leads),
   * starting with the current state, then one per change (a new leader, a proclamation, null
   * when the last candidate goes; a new candidate behind the leader is no change), across
   * reconnects and compaction. Ends when closed (`close()`, leaving a `for await` loop) or when
   * the client closes. Sends nothing until iterated.
   * @returns {Observer}
   */
  observe() {
    const [n, ttl] = [this.#name, this.#ttl];
    return new Observer(clientNative(this.#client).then((c) => c.observe(n, ttl)));
  }
}

/**
 * Leader changes of an election, from {@link Election#observe}: `for await (const leader of
 * observer)`, each a {@link Leader} or null (no leader). Changes that come faster than they are
 * read may be merged into the latest state, which is never skipped.
 * @implements {AsyncIterableIterator<Leader | null>}
 */
class Observer {
  /** @type {any} */ #native = null;
  /** @type {Promise<void>} */ #ready;
  #closed = false;
  /** @type {unknown} */ #error = null;
  /** One native read at a time, in the order next() was called. @type {Promise<unknown>} */
  #chain = Promise.resolve();

  /**
   * Not constructed directly: {@link Election#observe} returns one.
   * @private
   * @param {Promise<any>} nativeObserver
   */
  constructor(nativeObserver) {
    this.#ready = nativeObserver.then(
      (o) => {
        this.#native = o;
        if (this.#closed) o.close();
      },
      (e) => {
        this.#error = fromNative(e);
      },
    );
  }

  /**
   * The next change (the current leader on the first call); done once closed or the client
   * closed. Rejects `CLOSED` if the client was closed before the observer started.
   * @returns {Promise<IteratorResult<Leader | null, undefined>>}
   */
  next() {
    const r = this.#chain.then(() => this.#read());
    this.#chain = r.catch(() => {});
    return r;
  }

  /** @returns {Promise<IteratorResult<Leader | null, undefined>>} */
  async #read() {
    await this.#ready;
    if (this.#error) throw this.#error;
    if (this.#closed) return { value: undefined, done: true };
    let change;
    try {
      change = await this.#native.next();
    } catch (e) {
      this.#error = fromNative(e);
      this.#closed = true;
      throw this.#error;
    }
    if (change == null || this.#closed) {
      this.#closed = true;
      return { value: undefined, done: true };
    }
    return { value: change.leader ?? null, done: false };
  }

  /**
   * Ends a `for await` loop early: closes the observer.
   * @returns {Promise<IteratorReturnResult<undefined>>}
   */
  async return() {
    this.close();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  /** Stops observing; a pending `next()` resolves done. Idempotent. */
  close() {
    this.#closed = true;
    if (this.#native) this.#native.close();
  }

  async [Symbol.asyncDispose]() {
    this.close();
  }
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
class RwLock {
  /** @type {Client} */ #client;
  /** @type {Buffer} */ #name;
  /** @type {number} */ #ttl;

  /**
   * Not constructed directly: {@link Client#rwlock} returns one.
   * @private
   * @param {Client} client
   * @param {Buffer} name
   * @param {number} ttl
   */
  constructor(client, name, ttl) {
    this.#client = client;
    this.#name = name;
    this.#ttl = ttl;
  }

  /** The lock's name. @type {Buffer} */
  get name() {
    return Buffer.from(this.#name);
  }

  /**
   * Acquires a read; resolves to the held {@link Lock} once no writer holds or waits ahead of
   * it. Rejects as `client.lock()` does.
   * @param {AcquireOptions} [options]
   * @returns {Promise<Lock>}
   */
  async read(options) {
    return this.#acquire(false, options);
  }

  /**
   * Acquires the write; resolves to the held {@link Lock} once everyone ahead of it is gone.
   * Rejects as `client.lock()` does.
   * @param {AcquireOptions} [options]
   * @returns {Promise<Lock>}
   */
  async write(options) {
    return this.#acquire(true, options);
  }

  /** @param {boolean} write @param {unknown} options @returns {Promise<Lock>} */
  async #acquire(write, options) {
    log.refresh(native);
    const o = toOptions(options, 'options');
    const { timeout, signal, value } = acquireOptions(o, ['ttl'], `${write ? 'write' : 'read'}() (the ttl is client.rwlock()'s)`);
    const [n, ttl, client] = [this.#name, this.#ttl, this.#client];
    return acquireWith(client, signal, (c, token) => c.rwlock(n, ttl, write, timeout, token, value), (nl) => new Lock(nl, client));
  }
}

// ------------------------------------------------------------------------ Lease ---

/**
 * A lease from {@link Client#lease}, kept alive in the background until revoked, lost, or its
 * client is closed. Dropping the object does not revoke it.
 */
class Lease {
  /** @type {any} */ #native;
  /** @type {Client} */ #client;
  /** @type {bigint} */ #id;
  /** @type {LostCallbacks} */ #lost;

  /**
   * Not constructed directly: {@link Client#lease} returns one.
   * @private
   * @param {any} nativeLease
   * @param {Client} client
   */
  constructor(nativeLease, client) {
    this.#native = nativeLease;
    this.#client = client;
    this.#id = nativeLease.id;
    this.#lost = new LostCallbacks((f) => nativeLease.onLost(f));
  }

  static {
    leaseNative = (lease) => lease.#native;
  }

  /** The lease ID. */
  get id() {
    return this.#id;
  }

  /** The TTL etcd granted, in seconds. @type {number} */
  get ttl() {
    return this.#native.ttl;
  }

  /**
   * Cheap local check: not lost and not past its conservative local deadline.
   * @returns {boolean}
   */
  isAlive() {
    return this.#native.isAlive();
  }

  /**
   * Milliseconds left before the conservative local deadline (0 once lost).
   * @returns {number}
   */
  remaining() {
    return this.#native.remainingMs();
  }

  /** Why the lease was lost, or null. @returns {LostReason | null} */
  lostReason() {
    return /** @type {LostReason | null} */ (this.#native.lostReason());
  }

  /**
   * Calls `cb(reason)` once, on the JS thread, when the lease is lost ('revoked' after
   * {@link Lease#revoke}). Does not keep the process alive. Returns a function that removes `cb`.
   * @param {(reason: LostReason) => void} cb
   * @returns {() => void}
   */
  onLost(cb) {
    return this.#lost.add(cb);
  }

  /**
   * Revokes the lease, deleting every key attached to it. Idempotent.
   * @returns {Promise<void>}
   */
  async revoke() {
    try {
      await this.#native.revoke();
    } catch (e) {
      throw fromNative(e);
    } finally {
      forget(this.#client, this);
    }
  }

  /** `await using lease = await client.lease(10)` revokes it. */
  async [Symbol.asyncDispose]() {
    await this.revoke();
  }
}

function checkLease(v) {
  if (!(v instanceof Lease)) throw invalid(`lease must be a Lease from client.lease(), got ${describe(v)}`);
  return v;
}

// ------------------------------------------------------------------------ Watch ---

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
class Watch {
  /** @type {any} */ #native = null;
  /** @type {Promise<void>} */ #ready;
  /** @type {WatchEvent[]} */ #buffer = [];
  #head = 0;
  #closed = false;
  /** @type {unknown} */ #error = null;
  /** @type {Promise<void> | null} */ #filling = null;

  /**
   * Not constructed directly: {@link Client#watch} returns one.
   * @private
   * @param {Promise<any>} nativeWatch
   */
  constructor(nativeWatch) {
    this.#ready = nativeWatch.then(
      (w) => {
        this.#native = w;
        if (this.#closed) w.close();
      },
      (e) => {
        this.#error = fromNative(e);
        throw this.#error;
      },
    );
    // The error is reported by next() (and by `ready` to whoever awaits it).
    this.#ready.catch(() => {});
  }

  /**
   * Resolves once etcd has confirmed the watch: without `startRevision`, every change made after
   * this resolves is delivered. Rejects if the watch could not be created (errors met later,
   * such as `COMPACTED` for a `startRevision` etcd no longer has, come from `next()`).
   * @returns {Promise<void>}
   */
  get ready() {
    return this.#ready;
  }

  /** @returns {Promise<IteratorResult<WatchEvent, undefined>>} */
  async next() {
    for (;;) {
      if (this.#head < this.#buffer.length) {
        const value = this.#buffer[this.#head];
        this.#buffer[this.#head++] = undefined;
        return { value, done: false };
      }
      if (this.#error) throw this.#error;
      if (this.#closed) return { value: undefined, done: true };
      // One native read at a time; concurrent next() calls share it.
      if (!this.#filling) this.#filling = this.#fill().finally(() => (this.#filling = null));
      await this.#filling;
    }
  }

  async #fill() {
    try {
      await this.#ready;
      const batch = await this.#native.next();
      if (batch == null || this.#closed) {
        this.#closed = true;
        return;
      }
      this.#buffer = batch;
      this.#head = 0;
    } catch (e) {
      this.#error = this.#error || fromNative(e);
      this.#closed = true;
    }
  }

  /**
   * Ends a `for await` loop early: closes the watch.
   * @returns {Promise<IteratorReturnResult<undefined>>}
   */
  async return() {
    this.close();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  /** Stops the watch; a pending `next()` resolves done. Idempotent. */
  close() {
    if (this.#closed && this.#native === null) return;
    this.#closed = true;
    this.#buffer = [];
    this.#head = 0;
    if (this.#native) this.#native.close();
  }

  async [Symbol.asyncDispose]() {
    this.close();
  }
}

// ------------------------------------------------------------- Service registry ---

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
class Registration {
  /** @type {any} */ #native;
  /** @type {Client} */ #client;
  /** @type {Buffer | null} */ #key = null;
  #closed = false;
  #takenOver = false;
  /** @type {Set<(reason: RegistrationLostReason) => void>} */ #lost = new Set();
  /** @type {Set<(leaseId: bigint) => void>} */ #restored = new Set();
  /** @type {Set<() => void>} */ #takenOverCbs = new Set();
  /** @type {AbortSignal | undefined} */ #signal;
  /** @type {(() => void) | undefined} */ #onAbort;

  /**
   * Not constructed directly: {@link Client#register} returns one.
   * @private
   * @param {any} nativeRegistration
   * @param {Client} client
   * @param {AbortSignal | undefined} signal
   */
  constructor(nativeRegistration, client, signal) {
    this.#native = nativeRegistration;
    this.#client = client;
    // The core subscribed when it registered: every event from then on comes here, in order.
    nativeRegistration.onEvents((/** @type {any} */ e) => this.#event(e));
    if (signal && !signal.aborted) {
      this.#signal = signal;
      this.#onAbort = () => {
        this.close().catch(() => {});
      };
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  static {
    registrationEnded = (reg) => {
      // Its client closed (which revoked the lease): only the event forwarder is left to stop.
      if (reg.#closed) return;
      reg.#end();
      reg.#native.close().catch(() => {});
    };
  }

  /** @param {{ type: string, reason?: string | null, lease?: bigint | null }} e */
  #event(e) {
    if (this.#closed) return;
    if (e.type === 'lost') {
      for (const f of [...this.#lost]) f(/** @type {RegistrationLostReason} */ (e.reason));
    } else if (e.type === 'restored') {
      for (const f of [...this.#restored]) f(/** @type {bigint} */ (e.lease));
    } else if (e.type === 'takenOver') {
      this.#takenOver = true;
      const cbs = [...this.#takenOverCbs];
      this.#takenOverCbs.clear();
      for (const f of cbs) f();
    }
  }

  /** `<service>/<instance>`, the key in etcd. */
  get key() {
    if (this.#key === null) this.#key = this.#native.key;
    return Buffer.from(this.#key);
  }

  /**
   * The lease the key is on now; null while it is being registered again, once taken over and
   * once closed. A new one after each restore.
   * @type {bigint | null}
   */
  get leaseId() {
    return this.#native.leaseId ?? null;
  }

  /**
   * Whether the instance is registered now, as far as this process knows (cheap, local): false
   * while being registered again, once taken over, once closed.
   * @type {boolean}
   */
  get registered() {
    return this.#native.isRegistered();
  }

  /**
   * Calls `cb(reason)` on the JS thread each time the registration is lost from now on
   * ('expired', 'revoked', 'key_deleted'); the core is registering it again by then, and
   * {@link Registration#onRestored} follows (unless the name was taken over meanwhile). Not
   * called for `close()`. Returns a function that removes `cb`.
   * @param {(reason: RegistrationLostReason) => void} cb
   * @returns {() => void}
   */
  onLost(cb) {
    return this.#listen(this.#lost, cb);
  }

  /**
   * Calls `cb(leaseId)` on the JS thread each time the instance is registered again after a
   * loss, with the new lease's ID. Returns a function that removes `cb`.
   * @param {(leaseId: bigint) => void} cb
   * @returns {() => void}
   */
  onRestored(cb) {
    return this.#listen(this.#restored, cb);
  }

  /**
   * Calls `cb()` once, on the JS thread, when another registrant takes the name over: the
   * registration has ended (its key is the other's; `update()` rejects `NOT_HELD`); at once
   * (asynchronously) if it already was. Returns a function that removes `cb`.
   * @param {() => void} cb
   * @returns {() => void}
   */
  onTakenOver(cb) {
    toCallback(cb);
    if (this.#takenOver) {
      let live = true;
      setImmediate(() => live && cb());
      return () => {
        live = false;
      };
    }
    return this.#listen(this.#takenOverCbs, cb);
  }

  /**
   * @template {Function} F
   * @param {Set<F>} set
   * @param {F} cb
   * @returns {() => void}
   */
  #listen(set, cb) {
    toCallback(cb);
    set.add(cb);
    return () => {
      set.delete(cb);
    };
  }

  /**
   * Replaces the registered value (kept for every later re-registration too). Written only
   * while the key is on this registration's lease: rejects `NOT_HELD`, writing nothing, while
   * it is being registered again (the value is then used when it is), once taken over or closed.
   * @param {Bytes} value at most 4096 bytes
   * @returns {Promise<bigint>} the revision of the write
   */
  async update(value) {
    const v = toBytes(value, 'value');
    if (this.#client.closed) throw new EtcdlockError(codes.CLOSED, 'the client is closed');
    try {
      return await this.#native.update(v);
    } catch (e) {
      throw fromNative(e);
    }
  }

  /** No more events, no more abort listener, not owned by the client. */
  #end() {
    this.#closed = true;
    if (this.#signal) this.#signal.removeEventListener('abort', /** @type {() => void} */ (this.#onAbort));
    this.#signal = undefined;
    this.#lost.clear();
    this.#restored.clear();
    this.#takenOverCbs.clear();
    forget(this.#client, this);
  }

  /**
   * Deregisters: stops keeping it, deletes the key if it is still this registration's (a
   * taker's stays) and revokes the lease, both done when this resolves (if etcd is unreachable
   * the lease expires after its TTL at worst). Idempotent; resolves at once after the client
   * was closed, which deregistered it already.
   * @returns {Promise<void>}
   */
  async close() {
    this.#end();
    if (this.#client.closed) {
      // Only stops the event forwarder: the client's close revoked the lease.
      this.#native.close().catch(() => {});
      return;
    }
    // Idempotent in the core too: a second close sends nothing.
    try {
      await this.#native.close();
    } catch (e) {
      throw fromNative(e);
    }
  }

  /** `await using reg = await client.register(...)` closes it. */
  async [Symbol.asyncDispose]() {
    await this.close();
  }
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
class Discovery {
  /** @type {any} */ #native = null;
  /** @type {Promise<void>} */ #ready;
  #closed = false;
  /** @type {unknown} */ #error = null;
  /** One native read at a time, in the order next() was called. @type {Promise<unknown>} */
  #chain = Promise.resolve();
  /** @type {AbortSignal | undefined} */ #signal;
  /** @type {(() => void) | undefined} */ #onAbort;

  /**
   * Not constructed directly: {@link Client#discover} returns one.
   * @private
   * @param {Promise<any>} nativeDiscovery
   * @param {AbortSignal | undefined} signal
   */
  constructor(nativeDiscovery, signal) {
    this.#ready = nativeDiscovery.then(
      (d) => {
        this.#native = d;
        if (this.#closed) d.close();
      },
      (e) => {
        this.#error = this.#error || fromNative(e);
      },
    );
    if (signal) {
      if (signal.aborted) {
        this.#abort(signal);
      } else {
        this.#signal = signal;
        this.#onAbort = () => this.#abort(signal);
        signal.addEventListener('abort', this.#onAbort, { once: true });
      }
    }
  }

  /** @param {AbortSignal} signal */
  #abort(signal) {
    if (this.#closed) return;
    this.#error = abortError(signal, 'The discovery');
    this.close();
  }

  /**
   * The next set (the current one on the first call); done once closed or the client closed.
   * Rejects `CLOSED` if the client was closed before the discovery started, an AbortError once
   * its signal fired.
   * @returns {Promise<IteratorResult<Instances, undefined>>}
   */
  next() {
    const r = this.#chain.then(() => this.#read());
    this.#chain = r.catch(() => {});
    return r;
  }

  /** @returns {Promise<IteratorResult<Instances, undefined>>} */
  async #read() {
    await this.#ready;
    if (this.#error) throw this.#error;
    if (this.#closed) return { value: undefined, done: true };
    let set;
    try {
      set = await this.#native.next();
    } catch (e) {
      this.#error = this.#error || fromNative(e);
      this.close();
      throw this.#error;
    }
    if (this.#error) throw this.#error;
    if (set == null || this.#closed) {
      this.close();
      return { value: undefined, done: true };
    }
    return { value: set, done: false };
  }

  /**
   * Ends a `for await` loop early: closes the discovery.
   * @returns {Promise<IteratorReturnResult<undefined>>}
   */
  async return() {
    this.close();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  /** Stops following (its watch is closed); a pending `next()` resolves done. Idempotent. */
  close() {
    this.#closed = true;
    if (this.#signal) this.#signal.removeEventListener('abort', /** @type {() => void} */ (this.#onAbort));
    this.#signal = undefined;
    if (this.#native) this.#native.close();
  }

  async [Symbol.asyncDispose]() {
    this.close();
  }
}

/**
 * The value etcd's Go endpoints manager (`client/v3/naming/endpoints`) writes for a gRPC server
 * at `addr` (`{"Op":0,"Addr":"<addr>","Metadata":null}`): register it as an instance's value and
 * Go gRPC clients dialing `etcd:///<service>` (the `naming/resolver` package) reach it.
 * @param {string} addr `host:port`
 * @returns {string}
 */
function grpcEndpoint(addr) {
  if (typeof addr !== 'string') throw invalid(`addr must be a string (host:port), got ${describe(addr)}`);
  return native.grpcEndpoint(addr);
}

/**
 * The address in an endpoint value written by Go's endpoints manager or {@link grpcEndpoint}
 * (an {@link Instance}'s `value`), or null for any other value.
 * @param {Bytes} value
 * @returns {string | null}
 */
function grpcEndpointAddr(value) {
  return native.grpcEndpointAddr(toBytes(value, 'value')) ?? null;
}

// ----------------------------------------------------------------------- Client ---

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
class Client {
  /** @type {any} */ #native = null;
  /** @type {Promise<any>} */ #connecting;
  #closed = false;
  /** @type {Promise<void> | null} */ #closing = null;
  /** Held locks and live leases: kept reachable so garbage collection never releases them. */
  #owned = new Set();

  /** @param {ClientOptions} options */
  constructor(options) {
    log.refresh(native);
    const o = toOptions(options, 'options');
    let endpoints = o.endpoints;
    if (typeof endpoints === 'string') endpoints = endpoints.split(',');
    if (!Array.isArray(endpoints) || endpoints.length === 0 || !endpoints.every((e) => typeof e === 'string')) {
      throw invalid('endpoints must be a non-empty array of URL strings');
    }
    const timeout = toMillis(o.timeout, 'timeout') ?? DEFAULT_TIMEOUT_MS;
    const connectTimeoutMs = toMillis(o.connectTimeout, 'connectTimeout') ?? timeout;
    const requestTimeoutMs = toMillis(o.requestTimeout, 'requestTimeout') ?? timeout;
    if (connectTimeoutMs === 0 || requestTimeoutMs === 0) throw invalid('timeouts must be positive');
    const opts = { endpoints, connectTimeoutMs, requestTimeoutMs };
    if (o.auth !== undefined) {
      const a = toOptions(o.auth, 'auth');
      if (typeof a.user !== 'string' || typeof a.password !== 'string') throw invalid('auth needs string user and password');
      Object.assign(opts, { user: a.user, password: a.password });
    }
    if (o.maxInFlight !== undefined) {
      if (!Number.isSafeInteger(o.maxInFlight) || o.maxInFlight < 1 || o.maxInFlight > 2 ** 32 - 1) {
        throw invalid(`maxInFlight must be a positive whole number, got ${describe(o.maxInFlight)}`);
      }
      opts.maxInFlight = o.maxInFlight;
    }
    const tls = toTls(o.tls);
    if (tls) opts.tls = tls;
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
    return this.#acquire(signal, (c, token) => c.lock(n, ttl, timeout, token, value), (nl) => new Lock(nl, this));
  }

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
  async semaphore(name, options) {
    log.refresh(native);
    const n = toBytes(name, 'name');
    const o = toOptions(options, 'options');
    const permits = toPermits(o.permits);
    const ttl = o.ttl === undefined ? DEFAULT_LOCK_TTL : toTtl(o.ttl, 'ttl');
    const { timeout, signal, value } = acquireOptions(o, [], 'semaphore()');
    return this.#acquire(signal, (c, token) => c.semaphore(n, permits, ttl, timeout, token, value), (nl) => new Lock(nl, this));
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
   * Any acquire (a lock, a permit, a read or write, a campaign): AbortSignal, the error
   * conversion and ownership, the same for all.
   * @template {Lock} L
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
   * `etcdlock_lock_wait_seconds` ...), for a `/metrics` endpoint.
   * @returns {string}
   */
  metricsText() {
    return this.#native ? this.#native.metricsText() : native.emptyMetricsText();
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
   * `ifHeld: lock`, the write happens only if that lock is still held (checked by etcd in the
   * same transaction) and rejects `NOT_HELD`, writing nothing, otherwise.
   * @param {Bytes} key
   * @param {Bytes} value
   * @param {{ lease?: Lease, ifHeld?: Lock }} [options] `ifHeld`: a lock, a permit, a read or write, or a leadership
   * @returns {Promise<bigint>} the revision of the write
   */
  async put(key, value, options) {
    const k = toBytes(key, 'key');
    const v = toBytes(value, 'value');
    const o = toOptions(options, 'options');
    const lease = o.lease === undefined || o.lease === null ? undefined : checkLease(o.lease);
    if (o.ifHeld !== undefined && o.ifHeld !== null) {
      if (!(o.ifHeld instanceof Lock)) throw invalid(`ifHeld must be a Lock (or a Leadership), got ${describe(o.ifHeld)}`);
      await this.#client();
      return o.ifHeld.put(k, v, { lease });
    }
    const client = await this.#client();
    try {
      return await client.put(k, v, lease && leaseNative(lease));
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
        for (const o of this.#owned) if (o instanceof Registration) registrationEnded(o);
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
    forget = (client, obj) => client.#owned.delete(obj);
    clientNative = (client) => client.#client();
    acquireWith = (client, signal, start, wrap) => client.#acquire(signal, start, wrap);
  }
}

/**
 * The diagnostics_channel names the library publishes its events on, one per area. Each message
 * is `{ level, area, message, fields }`: level 'error' | 'warn' | 'info' | 'debug', the event's
 * fixed message, and its fields (`lock`, `token`, `reason`, `held_ms`, `lease`, `member`...).
 * Debug events (each acquisition and release) are sent while a channel has subscribers, as seen
 * at each `new Client()` and `lock()`, or with NODE_DEBUG=etcdlock (which prints every event).
 * @readonly
 */
const logChannels = log.channels;

module.exports = { Client, Lock, Leadership, Election, Observer, RwLock, Lease, Watch, Registration, Discovery, EtcdlockError, AbortError, codes, logChannels, setCallerSpin, callerSpin, grpcEndpoint, grpcEndpointAddr, MAX_PERMITS };
