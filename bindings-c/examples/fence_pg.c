/* fence_pg.c: database access control with libpq. Takes a lock, gets its fence, and writes to
 * PostgreSQL in one transaction that first checks the fence against the mark the database
 * keeps for the lock's name (README.md, "Database access control"): the write commits only if
 * no newer holder of the lock has written.
 *
 *   cc fence_pg.c $(pkg-config --cflags --libs etcdlock libpq) -o fence_pg
 *   ETCDLOCK_ENDPOINTS=http://127.0.0.1:2379 ./fence_pg "host=127.0.0.1 dbname=app" [NAME]
 *
 * The DSN is argv[1], else $ETCDLOCK_PG_DSN, else libpq's defaults ($PGHOST...). NAME is the
 * lock (default "examples/accounts/7"). With $ETCDLOCK_FENCE set (as `etcdlock run NAME -- CMD`
 * sets it for CMD) it writes through that fence instead of taking the lock itself.
 * Exit status: 0 committed, 3 refused by the database (stale fence, or another etcd cluster's:
 * nothing written), 2 a malformed fence, 1 any other failure.
 */
#include <ctype.h>
#include <etcdlock.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The table of marks, and the check: one row back when the fence may write (the mark is
 * inserted, or raised to the token: same cluster, not older), none when it is stale. Run it
 * first in the transaction that writes: the mark's row stays locked until COMMIT, so under READ
 * COMMITTED a concurrent check waits, then judges the committed mark. */
static const char *const FENCE_DDL =
    "CREATE TABLE IF NOT EXISTS etcdlock_fence (\n"
    "    resource TEXT PRIMARY KEY,\n"
    "    cluster  TEXT NOT NULL,\n"
    "    token    BIGINT NOT NULL\n"
    ")";
static const char *const FENCE_CHECK =
    "INSERT INTO etcdlock_fence (resource, cluster, token) VALUES ($1, $2, $3)\n"
    "ON CONFLICT (resource) DO UPDATE SET token = excluded.token\n"
    "WHERE etcdlock_fence.cluster = excluded.cluster AND etcdlock_fence.token <= excluded.token\n"
    "RETURNING token";
static const char *const FENCE_MARK = "SELECT cluster, token FROM etcdlock_fence WHERE resource = $1";

/* A fence's parts as the check's parameters: the resource (the lock's name), the etcd
 * cluster's ID in lower-case hex and the token in decimal. */
struct fence {
    char resource[512];
    char cluster[17];
    char token[21];
};

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Reads `etcdlock-fence.v1.<q|k>.<cluster hex>.<token>.<name hex>`; 0 on success. */
static int parse_fence(const char *s, struct fence *f) {
    static const char prefix[] = "etcdlock-fence.v1.";
    if (strncmp(s, prefix, sizeof prefix - 1) != 0) return -1;
    s += sizeof prefix - 1;
    if ((s[0] != 'q' && s[0] != 'k') || s[1] != '.') return -1;
    s += 2;
    /* The cluster: 1 to 16 hex digits. */
    uint64_t cluster = 0;
    int n = 0;
    for (; hexval(s[n]) >= 0; n++) cluster = cluster << 4 | (uint64_t)hexval(s[n]);
    if (n == 0 || n > 16 || s[n] != '.') return -1;
    s += n + 1;
    /* The token: canonical decimal (no sign, no leading zero), 1 to 2^63 - 1. */
    uint64_t token = 0;
    for (n = 0; isdigit((unsigned char)s[n]); n++) {
        if (n == 19 || token > (UINT64_C(9223372036854775807) - (uint64_t)(s[n] - '0')) / 10) return -1;
        token = token * 10 + (uint64_t)(s[n] - '0');
    }
    if (n == 0 || s[0] == '0' || s[n] != '.') return -1;
    s += n + 1;
    /* The name: an even number of hex digits, not empty; the resource is its bytes. */
    size_t len = strlen(s);
    if (len == 0 || len % 2 != 0 || len / 2 >= sizeof f->resource) return -1;
    for (size_t i = 0; i < len; i += 2) {
        int hi = hexval(s[i]), lo = hexval(s[i + 1]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return -1; /* no NUL in a text resource */
        f->resource[i / 2] = (char)(hi << 4 | lo);
    }
    f->resource[len / 2] = '\0';
    snprintf(f->cluster, sizeof f->cluster, "%" PRIx64, cluster);
    snprintf(f->token, sizeof f->token, "%" PRIu64, token);
    return 0;
}

static int etcd_fail(const char *what, int rc) {
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    fprintf(stderr, "%s: %s (%s)\n", what, etcdlock_status_str(rc), msg);
    return 1;
}

/* Runs `sql` (no parameters); 0 if it succeeded. */
static int exec_ok(PGconn *db, const char *sql) {
    PGresult *r = PQexec(db, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok) fprintf(stderr, "%s: %s", sql, PQerrorMessage(db));
    PQclear(r);
    return ok ? 0 : -1;
}

/* In the open transaction: the fence check. 0 may write, 3 refused (why printed), 1 failed. */
static int check_fence(PGconn *db, const struct fence *f) {
    const char *params[3] = {f->resource, f->cluster, f->token};
    PGresult *r = PQexecParams(db, FENCE_CHECK, 3, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        fprintf(stderr, "fence check: %s", PQerrorMessage(db));
        PQclear(r);
        return 1;
    }
    int rows = PQntuples(r);
    PQclear(r);
    if (rows == 1) return 0;
    /* Refused: say why, from the mark. */
    r = PQexecParams(db, FENCE_MARK, 1, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), f->cluster) != 0) {
        printf("refused: the fence for \"%s\" is of etcd cluster %s, but the mark was set by cluster %s: tokens of two "
               "clusters are not comparable (was etcd restored or replaced?); an operator must reset the mark: "
               "DELETE FROM etcdlock_fence WHERE resource = '%s'\n",
               f->resource, f->cluster, PQgetvalue(r, 0, 0), f->resource);
    } else {
        printf("refused: stale fence for \"%s\": token %s, but a newer holder wrote with token %s\n", f->resource, f->token,
               PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 ? PQgetvalue(r, 0, 1) : "?");
    }
    PQclear(r);
    return 3;
}

/* One transaction: BEGIN, the fence check, the write, COMMIT (or ROLLBACK). */
static int fenced_write(PGconn *db, const struct fence *f) {
    if (exec_ok(db, "BEGIN") != 0) return 1;
    int rc = check_fence(db, f);
    if (rc == 0) {
        const char *params[2] = {f->resource, f->token};
        PGresult *r = PQexecParams(db, "UPDATE fence_example SET writes = writes + 1, last_token = $2 WHERE resource = $1",
                                   2, NULL, params, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            fprintf(stderr, "update: %s", PQerrorMessage(db));
            rc = 1;
        }
        PQclear(r);
    }
    if (rc == 0 && exec_ok(db, "COMMIT") == 0) {
        printf("committed with token %s\n", f->token);
        return 0;
    }
    exec_ok(db, "ROLLBACK"); /* nothing of the transaction is written */
    return rc == 0 ? 1 : rc;
}

/* Connects, creates the tables if missing (once, in a real application's migrations) and
 * writes through the fence. The exit status. */
static int write_through(const char *dsn, const struct fence *f) {
    int status = 1;
    PGconn *db = PQconnectdb(dsn ? dsn : "");
    if (PQstatus(db) != CONNECTION_OK) {
        fprintf(stderr, "connect to PostgreSQL: %s", PQerrorMessage(db));
    } else if (exec_ok(db, FENCE_DDL) == 0
               && exec_ok(db, "CREATE TABLE IF NOT EXISTS fence_example (resource TEXT PRIMARY KEY, writes INT NOT NULL, last_token BIGINT)") == 0) {
        const char *params[1] = {f->resource};
        PGresult *r = PQexecParams(db, "INSERT INTO fence_example VALUES ($1, 0, NULL) ON CONFLICT DO NOTHING", 1, NULL, params, NULL, NULL, 0);
        if (PQresultStatus(r) == PGRES_COMMAND_OK) {
            status = fenced_write(db, f);
        } else {
            fprintf(stderr, "insert: %s", PQerrorMessage(db));
        }
        PQclear(r);
    }
    PQfinish(db);
    return status;
}

int main(int argc, char **argv) {
    const char *dsn = argc > 1 ? argv[1] : getenv("ETCDLOCK_PG_DSN");
    const char *name = argc > 2 ? argv[2] : "examples/accounts/7";
    const char *endpoints = getenv("ETCDLOCK_ENDPOINTS");
    if (!endpoints) endpoints = "http://127.0.0.1:2379";

    /* A fence from elsewhere (another process, a request header), or this process's lock's. */
    const char *text = getenv("ETCDLOCK_FENCE");
    etcdlock_client *client = NULL;
    etcdlock_lock *lock = NULL;
    char *own = NULL;
    int rc;
    if (!text || !*text) {
        if ((rc = etcdlock_client_new(endpoints, NULL, &client)) != ETCDLOCK_OK) return etcd_fail("connect", rc);
        /* Wait at most 5 s for the lock; the holder's lease has a 10 s TTL, kept alive. */
        if ((rc = etcdlock_lock_acquire(client, name, 10, 5000, NULL, &lock)) != ETCDLOCK_OK) {
            etcdlock_client_free(client);
            return etcd_fail("lock", rc);
        }
        /* etcdlock-fence.v1.q.<cluster hex>.<token>.<name hex>: the lock's name, its token, etcd's ID */
        if ((rc = etcdlock_lock_fence(lock, &own)) != ETCDLOCK_OK) {
            etcdlock_lock_free(lock);
            etcdlock_client_free(client);
            return etcd_fail("fence", rc);
        }
        text = own;
    }
    printf("fence %s\n", text);
    struct fence f;
    int status;
    if (parse_fence(text, &f) != 0) {
        fprintf(stderr, "not an etcdlock fence: %s\n", text);
        status = 2;
    } else {
        status = write_through(dsn, &f);
    }
    if (lock && (rc = etcdlock_lock_release(lock)) != ETCDLOCK_OK) etcd_fail("release", rc);
    etcdlock_lock_free(lock);
    etcdlock_client_free(client);
    etcdlock_string_free(own);
    if (status == 0) printf("done\n");
    return status;
}
