'use strict';
// Argument checks: each public entry point checks and converts what it is given here, and
// throws INVALID_ARGUMENT before anything is sent.

const native = require('./addon.js');
const { invalid, fromNative } = require('./errors.js');

/** Lock TTL in seconds when `lock()` is not given one. */
const DEFAULT_LOCK_TTL = 10;
/** Connect and request timeout in milliseconds when the client options do not give one. */
const DEFAULT_TIMEOUT_MS = 5000;
const I64_MAX = (1n << 63n) - 1n;

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

/** A semaphore's permit count (or `count`, the permits one acquisition takes): a whole number from 1 to MAX_PERMITS. */
function toPermits(v, what = 'permits') {
  if (v === undefined) throw invalid(`${what} is required (a whole number from 1 to ${MAX_PERMITS})`);
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > MAX_PERMITS) {
    throw invalid(`${what} must be a whole number from 1 to ${MAX_PERMITS}, got ${describe(v)}`);
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

/**
 * The native client's connect options from `new Client(options)`'s (see ClientOptions).
 * @param {unknown} options
 */
function toConnectOptions(options) {
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
  if (o.name !== undefined) {
    if (typeof o.name !== 'string') throw invalid(`name must be a string, got ${describe(o.name)}`);
    opts.name = o.name;
  }
  return opts;
}

module.exports = {
  DEFAULT_LOCK_TTL,
  MAX_PERMITS,
  describe,
  toBytes,
  toOptions,
  toTtl,
  toMillis,
  toRevision,
  toSignal,
  toTls,
  toPermits,
  acquireOptions,
  checkHandle,
  toFlag,
  toCallback,
  toConnectOptions,
};
