/* Fences checked by PostgreSQL through examples/fence_pg.c's statement (libpq), against the
 * suite's etcd and a throwaway PostgreSQL started by tests/test_fence_pg.py, which runs this
 * program with the DSN as argv[1]: a task claim's fence at the database, and 8 threads writing
 * through the check under READ COMMITTED. Scenario IDs of tests/conformance/scenarios.md are
 * named in `covers:` comments. */
#include "check.h"
#include "fence_pg_example.h"
#include <pthread.h>
#include <stdatomic.h>

static const char *g_dsn;

/* The ledger's writers of `resource`, in commit order, comma-separated, in `out`. */
static void writers_of(PGconn *db, const char *resource, char *out, size_t len) {
    const char *params[1] = {resource};
    PGresult *r = PQexecParams(db, "SELECT string_agg(writer, ',' ORDER BY seq) FROM ledger WHERE resource = $1", 1, NULL, params, NULL, NULL, 0);
    snprintf(out, len, "%s", PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 ? PQgetvalue(r, 0, 0) : "?");
    PQclear(r);
}

/* A task's fence parsed by the example's parser into `f` (checked). */
static int task_fence(etcdlock_task *task, char **text, struct fence *f) {
    CHECK_RC(etcdlock_task_fence(task, text), ETCDLOCK_OK);
    int ok = *text && parse_fence(*text, f) == 0;
    CHECK(ok);
    return ok;
}

/* covers: FENCE-TASK-001 (the database's side; the claim's fence in etcd is tests/test_fence.c's) */
static void test_a_later_claims_write_makes_the_database_refuse_the_earlier_claim(void) {
    PGconn *db = ledger_connect(g_dsn);
    CHECK(db != NULL);
    etcdlock_client *c = connect_client();
    char name[128], rows[256];
    unique(name, sizeof name, "fence-db-task");
    etcdlock_queue *q = NULL;
    etcdlock_task *first = NULL, *second = NULL;
    char *t1 = NULL, *t2 = NULL;
    struct fence f1, f2;
    CHECK_RC(etcdlock_queue_open(c, name, 10, 5, &q), ETCDLOCK_OK);
    CHECK_RC(etcdlock_queue_put(q, (const uint8_t *)"job", 3, "job", 0, 0, NULL), ETCDLOCK_OK);
    CHECK_RC(etcdlock_queue_claim(q, 5000, NULL, NULL, 0, &first), ETCDLOCK_OK);
    if (!db || !first || !task_fence(first, &t1, &f1)) goto out;
    /* The mark is the claim lock's: `<queue>/claim/<slot>`. */
    CHECK(strncmp(f1.resource, name, strlen(name)) == 0 && strncmp(f1.resource + strlen(name), "/claim/", 7) == 0);
    CHECK(ledger_txn(db, &f1, "first") == 0);
    CHECK(ledger_txn(db, &f1, "first-again") == 0); /* the same claim again: >= */
    CHECK_RC(etcdlock_task_nack(first, 0), ETCDLOCK_OK);
    CHECK_RC(etcdlock_queue_claim(q, 5000, NULL, NULL, 0, &second), ETCDLOCK_OK);
    if (!second || !task_fence(second, &t2, &f2)) goto out;
    CHECK(strcmp(f2.resource, f1.resource) == 0 && strtoll(f2.token, NULL, 10) > strtoll(f1.token, NULL, 10));
    CHECK(ledger_txn(db, &f2, "second") == 0);
    /* The first delivery's late write: refused by the database, nothing written. */
    CHECK(ledger_txn(db, &f1, "first-late") == 3);
    writers_of(db, f1.resource, rows, sizeof rows);
    CHECK(strcmp(rows, "first,first-again,second") == 0);
    if (strcmp(rows, "first,first-again,second") != 0) fprintf(stderr, "  ledger: %s\n", rows);
    CHECK_RC(etcdlock_task_ack(second, NULL), ETCDLOCK_OK);
out:
    etcdlock_string_free(t2);
    etcdlock_string_free(t1);
    etcdlock_task_free(second);
    etcdlock_task_free(first);
    etcdlock_queue_free(q);
    etcdlock_client_free(c);
    PQfinish(db);
}

enum { WRITERS = 8, PER_WRITER = 5, TOKENS = WRITERS * PER_WRITER, FIRST_TOKEN = 100 };

struct writers {
    struct fence base; /* the resource and the cluster; each write has its own token */
    pthread_barrier_t go;
    pthread_mutex_t mu;
    int committed[TOKENS], n_committed, refused, failed;
};

struct writer {
    struct writers *all;
    int index;
};

/* One writer: its own connection (READ COMMITTED), tokens index, index + 8, ...; a random
 * pause between the check and the commit for the others to race into. */
static void *write_tokens(void *arg) {
    struct writer *w = arg;
    struct writers *all = w->all;
    PGconn *db = PQconnectdb(g_dsn);
    int ok = PQstatus(db) == CONNECTION_OK;
    char label[16];
    snprintf(label, sizeof label, "w%d", w->index);
    unsigned seed = (unsigned)w->index * 7919u + (unsigned)getpid();
    pthread_barrier_wait(&all->go);
    for (int k = w->index; ok && k < TOKENS; k += WRITERS) {
        struct fence f = all->base;
        snprintf(f.token, sizeof f.token, "%d", FIRST_TOKEN + k);
        int rc = 1;
        if (exec_ok(db, "BEGIN ISOLATION LEVEL READ COMMITTED") == 0) {
            rc = ledger_write(db, &f, label);
            if (rc == 0) {
                sleep_ms(rand_r(&seed) % 3);
                if (exec_ok(db, "COMMIT") != 0) rc = 1;
            } else {
                exec_ok(db, "ROLLBACK");
            }
        }
        pthread_mutex_lock(&all->mu);
        if (rc == 0) all->committed[all->n_committed++] = FIRST_TOKEN + k;
        else if (rc == 3) all->refused++;
        else all->failed++;
        pthread_mutex_unlock(&all->mu);
    }
    if (!ok) {
        fprintf(stderr, "  writer %d: %s", w->index, PQerrorMessage(db));
        pthread_mutex_lock(&all->mu);
        all->failed++;
        pthread_mutex_unlock(&all->mu);
    }
    PQfinish(db);
    return NULL;
}

static int by_value(const void *a, const void *b) {
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* covers: FENCE-CONCURRENT-001 */
static void test_eight_writers_under_read_committed_never_commit_a_stale_token(void) {
    PGconn *db = ledger_connect(g_dsn);
    CHECK(db != NULL);
    etcdlock_client *c = connect_client();
    char name[128];
    unique(name, sizeof name, "fence-db-busy");
    static struct writers all;
    memset(&all, 0, sizeof all);
    /* The fence's parts from a real lock of the resource (its cluster), then tokens 100..139. */
    etcdlock_lock *lock = NULL;
    char *text = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 5000, NULL, &lock), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_fence(lock, &text), ETCDLOCK_OK);
    int ok = db && text && parse_fence(text, &all.base) == 0;
    CHECK(ok);
    etcdlock_string_free(text);
    CHECK_RC(etcdlock_lock_release(lock), ETCDLOCK_OK);
    etcdlock_lock_free(lock);
    etcdlock_client_free(c);
    if (!ok) goto out;
    pthread_barrier_init(&all.go, NULL, WRITERS);
    pthread_mutex_init(&all.mu, NULL);
    pthread_t threads[WRITERS];
    struct writer ws[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        ws[i] = (struct writer){&all, i};
        CHECK(pthread_create(&threads[i], NULL, write_tokens, &ws[i]) == 0);
    }
    for (int i = 0; i < WRITERS; i++) pthread_join(threads[i], NULL);
    CHECK(all.failed == 0 && all.n_committed + all.refused == TOKENS);
    /* The table in commit order (the ledger's seq, taken while the mark's row is locked). */
    const char *params[1] = {all.base.resource};
    PGresult *r = PQexecParams(db, "SELECT token FROM ledger WHERE resource = $1 ORDER BY seq", 1, NULL, params, NULL, NULL, 0);
    int n = PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) : -1;
    CHECK(n == all.n_committed);
    int in_order[TOKENS], back = 0;
    for (int i = 0; i < n && i < TOKENS; i++) {
        in_order[i] = atoi(PQgetvalue(r, i, 0));
        if (i > 0 && in_order[i] < in_order[i - 1]) back++;
    }
    PQclear(r);
    if (back) {
        fprintf(stderr, "  a stale token committed after a newer one:");
        for (int i = 0; i < n && i < TOKENS; i++) fprintf(stderr, " %d", in_order[i]);
        fprintf(stderr, "\n");
    }
    CHECK(back == 0);
    /* The table holds exactly the writes reported committed; the newest token is among them. */
    qsort(all.committed, (size_t)all.n_committed, sizeof(int), by_value);
    if (n == all.n_committed && n <= TOKENS) {
        qsort(in_order, (size_t)n, sizeof(int), by_value);
        CHECK(memcmp(in_order, all.committed, (size_t)n * sizeof(int)) == 0);
    }
    CHECK(all.n_committed > 0 && all.committed[all.n_committed - 1] == FIRST_TOKEN + TOKENS - 1);
    printf("# FENCE-CONCURRENT-001: %d committed, %d refused\n", all.n_committed, all.refused);
    pthread_mutex_destroy(&all.mu);
    pthread_barrier_destroy(&all.go);
out:
    PQfinish(db);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_dsn = argc > 1 ? argv[1] : getenv("ETCDLOCK_PG_DSN");
    if (!g_dsn) {
        printf("FAIL - test_fence_db: no PostgreSQL DSN (argv[1] or ETCDLOCK_PG_DSN)\n");
        return 1;
    }
    RUN(test_a_later_claims_write_makes_the_database_refuse_the_earlier_claim);
    RUN(test_eight_writers_under_read_committed_never_commit_a_stale_token);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    return summary("test_fence_db");
}
