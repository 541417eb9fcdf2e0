/* etcdlock_lock_acquire_async / etcdlock_lock_release_async against a real etcd: outcomes and
 * their callbacks (exactly once, message readable inside), bad arguments (status at once, no
 * callback), timeout / try-once / cancel / client freed while waiting (no key left), chains of
 * calls made from callbacks, and blocking calls refused inside them. */
#include "check.h"
#include <pthread.h>
#include <stdatomic.h>

static etcdlock_client *g_client;

struct outcome {
    atomic_int calls;
    atomic_int status;
    etcdlock_lock *_Atomic lock;
    int blocking_rc; /* a blocking call made inside the callback */
    char message[256];
    int slow_ms; /* the callback takes this long before it records the outcome */
};

static void on_lock(void *user, int status, etcdlock_lock *lock) {
    struct outcome *o = user;
    etcdlock_last_error(o->message, sizeof o->message);
    etcdlock_buf *b = NULL;
    o->blocking_rc = etcdlock_get(g_client, (const uint8_t *)"x", 1, &b);
    etcdlock_buf_free(b);
    if (o->slow_ms) sleep_ms(o->slow_ms);
    atomic_store(&o->lock, lock);
    atomic_store(&o->status, status);
    atomic_fetch_add(&o->calls, 1);
}

static void on_done(void *user, int status) {
    struct outcome *o = user;
    etcdlock_last_error(o->message, sizeof o->message);
    if (o->slow_ms) sleep_ms(o->slow_ms);
    atomic_store(&o->status, status);
    atomic_fetch_add(&o->calls, 1);
}

/* Waits up to 10 s for the first call, then 100 ms more for a wrong second one. */
static int called_once(struct outcome *o) {
    double end = now_ms() + 10000;
    while (atomic_load(&o->calls) == 0 && now_ms() < end) sleep_ms(5);
    sleep_ms(100);
    return atomic_load(&o->calls) == 1;
}

/* Waits up to 10 s for exactly `n` keys under `prefix`. */
static int keys_reach(const char *prefix, int n) {
    double end = now_ms() + 10000;
    while (count_keys(prefix) != n && now_ms() < end) sleep_ms(10);
    return count_keys(prefix) == n;
}

/* covers: LOCK-BASIC-001, LOCK-TOKEN-001, LOCK-RELEASE-001 (through the _async calls) */
static void test_acquire_and_release(void) {
    char name[128], prefix[140];
    unique(name, sizeof name, "async");
    snprintf(prefix, sizeof prefix, "%s/", name);
    struct outcome got = {0};
    CHECK_RC(etcdlock_lock_acquire_async(g_client, name, 10, ETCDLOCK_WAIT_FOREVER, NULL, on_lock, &got), ETCDLOCK_OK);
    CHECK(called_once(&got));
    CHECK_RC(atomic_load(&got.status), ETCDLOCK_OK);
    etcdlock_lock *l = atomic_load(&got.lock);
    CHECK(l != NULL);
    if (!l) return;
    CHECK_RC(got.blocking_rc, ETCDLOCK_E_WRONG_THREAD); /* callbacks run on a library thread */
    CHECK(etcdlock_lock_is_held(l));
    int64_t token = etcdlock_lock_fencing_token(l);
    CHECK(token > 0);
    CHECK(count_keys(prefix) == 1);

    struct outcome rel = {0};
    CHECK_RC(etcdlock_lock_release_async(l, on_done, &rel), ETCDLOCK_OK);
    CHECK(called_once(&rel));
    CHECK_RC(atomic_load(&rel.status), ETCDLOCK_OK);
    CHECK(!etcdlock_lock_is_held(l));
    CHECK(count_keys(prefix) == 0);

    struct outcome again = {0};
    CHECK_RC(etcdlock_lock_release_async(l, on_done, &again), ETCDLOCK_OK);
    CHECK(called_once(&again));
    CHECK_RC(atomic_load(&again.status), ETCDLOCK_E_NOT_HELD);
    CHECK(strstr(again.message, "NOT_HELD") != NULL);
    etcdlock_lock_free(l);

    /* Without a callback, freed at once: the release still happens, and a later holder's
     * token is larger. */
    etcdlock_lock *l2 = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &l2), ETCDLOCK_OK);
    if (!l2) return;
    CHECK(etcdlock_lock_fencing_token(l2) > token);
    CHECK_RC(etcdlock_lock_release_async(l2, NULL, NULL), ETCDLOCK_OK);
    etcdlock_lock_free(l2);
    CHECK(keys_reach(prefix, 0));

    /* Freed right after release_async: the free must not release a second time, or the
     * callback would report NOT_HELD for a release that happened. */
    enum { N = 20 };
    struct outcome freed[N];
    memset(freed, 0, sizeof freed);
    for (int i = 0; i < N; i++) {
        etcdlock_lock *l3 = NULL;
        CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 5000, NULL, &l3), ETCDLOCK_OK);
        if (!l3) break;
        CHECK_RC(etcdlock_lock_release_async(l3, on_done, &freed[i]), ETCDLOCK_OK);
        etcdlock_lock_free(l3);
    }
    for (int i = 0; i < N; i++) {
        CHECK(called_once(&freed[i]));
        CHECK_RC(atomic_load(&freed[i].status), ETCDLOCK_OK);
    }
    CHECK(keys_reach(prefix, 0));
}

/* covers: ERR-BADNAME-001, ERR-BADTTL-001, ERR-NULL-001 (through the _async calls) */
static void test_bad_args(void) {
    char name[128], slash[140];
    unique(name, sizeof name, "asyncbad");
    snprintf(slash, sizeof slash, "%s/", name);
    struct outcome o = {0};
    CHECK_RC(etcdlock_lock_acquire_async(NULL, name, 10, 0, NULL, on_lock, &o), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire_async(g_client, NULL, 10, 0, NULL, on_lock, &o), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire_async(g_client, "", 10, 0, NULL, on_lock, &o), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire_async(g_client, slash, 10, 0, NULL, on_lock, &o), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire_async(g_client, name, 0, 0, NULL, on_lock, &o), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire_async(g_client, name, -3, 0, NULL, on_lock, &o), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire_async(g_client, name, 10, -5, NULL, on_lock, &o), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire_async(g_client, name, 10, 0, NULL, NULL, &o), ETCDLOCK_E_INVALID_ARGUMENT);
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "cb") != NULL);
    CHECK_RC(etcdlock_lock_release_async(NULL, on_done, &o), ETCDLOCK_E_INVALID_ARGUMENT);
    sleep_ms(200);
    CHECK(atomic_load(&o.calls) == 0); /* a call that returned an error never calls back */
    CHECK(count_keys(slash) == 0);
}

/* The value reaches the queue key, as etcdlock_inspect shows; a value too long is refused at
 * once and never calls back.
 * covers: LOCK-VALUE-001 (through the _async call) */
static void test_acquire_with_value(void) {
    char name[128], prefix[140];
    unique(name, sizeof name, "asyncvalue");
    snprintf(prefix, sizeof prefix, "%s/", name);
    static uint8_t big[4097];
    memset(big, 'x', sizeof big);
    struct outcome bad = {0};
    CHECK_RC(etcdlock_lock_acquire_with_value_async(g_client, name, 10, 0, NULL, big, sizeof big, on_lock, &bad),
             ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire_with_value_async(g_client, name, 10, 0, NULL, NULL, 3, on_lock, &bad),
             ETCDLOCK_E_INVALID_ARGUMENT);

    struct outcome got = {0};
    CHECK_RC(etcdlock_lock_acquire_with_value_async(g_client, name, 10, 5000, NULL, (const uint8_t *)"host-c pid 7", 12,
                                                    on_lock, &got),
             ETCDLOCK_OK);
    CHECK(called_once(&got));
    CHECK_RC(atomic_load(&got.status), ETCDLOCK_OK);
    etcdlock_lock *l = atomic_load(&got.lock);
    etcdlock_lock_state *st = NULL;
    CHECK_RC(etcdlock_inspect(g_client, name, &st), ETCDLOCK_OK);
    CHECK(st && st->n_entries == 1 && st->entries[0].value_len == 12 &&
          memcmp(st->entries[0].value, "host-c pid 7", 12) == 0);
    CHECK(st && l && st->n_entries == 1 && st->entries[0].fencing_token == etcdlock_lock_fencing_token(l));
    etcdlock_lock_state_free(st);
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    CHECK(atomic_load(&bad.calls) == 0);
    CHECK(count_keys(prefix) == 0);
}

/* Behind a holder: a try fails with WOULD_BLOCK, a wait with TIMEOUT, a cancelled wait with
 * CANCELLED, and a wait whose client is freed with CLOSED, before the free returns; each
 * leaves no key. Also a release_async whose client is freed at once.
 * covers: LOCK-TRY-001, LOCK-TIMEOUT-001, LOCK-CANCEL-001, CONN-CLOSE-WAITER-001 (through the _async calls) */
static void test_failures_leave_no_key(void) {
    char name[128], prefix[140];
    unique(name, sizeof name, "asyncfail");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *holder = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &holder), ETCDLOCK_OK);
    if (!holder) return;

    struct outcome try_once = {0};
    CHECK_RC(etcdlock_lock_acquire_async(g_client, name, 10, 0, NULL, on_lock, &try_once), ETCDLOCK_OK);
    CHECK(called_once(&try_once));
    CHECK_RC(atomic_load(&try_once.status), ETCDLOCK_E_WOULD_BLOCK);
    CHECK(atomic_load(&try_once.lock) == NULL);
    CHECK(count_keys(prefix) == 1);

    struct outcome timed = {0};
    CHECK_RC(etcdlock_lock_acquire_async(g_client, name, 10, 300, NULL, on_lock, &timed), ETCDLOCK_OK);
    CHECK(called_once(&timed));
    CHECK_RC(atomic_load(&timed.status), ETCDLOCK_E_LOCK_TIMEOUT);
    CHECK(strstr(timed.message, "LOCK_TIMEOUT") != NULL);
    CHECK(count_keys(prefix) == 1);

    etcdlock_cancel *cancel = etcdlock_cancel_new();
    struct outcome cancelled = {0};
    CHECK_RC(etcdlock_lock_acquire_async(g_client, name, 10, ETCDLOCK_WAIT_FOREVER, cancel, on_lock, &cancelled), ETCDLOCK_OK);
    CHECK(keys_reach(prefix, 2)); /* queued behind the holder */
    etcdlock_cancel_trigger(cancel);
    CHECK(called_once(&cancelled));
    CHECK_RC(atomic_load(&cancelled.status), ETCDLOCK_E_CANCELLED);
    CHECK(count_keys(prefix) == 1);
    etcdlock_cancel_free(cancel);

    etcdlock_client *c = connect_client();
    if (c) {
        struct outcome closed = {.slow_ms = 300};
        CHECK_RC(etcdlock_lock_acquire_async(c, name, 10, ETCDLOCK_WAIT_FOREVER, NULL, on_lock, &closed), ETCDLOCK_OK);
        CHECK(keys_reach(prefix, 2));
        etcdlock_client_free(c);
        CHECK(atomic_load(&closed.calls) == 1); /* called back before the free returned */
        CHECK(called_once(&closed));
        CHECK_RC(atomic_load(&closed.status), ETCDLOCK_E_CLOSED);
        CHECK(count_keys(prefix) == 1);
    }
    CHECK_RC(etcdlock_lock_release(holder), ETCDLOCK_OK);
    etcdlock_lock_free(holder);
    CHECK(count_keys(prefix) == 0);

    /* A release started, its lock and client freed at once: the callback has run by the time
     * the client's free returns, and the key is gone. */
    c = connect_client();
    if (c) {
        etcdlock_lock *l = NULL;
        CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
        struct outcome released = {.slow_ms = 300};
        CHECK_RC(etcdlock_lock_release_async(l, on_done, &released), ETCDLOCK_OK);
        etcdlock_lock_free(l);
        etcdlock_client_free(c);
        CHECK(atomic_load(&released.calls) == 1);
        CHECK(called_once(&released));
        int st = atomic_load(&released.status);
        CHECK(st == ETCDLOCK_OK || st == ETCDLOCK_E_CLOSED); /* done, or cut short by the close */
        if (st != ETCDLOCK_OK && st != ETCDLOCK_E_CLOSED) /* seen once under valgrind: say which */
            fprintf(stderr, "  the release's callback had status %s\n", etcdlock_status_str(st));
        CHECK(keys_reach(prefix, 0));
    }
}

/* Callbacks start the next call: N chained cycles on one name, tokens only grow. */
struct chain {
    char name[128];
    int left;
    int64_t last_token;
    atomic_int bad, finished;
};

static void chain_locked(void *user, int status, etcdlock_lock *lock);

static void chain_released(void *user, int status) {
    struct chain *ch = user;
    if (status != ETCDLOCK_OK) atomic_fetch_add(&ch->bad, 1);
    if (--ch->left == 0 || etcdlock_lock_acquire_async(g_client, ch->name, 10, 5000, NULL, chain_locked, ch) != ETCDLOCK_OK)
        atomic_store(&ch->finished, 1);
}

static void chain_locked(void *user, int status, etcdlock_lock *lock) {
    struct chain *ch = user;
    if (status != ETCDLOCK_OK) {
        atomic_fetch_add(&ch->bad, 1);
        atomic_store(&ch->finished, 1);
        return;
    }
    int64_t token = etcdlock_lock_fencing_token(lock);
    if (token <= ch->last_token) atomic_fetch_add(&ch->bad, 1);
    ch->last_token = token;
    if (etcdlock_lock_release_async(lock, chain_released, ch) != ETCDLOCK_OK) {
        atomic_fetch_add(&ch->bad, 1);
        atomic_store(&ch->finished, 1);
    }
    etcdlock_lock_free(lock);
}

static void test_chained_from_callbacks(void) {
    struct chain ch = {.left = 50};
    unique(ch.name, sizeof ch.name, "asyncchain");
    char prefix[140];
    snprintf(prefix, sizeof prefix, "%s/", ch.name);
    CHECK_RC(etcdlock_lock_acquire_async(g_client, ch.name, 10, 5000, NULL, chain_locked, &ch), ETCDLOCK_OK);
    double end = now_ms() + 30000;
    while (!atomic_load(&ch.finished) && now_ms() < end) sleep_ms(10);
    CHECK(atomic_load(&ch.finished));
    CHECK(ch.left == 0);
    CHECK(atomic_load(&ch.bad) == 0);
    CHECK(count_keys(prefix) == 0);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_client = connect_client();
    if (!g_client) {
        printf("FAIL - connect to %s\n", endpoints());
        return 1;
    }
    RUN(test_acquire_and_release);
    RUN(test_bad_args);
    RUN(test_acquire_with_value);
    RUN(test_failures_leave_no_key);
    RUN(test_chained_from_callbacks);
    etcdlock_client_free(g_client);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    return summary("test_async");
}
