/**
 * A node-postgres client (or a pool's client): what `pg` calls `query(text, values)`.
 */
export type PgClient = {
    query(text: string, values?: unknown[]): Promise<{
        rows: any[];
    }>;
};
/**
 * A SQLite database handle of `better-sqlite3` (`Database`) or `node:sqlite` (`DatabaseSync`):
 * both have `exec(sql)` and `prepare(sql).get(...params)`.
 */
export type SqliteDatabase = {
    exec(sql: string): unknown;
    prepare(sql: string): {
        get(...params: unknown[]): any;
    };
};
import { Fence } from "./fence.js";
import { StaleFence } from "./fence.js";
/**
 * A node-postgres client (or a pool's client): what `pg` calls `query(text, values)`.
 * @typedef {{ query(text: string, values?: unknown[]): Promise<{ rows: any[] }> }} PgClient
 */
/** The fence check on a node-postgres (`pg`) client, inside the caller's transaction. */
export const pg: Readonly<{
    /**
     * Creates the table of marks if it is not there (in the client's current transaction, if any).
     * @param {PgClient} client
     * @returns {Promise<void>}
     */
    install(client: PgClient): Promise<void>;
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
    check(client: PgClient, fence: Fence | string, resource?: string): Promise<bigint>;
}>;
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
export const sqlite: Readonly<{
    /**
     * Creates the table of marks if it is not there.
     * @param {SqliteDatabase} db
     * @returns {void}
     */
    install(db: SqliteDatabase): void;
    /**
     * In the caller's transaction: throws {@link StaleFence} (code `NOT_HELD`) unless `fence` may
     * write `resource` (the lock's name by default), and raises the mark to its token. Returns it.
     * @param {SqliteDatabase} db
     * @param {Fence | string} fence
     * @param {string} [resource]
     * @returns {bigint}
     */
    check(db: SqliteDatabase, fence: Fence | string, resource?: string): bigint;
}>;
/** The table the marks are kept in. @type {string} */
export const TABLE: string;
/** Creates the table of marks (resource, cluster, token). @type {string} */
export const DDL: string;
export { Fence, StaleFence };
