/* examples/fence_pg.c's fence check as shipped (its table, statement, parser and the check in
 * an open transaction), for tests/test_fence_db.c and tests/fence_pg_holder.c: the tests write
 * through the very SQL and parser the README and the example give users. The example's main is
 * renamed out of the way. Include check.h first (it sets _GNU_SOURCE). */
#ifndef ETCDLOCK_TEST_FENCE_PG_EXAMPLE_H
#define ETCDLOCK_TEST_FENCE_PG_EXAMPLE_H

#define main fence_pg_example_main
#include "../examples/fence_pg.c"
#undef main

/* The ledger the tests write through the fence: `seq` is taken by the INSERT, after the check
 * locked the mark's row, so its order is the order of the commits of one resource. */
#define LEDGER_DDL                                                                                 \
    "CREATE TABLE IF NOT EXISTS ledger (seq BIGSERIAL PRIMARY KEY, resource TEXT NOT NULL, "       \
    "writer TEXT NOT NULL, token BIGINT NOT NULL)"

/* Connects and creates the mark's table and the ledger; NULL (printed) on failure. */
static inline PGconn *ledger_connect(const char *dsn) {
    PGconn *db = PQconnectdb(dsn);
    if (PQstatus(db) != CONNECTION_OK) {
        fprintf(stderr, "connect to PostgreSQL: %s", PQerrorMessage(db));
        PQfinish(db);
        return NULL;
    }
    /* CREATE TABLE IF NOT EXISTS races itself on the catalogue: one at a time. */
    if (exec_ok(db, "SELECT pg_advisory_lock(7355)") != 0 || exec_ok(db, FENCE_DDL) != 0 || exec_ok(db, LEDGER_DDL) != 0
        || exec_ok(db, "SELECT pg_advisory_unlock(7355)") != 0) {
        PQfinish(db);
        return NULL;
    }
    return db;
}

/* In the open transaction: the fence check (the example's), then `writer`'s row in the ledger.
 * 0 written (not yet committed), 3 refused by the check, 1 failed. */
static inline int ledger_write(PGconn *db, const struct fence *f, const char *writer) {
    int rc = check_fence(db, f);
    if (rc != 0) return rc;
    const char *params[3] = {f->resource, writer, f->token};
    PGresult *r = PQexecParams(db, "INSERT INTO ledger (resource, writer, token) VALUES ($1, $2, $3)", 3, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        fprintf(stderr, "insert: %s", PQerrorMessage(db));
        rc = 1;
    }
    PQclear(r);
    return rc;
}

/* One transaction under READ COMMITTED: BEGIN, ledger_write, COMMIT (ROLLBACK unless written).
 * 0 committed, 3 refused (nothing written), 1 failed. */
static inline int ledger_txn(PGconn *db, const struct fence *f, const char *writer) {
    if (exec_ok(db, "BEGIN ISOLATION LEVEL READ COMMITTED") != 0) return 1;
    int rc = ledger_write(db, f, writer);
    if (rc == 0 && exec_ok(db, "COMMIT") == 0) return 0;
    exec_ok(db, "ROLLBACK");
    return rc == 0 ? 1 : rc;
}

#endif
