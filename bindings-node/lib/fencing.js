'use strict';
// `etcdlock/fencing`: fencing at the database. A high-water mark per resource (the lock's name
// by default), checked and raised by one statement inside the caller's own transaction, before
// its writes, so that the writes commit only if no newer holder of the lock has written:
//
//   const { pg: fence } = require('etcdlock/fencing');
//   await fence.install(db);                       // once: CREATE TABLE IF NOT EXISTS etcdlock_fence
//   await using lock = await client.lock('accounts/7');
//   await db.query('BEGIN');
//   await fence.check(db, await lock.fence());     // StaleFence (code NOT_HELD) if a newer holder wrote
//   await db.query('UPDATE accounts SET balance = balance - 5 WHERE id = 7');
//   await db.query('COMMIT');
//
// The mark is `>=`: the same holder's repeated writes pass. A fence of another etcd cluster is
// refused with a message saying an operator must reset the mark. The same table and statement as
// every other binding's helpers (docs/design.md, "Fencing at the database"). The database
// drivers are not dependencies of etcdlock: pass your own connection (node-postgres `pg`, or a
// SQLite database of `better-sqlite3` or `node:sqlite`). This module does not load the native
// addon.

const { Fence, StaleFence } = require('./fence.js');
const { invalid } = require('./errors.js');

/** The table the marks are kept in. @type {string} */
const TABLE = 'etcdlock_fence';

/** Creates the table of marks (resource, cluster, token). @type {string} */
const DDL = `CREATE TABLE IF NOT EXISTS ${TABLE} (
    resource TEXT PRIMARY KEY,
    cluster  TEXT NOT NULL,
    token    BIGINT NOT NULL
)`;

// Inserts the mark, or raises it to the fence's token if the fence is of the same cluster and not
// older: one row back when the fence may write, none when it is stale (or of another cluster). In
// PostgreSQL the conflicting row stays locked until the caller's transaction ends, so a concurrent
// check waits and then judges the committed mark (READ COMMITTED suffices).
/** @param {(i: number) => string} p */
const checkSql = (p) => `INSERT INTO ${TABLE} (resource, cluster, token) VALUES (${p(1)}, ${p(2)}, ${p(3)})
ON CONFLICT (resource) DO UPDATE SET token = excluded.token
WHERE ${TABLE}.cluster = excluded.cluster AND ${TABLE}.token <= excluded.token
RETURNING token`;
/** @param {(i: number) => string} p */
const markSql = (p) => `SELECT cluster, token FROM ${TABLE} WHERE resource = ${p(1)}`;

const PG_CHECK = checkSql((i) => `$${i}`);
const PG_MARK = markSql((i) => `$${i}`);
const SQLITE_CHECK = checkSql(() => '?');
const SQLITE_MARK = markSql(() => '?');

/**
 * The check's arguments: the fence, the resource, the statement's parameters.
 * @param {Fence | string} fence
 * @param {string | undefined | null} resource
 * @returns {{ f: Fence, res: string, cluster: string }}
 */
function args(fence, resource) {
  const f = Fence.parse(fence);
  const res = resource === undefined || resource === null ? f.resource : resource;
  if (typeof res !== 'string' || res.length === 0) throw invalid('resource must be a non-empty string');
  return { f, res, cluster: f.cluster.toString(16) };
}

/**
 * Why the database refused `f` for `res`, given the mark it has (or none).
 * @param {Fence} f
 * @param {string} res
 * @param {{ cluster: string, token: unknown } | undefined} mark
 * @returns {StaleFence}
 */
function refused(f, res, mark) {
  const cluster = f.cluster.toString(16);
  if (mark && String(mark.cluster) !== cluster) {
    return new StaleFence(
      `the fence for ${JSON.stringify(res)} is of etcd cluster ${cluster}, but the mark was set by cluster ${mark.cluster}: ` +
        'tokens of two clusters are not comparable (was etcd restored or replaced?); an operator must reset the mark: ' +
        `DELETE FROM ${TABLE} WHERE resource = '${res}'`,
    );
  }
  return new StaleFence(`stale fence for ${JSON.stringify(res)}: token ${f.token}, but a newer holder wrote with token ${mark ? String(mark.token) : '?'}`);
}

/**
 * A node-postgres client (or a pool's client): what `pg` calls `query(text, values)`.
 * @typedef {{ query(text: string, values?: unknown[]): Promise<{ rows: any[] }> }} PgClient
 */

/** The fence check on a node-postgres (`pg`) client, inside the caller's transaction. */
const pg = Object.freeze({
  /**
   * Creates the table of marks if it is not there (in the client's current transaction, if any).
   * @param {PgClient} client
   * @returns {Promise<void>}
   */
  async install(client) {
    await client.query(DDL);
  },

  /**
   * In the caller's transaction (`BEGIN` first; check before the writes): rejects with
   * {@link StaleFence} (code `NOT_HELD`) unless `fence` may write `resource` (the lock's name by
   * default), and raises the mark to its token. Under READ COMMITTED the mark's row lock makes a
   * concurrent check wait for this transaction, then judge the committed mark. After a
   * rejection, roll the transaction back. Resolves to the mark (the fence's token).
   * @param {PgClient} client
   * @param {Fence | string} fence
   * @param {string} [resource]
   * @returns {Promise<bigint>}
   */
  async check(client, fence, resource) {
    const { f, res, cluster } = args(fence, resource);
    const r = await client.query(PG_CHECK, [res, cluster, f.token.toString()]);
    if (r.rows.length === 0) {
      const mark = await client.query(PG_MARK, [res]);
      throw refused(f, res, mark.rows[0]);
    }
    return BigInt(r.rows[0].token);
  },
});

/**
 * A SQLite database handle of `better-sqlite3` (`Database`) or `node:sqlite` (`DatabaseSync`):
 * both have `exec(sql)` and `prepare(sql).get(...params)`.
 * @typedef {{ exec(sql: string): unknown, prepare(sql: string): { get(...params: unknown[]): any } }} SqliteDatabase
 */

/**
 * The fence check on a SQLite database (synchronous). SQLite runs one writer at a time: begin the
 * transaction with `BEGIN IMMEDIATE` (or let the check's INSERT take the write lock), check,
 * write, commit.
 */
const sqlite = Object.freeze({
  /**
   * Creates the table of marks if it is not there.
   * @param {SqliteDatabase} db
   * @returns {void}
   */
  install(db) {
    db.exec(DDL);
  },

  /**
   * In the caller's transaction: throws {@link StaleFence} (code `NOT_HELD`) unless `fence` may
   * write `resource` (the lock's name by default), and raises the mark to its token. Returns it.
   * @param {SqliteDatabase} db
   * @param {Fence | string} fence
   * @param {string} [resource]
   * @returns {bigint}
   */
  check(db, fence, resource) {
    const { f, res, cluster } = args(fence, resource);
    const row = bigInts(db.prepare(SQLITE_CHECK)).get(res, cluster, f.token);
    if (row === undefined) throw refused(f, res, bigInts(db.prepare(SQLITE_MARK)).get(res));
    return BigInt(row.token);
  },
});

/**
 * A statement that reads integers as bigints (better-sqlite3's `safeIntegers`, node:sqlite's
 * `setReadBigInts`): tokens are 64-bit.
 * @template {object} S
 * @param {S} st
 * @returns {S}
 */
function bigInts(st) {
  const s = /** @type {any} */ (st);
  if (typeof s.safeIntegers === 'function') s.safeIntegers(true);
  else if (typeof s.setReadBigInts === 'function') s.setReadBigInts(true);
  return st;
}

module.exports = { Fence, StaleFence, pg, sqlite, TABLE, DDL };
