/* The whole C API against a real etcd: results, NULL and bad arguments for every function,
 * try-once / timeout / cancel cleanup, lost callbacks, callback vs free, wrong thread. */
#include "check.h"
#include <pthread.h>
#include <stdatomic.h>

static etcdlock_client *g_client;

#define K(s) (const uint8_t *)(s), strlen(s)

static etcdlock_client *connect_client(void) {
    etcdlock_client *c = NULL;
    CHECK_RC(etcdlock_client_new(endpoints(), NULL, &c), ETCDLOCK_OK);
    return c;
}

static void test_status_and_errors(void) {
    CHECK(strcmp(etcdlock_status_str(ETCDLOCK_OK), "ETCDLOCK_OK") == 0);
    CHECK(strcmp(etcdlock_status_str(ETCDLOCK_E_WOULD_BLOCK), "ETCDLOCK_E_WOULD_BLOCK") == 0);
    CHECK(strcmp(etcdlock_status_str(ETCDLOCK_E_WRONG_THREAD), "ETCDLOCK_E_WRONG_THREAD") == 0);
    CHECK(strcmp(etcdlock_status_str(9999), "ETCDLOCK_E_UNKNOWN") == 0);
    CHECK(strcmp(etcdlock_status_str(-1), "ETCDLOCK_E_UNKNOWN") == 0);
    /* Stable numbers: part of the ABI. */
    CHECK(ETCDLOCK_OK == 0 && ETCDLOCK_E_INVALID_ARGUMENT == 1 && ETCDLOCK_E_UNAVAILABLE == 2 &&
          ETCDLOCK_E_TIMEOUT == 3 && ETCDLOCK_E_WOULD_BLOCK == 4 && ETCDLOCK_E_LOCK_LOST == 5 &&
          ETCDLOCK_E_NOT_HELD == 6 && ETCDLOCK_E_COMPACTED == 7 && ETCDLOCK_E_CANCELLED == 8 &&
          ETCDLOCK_E_CLOSED == 9 && ETCDLOCK_E_AUTH == 10 && ETCDLOCK_E_WRONG_THREAD == 11 &&
          ETCDLOCK_E_INTERNAL == 12);
    CHECK(ETCDLOCK_WAIT_FOREVER == -1);
    CHECK(strcmp(etcdlock_version(), ETCDLOCK_VERSION) == 0);
    CHECK(ETCDLOCK_VERSION_NUMBER == ETCDLOCK_VERSION_MAJOR * 10000 + ETCDLOCK_VERSION_MINOR * 100 + ETCDLOCK_VERSION_PATCH);

    /* A failure leaves its message; length query, truncation, NUL termination. */
    CHECK_RC(etcdlock_client_new(NULL, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    size_t need = etcdlock_last_error(NULL, 0);
    CHECK(need > 0);
    char small[8];
    memset(small, 'x', sizeof small);
    CHECK(etcdlock_last_error(small, sizeof small) == need);
    CHECK(small[7] == 0 && strlen(small) == 7);
    char big[512];
    CHECK(etcdlock_last_error(big, sizeof big) == need);
    CHECK(strstr(big, "endpoints") != NULL);
    CHECK(etcdlock_last_error(NULL, 10) == need); /* NULL buffer: nothing written */
}

static void test_client_options_and_new(void) {
    CHECK_RC(etcdlock_client_options_init(NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_client_options o;
    memset(&o, 0xff, sizeof o);
    CHECK_RC(etcdlock_client_options_init(&o), ETCDLOCK_OK);
    CHECK(o.connect_timeout_ms == 5000 && o.request_timeout_ms == 5000);
    CHECK(o.user == NULL && o.password == NULL && o.max_in_flight == 256);

    etcdlock_client *c = (etcdlock_client *)0x1;
    CHECK_RC(etcdlock_client_new(NULL, NULL, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(c == (etcdlock_client *)0x1); /* outputs written only on success */
    CHECK_RC(etcdlock_client_new(endpoints(), NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_client_new("", NULL, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_client_new("not a url", NULL, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_client_new("ftp://127.0.0.1:1", NULL, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_client_new("\xff\xfe", NULL, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(c == (etcdlock_client *)0x1);

    etcdlock_client_options bad;
    etcdlock_client_options_init(&bad);
    bad.connect_timeout_ms = -5;
    CHECK_RC(etcdlock_client_new(endpoints(), &bad, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_client_options_init(&bad);
    bad.request_timeout_ms = -1;
    CHECK_RC(etcdlock_client_new(endpoints(), &bad, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_client_options_init(&bad);
    bad.user = "root";
    CHECK_RC(etcdlock_client_new(endpoints(), &bad, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_client_options_init(&bad);
    bad.password = "pw";
    CHECK_RC(etcdlock_client_new(endpoints(), &bad, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(c == (etcdlock_client *)0x1);

    /* Nothing listens on port 1: UNAVAILABLE within the connect timeout. */
    etcdlock_client_options fast;
    etcdlock_client_options_init(&fast);
    fast.connect_timeout_ms = 300;
    double t0 = now_ms();
    CHECK_RC(etcdlock_client_new("http://127.0.0.1:1", &fast, &c), ETCDLOCK_E_UNAVAILABLE);
    CHECK(now_ms() - t0 < 3000);

    /* Zeroed options are the defaults; several endpoints and bare host:port are accepted. */
    etcdlock_client_options zero;
    memset(&zero, 0, sizeof zero);
    char eps[600];
    snprintf(eps, sizeof eps, "%s,%s", endpoints(), endpoints());
    etcdlock_client *ok = NULL;
    CHECK_RC(etcdlock_client_new(eps, &zero, &ok), ETCDLOCK_OK);
    CHECK(ok != NULL);
    etcdlock_client_free(ok);
    etcdlock_client_free(NULL);
}

static void test_kv(void) {
    char key[128];
    unique(key, sizeof key, "kv");
    etcdlock_buf *b = (etcdlock_buf *)0x1;
    CHECK_RC(etcdlock_get(g_client, K(key), &b), ETCDLOCK_OK);
    CHECK(b == NULL); /* absent */

    CHECK_RC(etcdlock_put(g_client, K(key), (const uint8_t *)"v\0x", 3, NULL), ETCDLOCK_OK);
    CHECK_RC(etcdlock_get(g_client, K(key), &b), ETCDLOCK_OK);
    CHECK(b != NULL && etcdlock_buf_len(b) == 3 && memcmp(etcdlock_buf_data(b), "v\0x", 3) == 0);
    CHECK(etcdlock_buf_mod_revision(b) > 0);
    etcdlock_buf_free(b);

    /* Empty value: NULL with length 0 is fine. */
    CHECK_RC(etcdlock_put(g_client, K(key), NULL, 0, NULL), ETCDLOCK_OK);
    b = NULL;
    CHECK_RC(etcdlock_get(g_client, K(key), &b), ETCDLOCK_OK);
    CHECK(b != NULL && etcdlock_buf_len(b) == 0);
    etcdlock_buf_free(b);

    CHECK_RC(etcdlock_delete(g_client, K(key)), ETCDLOCK_OK);
    CHECK_RC(etcdlock_delete(g_client, K(key)), ETCDLOCK_OK); /* absent: still OK */
    b = (etcdlock_buf *)0x1;
    CHECK_RC(etcdlock_get(g_client, K(key), &b), ETCDLOCK_OK);
    CHECK(b == NULL);

    /* Bad arguments. */
    etcdlock_buf *keep = (etcdlock_buf *)0x1;
    CHECK_RC(etcdlock_put(NULL, K(key), K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put(g_client, NULL, 3, K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put(g_client, NULL, 0, K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT); /* empty key */
    CHECK_RC(etcdlock_put(g_client, K(key), NULL, 5, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_get(NULL, K(key), &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_get(g_client, NULL, 1, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_get(g_client, (const uint8_t *)"", 0, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_get(g_client, K(key), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(keep == (etcdlock_buf *)0x1);
    CHECK_RC(etcdlock_delete(NULL, K(key)), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_delete(g_client, NULL, 2), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_delete(g_client, NULL, 0), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(etcdlock_buf_data(NULL) == NULL);
    CHECK(etcdlock_buf_len(NULL) == 0);
    CHECK(etcdlock_buf_mod_revision(NULL) == 0);
    etcdlock_buf_free(NULL);
}

static void lost_cb_unused(void *user_data, int reason) {
    (void)user_data;
    (void)reason;
}

static void test_lock_basic(void) {
    char name[128], prefix[140];
    unique(name, sizeof name, "lock");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, ETCDLOCK_WAIT_FOREVER, NULL, &l), ETCDLOCK_OK);
    if (!l) return;
    int64_t t1 = etcdlock_lock_fencing_token(l);
    CHECK(t1 > 0);
    CHECK(etcdlock_lock_is_held(l));
    CHECK(etcdlock_lock_lost_reason(l) == 0);
    CHECK(etcdlock_lock_lease_id(l) != 0);
    size_t klen = 0;
    const uint8_t *k = etcdlock_lock_key(l, &klen);
    CHECK(k && klen > strlen(prefix) && memcmp(k, prefix, strlen(prefix)) == 0);
    CHECK(etcdlock_lock_key(l, NULL) == k); /* len is optional */
    CHECK(count_keys(prefix) == 1);

    /* Fenced put: written while held. */
    char data[160];
    snprintf(data, sizeof data, "%s-data", name);
    CHECK_RC(etcdlock_put(g_client, K(data), K("held"), l), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put(g_client, (const uint8_t *)k, klen, K("x"), l), ETCDLOCK_E_INVALID_ARGUMENT);

    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    CHECK(!etcdlock_lock_is_held(l));
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_E_NOT_HELD);
    CHECK_RC(etcdlock_put(g_client, K(data), K("late"), l), ETCDLOCK_E_NOT_HELD);
    CHECK(count_keys(prefix) == 0);
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb_unused, NULL), ETCDLOCK_E_NOT_HELD);
    etcdlock_lock_free(l);

    /* The next holder's token is larger. */
    etcdlock_lock *l2 = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &l2), ETCDLOCK_OK);
    CHECK(etcdlock_lock_fencing_token(l2) > t1);
    /* Freed while held: released before free returns. */
    etcdlock_lock_free(l2);
    CHECK(count_keys(prefix) == 0);
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(g_client, K(data), &b), ETCDLOCK_OK);
    CHECK(b && etcdlock_buf_len(b) == 4 && memcmp(etcdlock_buf_data(b), "held", 4) == 0);
    etcdlock_buf_free(b);
    CHECK_RC(etcdlock_delete(g_client, K(data)), ETCDLOCK_OK);
}

static void test_lock_bad_args(void) {
    etcdlock_lock *l = (etcdlock_lock *)0x1;
    CHECK_RC(etcdlock_lock_acquire(NULL, "n", 10, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, NULL, 10, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, "ctest/n", 10, 0, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, "ctest/n", 0, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, "ctest/n", -3, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, "ctest/n", 10, -2, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, "", 10, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, "ctest/n/", 10, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, "ctest/n", 9000000001LL, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(l == (etcdlock_lock *)0x1);
    CHECK(etcdlock_lock_fencing_token(NULL) == 0);
    CHECK(!etcdlock_lock_is_held(NULL));
    CHECK(etcdlock_lock_lost_reason(NULL) == 0);
    CHECK(etcdlock_lock_lease_id(NULL) == 0);
    size_t len = 77;
    CHECK(etcdlock_lock_key(NULL, &len) == NULL && len == 77);
    CHECK_RC(etcdlock_lock_release(NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_on_lost(NULL, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_lock_free(NULL);

    char name[128];
    unique(name, sizeof name, "badcb");
    etcdlock_lock *held = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &held), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_on_lost(held, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_lock_free(held);
}

/* Holds `name` from a second client and returns the lock (the queue then has one key). */
static etcdlock_lock *hold(etcdlock_client *c, const char *name) {
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    return l;
}

static void test_try_once_and_timeout_cleanup(void) {
    etcdlock_client *other = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "try");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *holder = hold(other, name);

    etcdlock_lock *l = (etcdlock_lock *)0x1;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &l), ETCDLOCK_E_WOULD_BLOCK);
    CHECK(l == (etcdlock_lock *)0x1);
    CHECK(count_keys(prefix) == 1);

    double t0 = now_ms();
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 300, NULL, &l), ETCDLOCK_E_TIMEOUT);
    double took = now_ms() - t0;
    CHECK(took >= 290 && took < 3000);
    CHECK(count_keys(prefix) == 1); /* the waiter's queue key is gone */

    /* After the holder releases, a try-once succeeds. */
    CHECK_RC(etcdlock_lock_release(holder), ETCDLOCK_OK);
    etcdlock_lock_free(holder);
    l = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(other);
}

struct cancel_arg {
    etcdlock_cancel *cancel;
    long after_ms;
};

static void *trigger_later(void *p) {
    struct cancel_arg *a = p;
    sleep_ms(a->after_ms);
    etcdlock_cancel_trigger(a->cancel);
    return NULL;
}

static void test_cancel_cleanup(void) {
    etcdlock_client *other = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "cancel");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *holder = hold(other, name);

    etcdlock_cancel *c = etcdlock_cancel_new();
    CHECK(c != NULL);
    CHECK(!etcdlock_cancel_is_triggered(c));
    struct cancel_arg a = {c, 300};
    pthread_t t;
    pthread_create(&t, NULL, trigger_later, &a);
    etcdlock_lock *l = (etcdlock_lock *)0x1;
    double t0 = now_ms();
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, ETCDLOCK_WAIT_FOREVER, c, &l), ETCDLOCK_E_CANCELLED);
    double took = now_ms() - t0;
    pthread_join(t, NULL);
    CHECK(took >= 250 && took < 3000);
    CHECK(l == (etcdlock_lock *)0x1);
    CHECK(etcdlock_cancel_is_triggered(c));
    CHECK(count_keys(prefix) == 1); /* only the holder's key */

    /* An already triggered token fails at once, even with the lock free. */
    CHECK_RC(etcdlock_lock_release(holder), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, ETCDLOCK_WAIT_FOREVER, c, &l), ETCDLOCK_E_CANCELLED);
    CHECK(count_keys(prefix) == 0);
    etcdlock_cancel_trigger(c); /* idempotent */
    etcdlock_cancel_free(c);

    /* A token not triggered does nothing. */
    etcdlock_cancel *idle = etcdlock_cancel_new();
    l = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 1000, idle, &l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    etcdlock_cancel_free(idle);

    etcdlock_cancel_trigger(NULL);
    etcdlock_cancel_free(NULL);
    CHECK(!etcdlock_cancel_is_triggered(NULL));
    etcdlock_lock_free(holder);
    etcdlock_client_free(other);
}

/* State shared with lost callbacks. */
struct lost_state {
    pthread_mutex_t mu;
    atomic_int calls;
    atomic_int reason;
    atomic_int started;
    atomic_int finished;
    atomic_int nested_status; /* status of a blocking call made inside the callback */
    long sleep_ms;
    etcdlock_client *client;
};

static void lost_cb(void *user_data, int reason) {
    struct lost_state *s = user_data;
    atomic_store(&s->started, 1);
    if (s->client) {
        etcdlock_buf *b = NULL;
        atomic_store(&s->nested_status, etcdlock_get(s->client, K("ctest/any"), &b));
        etcdlock_buf_free(b);
    }
    if (s->sleep_ms) sleep_ms(s->sleep_ms);
    atomic_store(&s->reason, reason);
    atomic_fetch_add(&s->calls, 1);
    atomic_store(&s->finished, 1);
}

static int wait_for(atomic_int *flag, long timeout_ms) {
    double end = now_ms() + timeout_ms;
    while (!atomic_load(flag) && now_ms() < end) sleep_ms(10);
    return atomic_load(flag);
}

static void revoke_external(int64_t lease) {
    char args[64];
    snprintf(args, sizeof args, "lease revoke %" PRIx64, (uint64_t)lease);
    free(etcdctl(args));
}

static void test_lost_after_external_revoke(void) {
    etcdlock_client *c = connect_client(); /* own client: its pooled lease gets revoked */
    char name[128], prefix[140];
    unique(name, sizeof name, "lost");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    if (!l) return;
    struct lost_state s = {.client = c};
    atomic_store(&s.nested_status, -1);
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb, &s), ETCDLOCK_OK);
    revoke_external(etcdlock_lock_lease_id(l));
    CHECK(wait_for(&s.finished, 10000));
    CHECK(atomic_load(&s.calls) == 1);
    int r = atomic_load(&s.reason);
    CHECK(r == ETCDLOCK_LOST_KEY_DELETED || r == ETCDLOCK_LOST_EXPIRED);
    /* A blocking call from the callback's (library) thread refuses instead of deadlocking. */
    CHECK_RC(atomic_load(&s.nested_status), ETCDLOCK_E_WRONG_THREAD);
    CHECK(!etcdlock_lock_is_held(l));
    CHECK(etcdlock_lock_lost_reason(l) != 0);
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_E_NOT_HELD);
    etcdlock_lock_free(l);
    CHECK(count_keys(prefix) == 0);

    /* The client replaces its revoked lease: the next acquire works. */
    l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 2000, NULL, &l), ETCDLOCK_OK);
    CHECK(etcdlock_lock_is_held(l));
    etcdlock_lock_free(l);
    sleep_ms(200);
    CHECK(atomic_load(&s.calls) == 1); /* fired once */
    etcdlock_client_free(c);
}

static void test_no_callback_after_free(void) {
    etcdlock_client *c = connect_client();
    char name[128];
    unique(name, sizeof name, "nocb");

    /* 1. Freed before the loss: never called. */
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    struct lost_state s1 = {0};
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb, &s1), ETCDLOCK_OK);
    int64_t lease = etcdlock_lock_lease_id(l);
    etcdlock_lock_free(l);
    revoke_external(lease);
    sleep_ms(1500);
    CHECK(atomic_load(&s1.calls) == 0);

    /* 2. Freed while the callback runs on a library thread: free waits for it. */
    l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 2000, NULL, &l), ETCDLOCK_OK);
    if (!l) return;
    struct lost_state s2 = {.sleep_ms = 400};
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb, &s2), ETCDLOCK_OK);
    revoke_external(etcdlock_lock_lease_id(l));
    CHECK(wait_for(&s2.started, 10000));
    etcdlock_lock_free(l);
    CHECK(atomic_load(&s2.finished) == 1); /* returned only after the callback did */

    /* 3. Released: the callback is disarmed (a loss after release is not reported). */
    l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 2000, NULL, &l), ETCDLOCK_OK);
    struct lost_state s3 = {0};
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb, &s3), ETCDLOCK_OK);
    lease = etcdlock_lock_lease_id(l);
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    revoke_external(lease);
    sleep_ms(1500);
    CHECK(atomic_load(&s3.calls) == 0);
    etcdlock_lock_free(l);
    etcdlock_client_free(c);
}

/* A callback that frees its own lock (from the library thread: no deadlock, no blocking). */
struct self_free {
    etcdlock_lock *lock;
    atomic_int done;
};

static void free_self_cb(void *user_data, int reason) {
    struct self_free *s = user_data;
    (void)reason;
    etcdlock_lock_free(s->lock);
    atomic_store(&s->done, 1);
}

static void test_callback_frees_own_lock(void) {
    etcdlock_client *c = connect_client();
    char name[128];
    unique(name, sizeof name, "selffree");
    struct self_free s = {0};
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &s.lock), ETCDLOCK_OK);
    if (!s.lock) return;
    CHECK_RC(etcdlock_lock_on_lost(s.lock, free_self_cb, &s), ETCDLOCK_OK);
    revoke_external(etcdlock_lock_lease_id(s.lock));
    CHECK(wait_for(&s.done, 10000));
    etcdlock_client_free(c);
}

static void test_client_free_closes(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "close");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    etcdlock_lease *lease = NULL;
    CHECK_RC(etcdlock_lease_grant(c, 10, &lease), ETCDLOCK_OK);
    struct lost_state s = {0};
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb, &s), ETCDLOCK_OK);
    CHECK(count_keys(prefix) == 1);
    etcdlock_client_free(c); /* revokes the leases: the lock key is gone */
    CHECK(count_keys(prefix) == 0);
    CHECK(wait_for(&s.finished, 5000));
    CHECK(atomic_load(&s.reason) == ETCDLOCK_LOST_CLOSED);
    CHECK(!etcdlock_lock_is_held(l));
    CHECK(etcdlock_lock_release(l) != ETCDLOCK_OK);
    CHECK_RC(etcdlock_lease_revoke(lease), ETCDLOCK_E_CLOSED);
    etcdlock_lock_free(l);
    etcdlock_lease_free(lease);
}

static void test_lease(void) {
    char key[128];
    unique(key, sizeof key, "leasekey");
    etcdlock_lease *l = NULL;
    CHECK_RC(etcdlock_lease_grant(g_client, 10, &l), ETCDLOCK_OK);
    if (!l) return;
    CHECK(etcdlock_lease_id(l) != 0);
    CHECK(etcdlock_lease_ttl(l) >= 10);
    CHECK(etcdlock_lease_is_alive(l));
    CHECK(etcdlock_lease_remaining_ms(l) > 5000 && etcdlock_lease_remaining_ms(l) <= 10000);
    CHECK(etcdlock_lease_lost_reason(l) == 0);
    struct lost_state s = {0};
    CHECK_RC(etcdlock_lease_on_lost(l, lost_cb, &s), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put_with_lease(g_client, K(key), K("up"), l), ETCDLOCK_OK);
    CHECK(count_keys(key) == 1);
    CHECK_RC(etcdlock_lease_revoke(l), ETCDLOCK_OK);
    CHECK(count_keys(key) == 0);
    CHECK(!etcdlock_lease_is_alive(l));
    CHECK(etcdlock_lease_remaining_ms(l) == 0);
    CHECK(etcdlock_lease_lost_reason(l) == ETCDLOCK_LOST_REVOKED);
    CHECK(wait_for(&s.finished, 5000));
    CHECK(atomic_load(&s.reason) == ETCDLOCK_LOST_REVOKED);
    CHECK_RC(etcdlock_lease_revoke(l), ETCDLOCK_OK); /* idempotent */
    CHECK_RC(etcdlock_put_with_lease(g_client, K(key), K("late"), l), ETCDLOCK_E_LOCK_LOST);
    etcdlock_lease_free(l);

    /* Freed: revoked before free returns (its key is gone). */
    l = NULL;
    CHECK_RC(etcdlock_lease_grant(g_client, 10, &l), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put_with_lease(g_client, K(key), K("up"), l), ETCDLOCK_OK);
    etcdlock_lease_free(l);
    CHECK(count_keys(key) == 0);

    /* External revoke: lost, callback with EXPIRED (the server says the lease is gone). */
    l = NULL;
    CHECK_RC(etcdlock_lease_grant(g_client, 5, &l), ETCDLOCK_OK);
    struct lost_state s2 = {0};
    CHECK_RC(etcdlock_lease_on_lost(l, lost_cb, &s2), ETCDLOCK_OK);
    revoke_external(etcdlock_lease_id(l));
    CHECK(wait_for(&s2.finished, 10000));
    CHECK(atomic_load(&s2.reason) == ETCDLOCK_LOST_EXPIRED);
    CHECK(!etcdlock_lease_is_alive(l));
    etcdlock_lease_free(l);

    /* Bad arguments. */
    etcdlock_lease *keep = (etcdlock_lease *)0x1;
    CHECK_RC(etcdlock_lease_grant(NULL, 10, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lease_grant(g_client, 10, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lease_grant(g_client, 0, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lease_grant(g_client, -1, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(keep == (etcdlock_lease *)0x1);
    CHECK(etcdlock_lease_id(NULL) == 0);
    CHECK(etcdlock_lease_ttl(NULL) == 0);
    CHECK(!etcdlock_lease_is_alive(NULL));
    CHECK(etcdlock_lease_remaining_ms(NULL) == 0);
    CHECK(etcdlock_lease_lost_reason(NULL) == 0);
    CHECK_RC(etcdlock_lease_on_lost(NULL, lost_cb, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lease_revoke(NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put_with_lease(NULL, K(key), K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put_with_lease(g_client, K(key), K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put_with_lease(g_client, NULL, 4, K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_lease *cbless = NULL;
    CHECK_RC(etcdlock_lease_grant(g_client, 10, &cbless), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lease_on_lost(cbless, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_lease_free(cbless);
    etcdlock_lease_free(NULL);
}

static void test_watch(void) {
    char prefix[128], key[160];
    unique(prefix, sizeof prefix, "watch");
    snprintf(key, sizeof key, "%s/a", prefix);
    etcdlock_watch *w = NULL;
    CHECK_RC(etcdlock_watch_open(g_client, K(prefix), true, 0, &w), ETCDLOCK_OK);
    if (!w) return;
    etcdlock_event *e = (etcdlock_event *)0x1;
    CHECK_RC(etcdlock_watch_next(w, 0, &e), ETCDLOCK_E_TIMEOUT);
    double t0 = now_ms();
    CHECK_RC(etcdlock_watch_next(w, 200, &e), ETCDLOCK_E_TIMEOUT);
    CHECK(now_ms() - t0 >= 190);
    CHECK(e == (etcdlock_event *)0x1);

    CHECK_RC(etcdlock_put(g_client, K(key), K("one"), NULL), ETCDLOCK_OK);
    CHECK_RC(etcdlock_delete(g_client, K(key)), ETCDLOCK_OK);
    e = NULL;
    CHECK_RC(etcdlock_watch_next(w, 5000, &e), ETCDLOCK_OK);
    int64_t rev = 0;
    if (e) {
        size_t kl = 0, vl = 0;
        const uint8_t *k = etcdlock_event_key(e, &kl);
        const uint8_t *v = etcdlock_event_value(e, &vl);
        CHECK(etcdlock_event_type(e) == ETCDLOCK_EVENT_PUT);
        CHECK(kl == strlen(key) && memcmp(k, key, kl) == 0);
        CHECK(vl == 3 && memcmp(v, "one", 3) == 0);
        CHECK(etcdlock_event_key(e, NULL) == k);
        rev = etcdlock_event_revision(e);
        CHECK(rev > 0);
        etcdlock_event_free(e);
    }
    e = NULL;
    CHECK_RC(etcdlock_watch_next(w, ETCDLOCK_WAIT_FOREVER, &e), ETCDLOCK_OK);
    if (e) {
        size_t vl = 99;
        CHECK(etcdlock_event_type(e) == ETCDLOCK_EVENT_DELETE);
        etcdlock_event_value(e, &vl);
        CHECK(vl == 0);
        CHECK(etcdlock_event_revision(e) == rev + 1);
        etcdlock_event_free(e);
    }
    etcdlock_watch_free(w);

    /* From a past revision: replays history. */
    w = NULL;
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, rev, &w), ETCDLOCK_OK);
    e = NULL;
    CHECK_RC(etcdlock_watch_next(w, 5000, &e), ETCDLOCK_OK);
    CHECK(e && etcdlock_event_revision(e) == rev && etcdlock_event_type(e) == ETCDLOCK_EVENT_PUT);
    etcdlock_event_free(e);
    etcdlock_watch_free(w);

    /* Compacted history. */
    CHECK_RC(etcdlock_put(g_client, K(key), K("two"), NULL), ETCDLOCK_OK);
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(g_client, K(key), &b), ETCDLOCK_OK);
    int64_t now_rev = etcdlock_buf_mod_revision(b);
    etcdlock_buf_free(b);
    char args[64];
    snprintf(args, sizeof args, "compact %" PRId64, now_rev);
    free(etcdctl(args));
    w = NULL;
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, rev, &w), ETCDLOCK_OK);
    e = (etcdlock_event *)0x1;
    CHECK_RC(etcdlock_watch_next(w, 5000, &e), ETCDLOCK_E_COMPACTED);
    CHECK_RC(etcdlock_watch_next(w, 100, &e), ETCDLOCK_E_CLOSED); /* ended */
    CHECK(e == (etcdlock_event *)0x1);
    etcdlock_watch_free(w);
    CHECK_RC(etcdlock_delete(g_client, K(key)), ETCDLOCK_OK);

    /* Bad arguments. */
    etcdlock_watch *keep = (etcdlock_watch *)0x1;
    CHECK_RC(etcdlock_watch_open(NULL, K(key), false, 0, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_watch_open(g_client, NULL, 3, false, 0, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_watch_open(g_client, NULL, 0, false, 0, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, -1, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, 0, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(keep == (etcdlock_watch *)0x1);
    CHECK_RC(etcdlock_watch_next(NULL, 0, &e), ETCDLOCK_E_INVALID_ARGUMENT);
    w = NULL;
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, 0, &w), ETCDLOCK_OK);
    CHECK_RC(etcdlock_watch_next(w, 0, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_watch_next(w, -7, &e), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_watch_free(w);
    etcdlock_watch_free(NULL);
    size_t len = 5;
    CHECK(etcdlock_event_type(NULL) == 0);
    CHECK(etcdlock_event_key(NULL, &len) == NULL && len == 5);
    CHECK(etcdlock_event_value(NULL, &len) == NULL && len == 5);
    CHECK(etcdlock_event_revision(NULL) == 0);
    etcdlock_event_free(NULL);
}

/* Many threads share one client. */
struct shared_arg {
    int id;
    atomic_int *failures;
};

static void *kv_worker(void *p) {
    struct shared_arg *a = p;
    char key[128];
    for (int i = 0; i < 20; i++) {
        snprintf(key, sizeof key, "ctest/%d/shared/%d/%d", (int)getpid(), a->id, i);
        etcdlock_buf *b = NULL;
        if (etcdlock_put(g_client, K(key), K("v"), NULL) != ETCDLOCK_OK ||
            etcdlock_get(g_client, K(key), &b) != ETCDLOCK_OK || !b ||
            etcdlock_delete(g_client, K(key)) != ETCDLOCK_OK)
            atomic_fetch_add(a->failures, 1);
        etcdlock_buf_free(b);
    }
    return NULL;
}

static void test_shared_client_threads(void) {
    atomic_int failures = 0;
    pthread_t t[8];
    struct shared_arg a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = (struct shared_arg){i, &failures};
        pthread_create(&t[i], NULL, kv_worker, &a[i]);
    }
    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
    CHECK(atomic_load(&failures) == 0);
}

static void test_shutdown(void) {
    etcdlock_lock *l = NULL;
    char name[128];
    unique(name, sizeof name, "shutdown");
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    CHECK_RC(etcdlock_shutdown(-5), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    /* Handles that survive shutdown report CLOSED; freeing them is fine. */
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(g_client, K(name), &b), ETCDLOCK_E_CLOSED);
    CHECK(!etcdlock_lock_is_held(l));
    etcdlock_lock_free(l);
    etcdlock_client_free(g_client);
    g_client = NULL;
    CHECK_RC(etcdlock_shutdown(1000), ETCDLOCK_OK); /* nothing running: no-op */
    /* The library starts afresh. */
    char prefix[140];
    snprintf(prefix, sizeof prefix, "%s/", name);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client *c = connect_client();
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    etcdlock_client_free(c);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_status_and_errors);
    RUN(test_client_options_and_new);
    g_client = connect_client();
    if (!g_client) {
        printf("FAIL - connect to %s\n", endpoints());
        return 1;
    }
    RUN(test_kv);
    RUN(test_lock_basic);
    RUN(test_lock_bad_args);
    RUN(test_try_once_and_timeout_cleanup);
    RUN(test_cancel_cleanup);
    RUN(test_lost_after_external_revoke);
    RUN(test_no_callback_after_free);
    RUN(test_callback_frees_own_lock);
    RUN(test_client_free_closes);
    RUN(test_lease);
    RUN(test_watch);
    RUN(test_shared_client_threads);
    RUN(test_shutdown);
    return summary("test_api");
}
