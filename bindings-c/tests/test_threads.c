/* Contention from many threads: FIFO order of waiters, no two holders at once (a counter in
 * etcd updated with fenced writes, and a local holder count), strictly increasing tokens. */
#include "check.h"
#include <pthread.h>
#include <stdatomic.h>

#define K(s) (const uint8_t *)(s), strlen(s)

static char g_name[128], g_counter[160];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t g_last_token;
static atomic_int g_holders, g_overlaps, g_errors, g_token_regressions;

/* Bookkeeping for one held lock: overlap and token order. */
static void enter(etcdlock_lock *l) {
    if (atomic_fetch_add(&g_holders, 1) != 0) atomic_fetch_add(&g_overlaps, 1);
    int64_t t = etcdlock_lock_fencing_token(l);
    pthread_mutex_lock(&g_mu);
    if (t <= g_last_token) atomic_fetch_add(&g_token_regressions, 1);
    g_last_token = t;
    pthread_mutex_unlock(&g_mu);
}

/* Read-modify-write of the counter, fenced by the lock: lost updates would show overlap. */
static void bump(etcdlock_client *c, etcdlock_lock *l) {
    etcdlock_buf *b = NULL;
    long n = 0;
    if (etcdlock_get(c, K(g_counter), &b) != ETCDLOCK_OK) atomic_fetch_add(&g_errors, 1);
    if (b) {
        char tmp[32] = {0};
        memcpy(tmp, etcdlock_buf_data(b), etcdlock_buf_len(b) < 31 ? etcdlock_buf_len(b) : 31);
        n = atol(tmp);
        etcdlock_buf_free(b);
    }
    char v[32];
    snprintf(v, sizeof v, "%ld", n + 1);
    if (etcdlock_put(c, K(g_counter), K(v), l) != ETCDLOCK_OK) atomic_fetch_add(&g_errors, 1);
}

struct worker {
    etcdlock_client *client;
    int id, cycles;
    int order; /* FIFO phase: position at which this thread got the lock */
};

static atomic_int g_next_order;

static void *fifo_worker(void *p) {
    struct worker *w = p;
    etcdlock_lock *l = NULL;
    int rc = etcdlock_lock_acquire(w->client, g_name, 10, 20000, NULL, &l);
    if (rc != ETCDLOCK_OK) {
        atomic_fetch_add(&g_errors, 1);
        return NULL;
    }
    enter(l);
    w->order = atomic_fetch_add(&g_next_order, 1);
    sleep_ms(20);
    atomic_fetch_sub(&g_holders, 1);
    if (etcdlock_lock_release(l) != ETCDLOCK_OK) atomic_fetch_add(&g_errors, 1);
    etcdlock_lock_free(l);
    return NULL;
}

static void *stress_worker(void *p) {
    struct worker *w = p;
    for (int i = 0; i < w->cycles; i++) {
        etcdlock_lock *l = NULL;
        if (etcdlock_lock_acquire(w->client, g_name, 10, 30000, NULL, &l) != ETCDLOCK_OK) {
            atomic_fetch_add(&g_errors, 1);
            continue;
        }
        enter(l);
        bump(w->client, l);
        atomic_fetch_sub(&g_holders, 1);
        if (etcdlock_lock_release(l) != ETCDLOCK_OK) atomic_fetch_add(&g_errors, 1);
        etcdlock_lock_free(l);
    }
    return NULL;
}

enum { THREADS = 8, CLIENTS = 4, CYCLES = 10 };

static etcdlock_client *g_clients[CLIENTS];

/* covers: LOCK-FIFO-001, LOCK-TOKEN-001 */
static void test_fifo(void) {
    unique(g_name, sizeof g_name, "fifo");
    etcdlock_lock *first = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_clients[0], g_name, 10, 0, NULL, &first), ETCDLOCK_OK);
    struct worker w[THREADS];
    pthread_t t[THREADS];
    char prefix[140];
    snprintf(prefix, sizeof prefix, "%s/", g_name);
    for (int i = 0; i < THREADS; i++) {
        /* Threads on the same client and on different clients queue alike. Each one's queue
         * key is in etcd before the next thread starts: the queue order is the start order. */
        w[i] = (struct worker){g_clients[i % CLIENTS], i, 0, -1};
        pthread_create(&t[i], NULL, fifo_worker, &w[i]);
        CHECK(wait_keys(prefix, i + 2) == i + 2);
    }
    CHECK(count_keys(prefix) == THREADS + 1);
    CHECK_RC(etcdlock_lock_release(first), ETCDLOCK_OK);
    etcdlock_lock_free(first);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        if (w[i].order != i) fprintf(stderr, "  thread %d got the lock at position %d\n", i, w[i].order);
        CHECK(w[i].order == i);
    }
    CHECK(atomic_load(&g_overlaps) == 0);
    CHECK(atomic_load(&g_errors) == 0);
    CHECK(atomic_load(&g_token_regressions) == 0);
    CHECK(count_keys(prefix) == 0);
}

/* covers: LOCK-EXCL-001, LOCK-TOKEN-001, LOCK-GUARD-001 (every increment is a guarded write) */
static void test_no_overlap(void) {
    unique(g_name, sizeof g_name, "stress");
    snprintf(g_counter, sizeof g_counter, "%s-counter", g_name);
    g_last_token = 0;
    struct worker w[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){g_clients[i % CLIENTS], i, CYCLES, -1};
        pthread_create(&t[i], NULL, stress_worker, &w[i]);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(g_clients[0], K(g_counter), &b), ETCDLOCK_OK);
    char tmp[32] = {0};
    if (b) memcpy(tmp, etcdlock_buf_data(b), etcdlock_buf_len(b) < 31 ? etcdlock_buf_len(b) : 31);
    etcdlock_buf_free(b);
    if (atol(tmp) != THREADS * CYCLES) fprintf(stderr, "  counter %s, want %d\n", tmp, THREADS * CYCLES);
    CHECK(atol(tmp) == THREADS * CYCLES);
    CHECK(atomic_load(&g_overlaps) == 0);
    CHECK(atomic_load(&g_errors) == 0);
    CHECK(atomic_load(&g_token_regressions) == 0);
    CHECK_RC(etcdlock_delete(g_clients[0], K(g_counter)), ETCDLOCK_OK);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 0; i < CLIENTS; i++) {
        if (etcdlock_client_new(endpoints(), NULL, &g_clients[i]) != ETCDLOCK_OK) {
            printf("FAIL - connect to %s\n", endpoints());
            return 1;
        }
    }
    RUN(test_fifo);
    RUN(test_no_overlap);
    for (int i = 0; i < CLIENTS; i++) etcdlock_client_free(g_clients[i]);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    return summary("test_threads");
}
