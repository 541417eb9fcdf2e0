'use strict';
// The election (Election, its Leadership and Observer) and the read-write lock: each
// acquisition is a Lock taken by the core's fair lock.

/** @import { Client } from './client.js' */
/** @import { Bytes } from './args.js' */

const native = require('./addon.js');
const log = require('../log.js');
const { fromNative } = require('./errors.js');
const { toBytes, toOptions, acquireOptions } = require('./args.js');
const { Lock } = require('./lock.js');
const { Follower } = require('./follower.js');
const internal = require('./internal.js');
const trace = require('./trace.js');

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
      return await internal.lockNative(this).setValue(v);
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
    return trace.acquire('campaign', n, () => internal.acquireWith(client, signal, (c, token) => c.campaign(n, ttl, v, timeout, token), (nl) => new Leadership(nl, client)));
  }

  /**
   * The current leader, or null when nobody campaigns. Changes nothing.
   * @returns {Promise<Leader | null>}
   */
  async leader() {
    const c = await internal.clientNative(this.#client);
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
    return new Observer(internal.clientNative(this.#client).then((c) => c.observe(n, ttl)));
  }
}

/**
 * Leader changes of an election, from {@link Election#observe}: `for await (const leader of
 * observer)`, each a {@link Leader} or null (no leader). Changes that come faster than they are
 * read may be merged into the latest state, which is never skipped.
 * @implements {AsyncIterableIterator<Leader | null>}
 */
class Observer extends Follower {
  /**
   * Not constructed directly: {@link Election#observe} returns one.
   * @private
   * @param {Promise<any>} nativeObserver
   */
  constructor(nativeObserver) {
    super(nativeObserver, (change) => change.leader ?? null, undefined, 'The observer');
  }

  /**
   * The next change (the current leader on the first call); done once closed or the client
   * closed. Rejects `CLOSED` if the client was closed before the observer started.
   * @returns {Promise<IteratorResult<Leader | null, undefined>>}
   */
  next() {
    return super.next();
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
    return trace.acquire('acquire', n, () => internal.acquireWith(client, signal, (c, token) => c.rwlock(n, ttl, write, timeout, token, value), (nl) => new Lock(nl, client)));
  }
}

module.exports = { Leadership, Election, Observer, RwLock };
