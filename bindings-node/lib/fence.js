'use strict';
// Fences: what a holder passes to a database or another service so that it, not the holder,
// refuses a write from an acquisition that no longer holds. The string form is the one every
// etcdlock binding and the command line (ETCDLOCK_FENCE) share:
// `etcdlock-fence.v1.<q|k>.<cluster hex>.<token>.<name hex>`. Pure JavaScript: it does not load
// the native addon, so `etcdlock/fencing` serves a process that only checks fences it is given.

const { EtcdlockError, codes, invalid } = require('./errors.js');

const PREFIX = 'etcdlock-fence.v1.';
const U64_MAX = (1n << 64n) - 1n;
const I64_MAX = (1n << 63n) - 1n;

/**
 * What holds, for `client.checkFence` to look for: `'q'`, a key of a lock's queue (a lock, a
 * write lock, a leadership, a task's claim; a semaphore's permit or a read lock has one too, but
 * they are not exclusive); `'k'`, a single key (a pool's slot).
 * @typedef {'q' | 'k'} FenceKind
 */

/**
 * An acquisition, as a database or another service checks it: the lock's name, the
 * acquisition's fencing token and the etcd cluster's ID. From `await lock.fence()` (or a claimed
 * task's); `String(fence)` is its stable string form (for a request header, an environment
 * variable, another language's etcdlock), {@link Fence.parse} reads it back. Immutable.
 */
class Fence {
  /**
   * @param {FenceKind} kind
   * @param {Uint8Array | string} name the lock's name (bytes, or a string as UTF-8)
   * @param {bigint | number} token the fencing token (> 0)
   * @param {bigint | number} cluster the etcd cluster's ID (0 to 2^64 - 1)
   */
  constructor(kind, name, token, cluster) {
    if (kind !== 'q' && kind !== 'k') throw invalid(`a fence's kind is 'q' or 'k', got ${String(kind)}`);
    const n = typeof name === 'string' ? Buffer.from(name, 'utf8') : name instanceof Uint8Array ? Buffer.from(name) : null;
    if (n === null || n.length === 0) throw invalid("a fence's name must be a non-empty string or bytes");
    const t = toBig(token, "a fence's token");
    const c = toBig(cluster, "a fence's cluster");
    if (t <= 0n || t > I64_MAX) throw invalid(`a fence's token must be 1 to 2^63 - 1, got ${t}`);
    if (c < 0n || c > U64_MAX) throw invalid(`a fence's cluster must be 0 to 2^64 - 1, got ${c}`);
    /** @readonly @type {FenceKind} */
    this.kind = kind;
    /** The lock's name (for kind `'k'`, the key). A copy: changing it changes no fence. @readonly @type {Buffer} */
    this.name = n;
    /** The acquisition's fencing token: larger for every later acquisition of the name. @readonly @type {bigint} */
    this.token = t;
    /** The etcd cluster's ID (tokens of two clusters are not comparable). @readonly @type {bigint} */
    this.cluster = c;
    Object.freeze(this);
  }

  /** The default resource a database's mark is kept for: the lock's name, as UTF-8. @type {string} */
  get resource() {
    return this.name.toString('utf8');
  }

  /** The fence's string form. @returns {string} */
  toString() {
    return `${PREFIX}${this.kind}.${this.cluster.toString(16)}.${this.token}.${this.name.toString('hex')}`;
  }

  /** `JSON.stringify` writes the string form. @returns {string} */
  toJSON() {
    return this.toString();
  }

  /**
   * Whether `other` names the same acquisition.
   * @param {Fence} other
   * @returns {boolean}
   */
  equals(other) {
    return other instanceof Fence && other.kind === this.kind && other.token === this.token && other.cluster === this.cluster && other.name.equals(this.name);
  }

  /**
   * Reads a fence's string form (a Fence is returned as it is); `INVALID_ARGUMENT` if `s` is none.
   * @param {string | Fence} s
   * @returns {Fence}
   */
  static parse(s) {
    if (s instanceof Fence) return s;
    if (typeof s !== 'string') throw invalid(`a fence is a string or a Fence, got ${s === null ? 'null' : typeof s}`);
    const bad = () => invalid(`not an etcdlock fence: ${JSON.stringify(s.slice(0, 80))}`);
    if (!s.startsWith(PREFIX)) throw bad();
    const rest = s.slice(PREFIX.length);
    // Like Rust's splitn(4, '.'): the last part keeps whatever follows (and is then not hex).
    const parts = [];
    let at = 0;
    for (let i = 0; i < 3; i++) {
      const dot = rest.indexOf('.', at);
      if (dot < 0) throw bad();
      parts.push(rest.slice(at, dot));
      at = dot + 1;
    }
    parts.push(rest.slice(at));
    const [kind, cluster, token, name] = parts;
    if (kind !== 'q' && kind !== 'k') throw bad();
    if (!/^[0-9a-fA-F]{1,16}$/.test(cluster) || !/^[1-9][0-9]{0,18}$/.test(token)) throw bad();
    if (name.length === 0 || name.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(name)) throw bad();
    const t = BigInt(token);
    if (t > I64_MAX) throw bad();
    return new Fence(kind, Buffer.from(name, 'hex'), t, BigInt(`0x${cluster}`));
  }
}

/** @param {unknown} v @param {string} what @returns {bigint} */
function toBig(v, what) {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  throw invalid(`${what} must be a bigint (or a whole number below 2^53), got ${typeof v} ${String(v)}`);
}

/**
 * The database refused a fence: a newer holder of the lock has written (or the fence is of
 * another etcd cluster). Nothing the transaction writes may commit: roll it back. Its `code` is
 * `NOT_HELD`, as for any write of a holder that no longer holds.
 */
class StaleFence extends EtcdlockError {
  /** @param {string} message */
  constructor(message) {
    super(codes.NOT_HELD, message);
    this.name = 'StaleFence';
  }
}

module.exports = { Fence, StaleFence };
