/* Lock sets (etcdlock_lock_set_*) against a real etcd, with etcdctl as the witness: two threads
 * taking {a, b} and {b, a} never deadlock and never share a name; one token on every member's
 * key; writes fenced by every member; a member's key deleted by someone else; mixed modes; a
 * timeout, a try and a cancel leaving no key. Bad input and a closed client: test_lockset_input.c;
 * fences: test_fence.c.
 * `test_lockset quick` leaves out the opposite orders (for the valgrind run).
 * Scenario IDs of tests/conformance/scenarios.md are named in `covers:` comments. */
#include "lockset_helpers.h"
#include <pthread.h>

#define ROUNDS 200

struct abba {
    const char *first, *second, *counter;
    atomic_int *failed;
};

static void *abba_worker(void *arg) {
    struct abba *w = arg;
    etcdlock_client *c = NULL;
    if (etcdlock_client_new(endpoints(), NULL, &c) != ETCDLOCK_OK) {
        atomic_fetch_add(w->failed, 1);
        return NULL;
    }
    const char *names[] = {w->first, w->second};
    etcdlock_lock_set *set = open_names(c, names, 2);
    for (int i = 0; set && i < ROUNDS; i++) {
        etcdlock_lock_set_held *h = NULL;
        int rc = etcdlock_lock_set_acquire(set, 10000, NULL, &h);
        if (rc != ETCDLOCK_OK) {
            fprintf(stderr, "  round %d: acquire %s (a 10 s wait: deadlock?)\n", i, etcdlock_status_str(rc));
            atomic_fetch_add(w->failed, 1);
            break;
        }
        /* Read, then write through the set: a second holder in between would lose an increment. */
        etcdlock_buf *b = NULL;
        long n = 0;
        if (etcdlock_get(c, K(w->counter), &b) != ETCDLOCK_OK) atomic_fetch_add(w->failed, 1);
        if (b) {
            char text[32] = {0};
            memcpy(text, etcdlock_buf_data(b), etcdlock_buf_len(b) < 31 ? etcdlock_buf_len(b) : 31);
            n = strtol(text, NULL, 10);
        }
        etcdlock_buf_free(b);
        char next[32];
        snprintf(next, sizeof next, "%ld", n + 1);
        if (etcdlock_lock_set_held_put(h, K(w->counter), K(next)) != ETCDLOCK_OK) atomic_fetch_add(w->failed, 1);
        if (etcdlock_lock_set_held_release(h) != ETCDLOCK_OK) atomic_fetch_add(w->failed, 1);
        etcdlock_lock_set_held_free(h);
    }
    etcdlock_lock_set_free(set);
    etcdlock_client_free(c);
    return NULL;
}

/* covers: LOCKSET-ABBA-001 */
static void test_opposite_orders_never_deadlock_and_never_share_a_name(void) {
    char a[128], b[128], counter[128];
    unique(a, sizeof a, "ls-a");
    unique(b, sizeof b, "ls-b");
    unique(counter, sizeof counter, "ls-counter");
    atomic_int failed = 0;
    struct abba ab = {a, b, counter, &failed}, ba = {b, a, counter, &failed};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, abba_worker, &ab);
    pthread_create(&t2, NULL, abba_worker, &ba);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK(atomic_load(&failed) == 0);
    char *v = value_of(counter), want[16];
    snprintf(want, sizeof want, "%d", 2 * ROUNDS);
    CHECK(v && strcmp(v, want) == 0);
    if (v && strcmp(v, want) != 0) fprintf(stderr, "  counter %s, want %s\n", v, want);
    free(v);
    CHECK(queue_len(a) == 0 && queue_len(b) == 0);
}

/* covers: LOCKSET-TOKEN-001 */
static void test_one_token_on_every_key_and_a_deleted_member_loses_the_set(void) {
    etcdlock_client *c = connect_client();
    char x[128], y[128], z[128], data[128], under[160];
    unique(x, sizeof x, "ls-x");
    unique(y, sizeof y, "ls-y");
    unique(z, sizeof z, "ls-z");
    unique(data, sizeof data, "ls-data");
    snprintf(under, sizeof under, "%s/mine", z);
    etcdlock_lock *earlier = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, y, 10, 5000, NULL, &earlier), ETCDLOCK_OK);
    int64_t earlier_token = etcdlock_lock_fencing_token(earlier);
    CHECK_RC(etcdlock_lock_release(earlier), ETCDLOCK_OK);
    etcdlock_lock_free(earlier);

    const char *names[] = {x, y, z};
    etcdlock_lock_set *set = open_names(c, names, 3);
    CHECK(etcdlock_lock_set_len(set) == 3);
    etcdlock_lock_set_held *h = NULL;
    CHECK_RC(etcdlock_lock_set_acquire(set, 5000, NULL, &h), ETCDLOCK_OK);
    if (!h) goto out;
    CHECK(etcdlock_lock_set_held_is_held(h) && etcdlock_lock_set_held_lost_reason(h) == 0);
    int64_t token = etcdlock_lock_set_held_fencing_token(h), lease = etcdlock_lock_set_held_lease_id(h);
    CHECK(token > earlier_token && lease != 0);
    size_t n = 0;
    const char *const *got = etcdlock_lock_set_held_names(h, &n);
    CHECK(n == 3 && got && strcmp(got[0], x) == 0 && strcmp(got[1], y) == 0 && strcmp(got[2], z) == 0);
    /* One Txn put every key: one create revision (the token), one lease. */
    for (size_t i = 0; i < 3; i++) {
        size_t len = 0;
        const uint8_t *key = etcdlock_lock_set_held_key(h, i, &len);
        int64_t rev = 0, on = 0;
        CHECK(key && len > strlen(names[i]) && memcmp(key, names[i], strlen(names[i])) == 0 && key[strlen(names[i])] == '/');
        if (key) key_info(key, len, &rev, &on);
        CHECK(rev == token && on == lease);
    }
    CHECK(etcdlock_lock_set_held_key(h, 3, NULL) == NULL);
    CHECK_RC(etcdlock_lock_set_held_put(h, K(data), K("1")), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_set_held_put(h, K(under), K("1")), ETCDLOCK_E_INVALID_ARGUMENT); /* a member's queue */
    etcdlock_op ops[2] = {{ETCDLOCK_OP_PUT, K(data), K("2")}, {ETCDLOCK_OP_DELETE, K(under), NULL, 0}};
    int64_t rev = 0;
    CHECK_RC(etcdlock_lock_set_held_txn(h, ops, 1, &rev), ETCDLOCK_OK);
    CHECK(rev > token);
    CHECK_RC(etcdlock_lock_set_held_txn(h, ops, 2, &rev), ETCDLOCK_E_INVALID_ARGUMENT);

    /* One member's key deleted by someone else: the set is lost, fenced writes go nowhere. */
    struct outcome lost = {0};
    CHECK_RC(etcdlock_lock_set_held_on_lost(h, on_lost, &lost), ETCDLOCK_OK);
    size_t len = 0;
    const uint8_t *zkey = etcdlock_lock_set_held_key(h, 2, &len);
    char del[512];
    snprintf(del, sizeof del, "del '%.*s'", (int)len, (const char *)zkey);
    free(etcdctl(del));
    CHECK_RC(etcdlock_lock_set_held_put(h, K(data), K("3")), ETCDLOCK_E_NOT_HELD);
    CHECK_RC(etcdlock_lock_set_held_delete(h, K(data)), ETCDLOCK_E_NOT_HELD);
    CHECK(wait_flag(&lost.calls, 5000));
    CHECK(atomic_load(&lost.reason) == ETCDLOCK_LOST_KEY_DELETED);
    CHECK(!etcdlock_lock_set_held_is_held(h) && etcdlock_lock_set_held_lost_reason(h) == ETCDLOCK_LOST_KEY_DELETED);
    char *v = value_of(data);
    CHECK(v && strcmp(v, "2") == 0);
    free(v);
    /* The release says the set was lost, and deletes the keys left. */
    CHECK_RC(etcdlock_lock_set_held_release(h), ETCDLOCK_E_NOT_HELD);
    CHECK(queue_len(x) == 0 && queue_len(y) == 0 && queue_len(z) == 0);
    CHECK(atomic_load(&lost.calls) == 1);
    etcdlock_lock_set_held_free(h);
out:
    etcdlock_lock_set_free(set);
    etcdlock_client_free(c);
}

/* A job's set: reading `cfg`, writing its own name, one of 2 permits of `gpus`. */
static etcdlock_lock_set *job(etcdlock_client *c, const char *cfg, const char *name, const char *gpus) {
    etcdlock_set_member m[3] = {{cfg, ETCDLOCK_SET_READ, 0}, {name, ETCDLOCK_SET_WRITE, 0}, {gpus, ETCDLOCK_SET_PERMIT, 2}};
    etcdlock_lock_set *set = NULL;
    CHECK_RC(etcdlock_lock_set_open(c, m, 3, 10, &set), ETCDLOCK_OK);
    return set;
}

/* covers: LOCKSET-MIXED-001 */
static void test_mixed_modes_two_readers_a_third_without_a_permit_and_a_writer(void) {
    etcdlock_client *c = connect_client();
    char cfg[128], gpus[128], ja[128], jb[128], jc[128];
    unique(cfg, sizeof cfg, "ls-cfg");
    unique(gpus, sizeof gpus, "ls-gpus");
    unique(ja, sizeof ja, "ls-job-a");
    unique(jb, sizeof jb, "ls-job-b");
    unique(jc, sizeof jc, "ls-job-c");
    etcdlock_lock_set *s1 = job(c, cfg, ja, gpus), *s2 = job(c, cfg, jb, gpus), *s3 = job(c, cfg, jc, gpus);
    etcdlock_lock_set_held *h1 = NULL, *h2 = NULL, *h3 = NULL;
    CHECK_RC(etcdlock_lock_set_acquire(s1, 5000, NULL, &h1), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_set_acquire(s2, 5000, NULL, &h2), ETCDLOCK_OK); /* two readers, two permits */
    CHECK_RC(etcdlock_lock_set_acquire(s3, 0, NULL, &h3), ETCDLOCK_E_WOULD_BLOCK);  /* no permit left */
    CHECK(h3 == NULL);
    CHECK(queue_len(cfg) == 2 && queue_len(gpus) == 2 && queue_len(jc) == 0);
    /* A writer of cfg waits for both reading sets; a reading set after it waits for it. */
    struct outcome writer = {0};
    CHECK_RC(etcdlock_rwlock_write_async(c, cfg, 10, 10000, NULL, on_lock, &writer), ETCDLOCK_OK);
    CHECK(wait_keys(cfg, 3) == 3);
    etcdlock_set_member rm[1] = {{cfg, ETCDLOCK_SET_READ, 0}};
    etcdlock_lock_set *reading = NULL;
    etcdlock_lock_set_held *r = NULL;
    CHECK_RC(etcdlock_lock_set_open(c, rm, 1, 10, &reading), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_set_acquire(reading, 500, NULL, &r), ETCDLOCK_E_LOCK_TIMEOUT); /* behind the writer */
    CHECK(!atomic_load(&writer.done));
    CHECK_RC(etcdlock_lock_set_held_release(h1), ETCDLOCK_OK);
    sleep_ms(200);
    CHECK(!atomic_load(&writer.done)); /* a reader is left */
    CHECK_RC(etcdlock_lock_set_held_release(h2), ETCDLOCK_OK);
    CHECK(wait_flag(&writer.done, 5000) && atomic_load(&writer.status) == ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_set_acquire(reading, 300, NULL, &r), ETCDLOCK_E_LOCK_TIMEOUT); /* beside the writer */
    CHECK_RC(etcdlock_lock_release(writer.lock), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_set_acquire(reading, 5000, NULL, &r), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_set_held_release(r), ETCDLOCK_OK);
    etcdlock_lock_set_held_free(r);
    etcdlock_lock_free(writer.lock);
    etcdlock_lock_set_held_free(h1);
    etcdlock_lock_set_held_free(h2);
    CHECK(queue_len(cfg) == 0 && queue_len(gpus) == 0 && queue_len(ja) == 0 && queue_len(jb) == 0);
    etcdlock_lock_set_free(reading);
    etcdlock_lock_set_free(s1);
    etcdlock_lock_set_free(s2);
    etcdlock_lock_set_free(s3);
    etcdlock_client_free(c);
}

/* covers: LOCKSET-BINDING-001 (timed out, tried, cancelled while waiting and before, the async
 * acquire, 64 names, a release twice: no key left in any queue) */
static void test_timeout_try_and_cancel_leave_no_key(void) {
    etcdlock_client *c = connect_client();
    char a[128], b[128];
    unique(a, sizeof a, "ls-ta");
    unique(b, sizeof b, "ls-tb");
    etcdlock_lock *holder = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, b, 10, 5000, NULL, &holder), ETCDLOCK_OK);
    const char *names[] = {a, b};
    etcdlock_lock_set *set = open_names(c, names, 2);
    etcdlock_lock_set_held *h = (etcdlock_lock_set_held *)&h;
    double started = now_ms();
    CHECK_RC(etcdlock_lock_set_acquire(set, 500, NULL, &h), ETCDLOCK_E_LOCK_TIMEOUT);
    CHECK(now_ms() - started > 400 && now_ms() - started < 3000);
    CHECK(h == (etcdlock_lock_set_held *)&h);
    CHECK(queue_len(a) == 0 && queue_len(b) == 1);
    CHECK_RC(etcdlock_lock_set_acquire(set, 0, NULL, &h), ETCDLOCK_E_WOULD_BLOCK); /* never held in part */
    CHECK(queue_len(a) == 0 && queue_len(b) == 1);

    /* A waiting _async acquire cancelled: it ends at once, leaving no key. */
    etcdlock_cancel *cancel = etcdlock_cancel_new();
    struct outcome waiting = {0};
    CHECK_RC(etcdlock_lock_set_acquire_async(set, 20000, cancel, on_set, &waiting), ETCDLOCK_OK);
    CHECK(wait_keys(a, 1) == 1);
    CHECK(!atomic_load(&waiting.done));
    double cancelled = now_ms();
    etcdlock_cancel_trigger(cancel);
    CHECK(wait_flag(&waiting.done, 5000) && atomic_load(&waiting.status) == ETCDLOCK_E_CANCELLED);
    CHECK(waiting.held == NULL && waiting.at - cancelled < 1000);
    CHECK(queue_len(a) == 0 && queue_len(b) == 1);
    /* A token triggered before: cancelled at once, nothing sent. */
    CHECK_RC(etcdlock_lock_set_acquire(set, ETCDLOCK_WAIT_FOREVER, cancel, &h), ETCDLOCK_E_CANCELLED);
    CHECK(queue_len(a) == 0);
    etcdlock_cancel_free(cancel);

    /* Free again: the _async acquire holds both, with a larger token than the lone holder's. */
    struct outcome got = {0};
    CHECK_RC(etcdlock_lock_set_acquire_async(set, 5000, NULL, on_set, &got), ETCDLOCK_OK);
    sleep_ms(200);
    CHECK(!atomic_load(&got.done));
    int64_t lone = etcdlock_lock_fencing_token(holder);
    CHECK_RC(etcdlock_lock_release(holder), ETCDLOCK_OK);
    CHECK(wait_flag(&got.done, 5000) && atomic_load(&got.status) == ETCDLOCK_OK);
    CHECK(etcdlock_lock_set_held_fencing_token(got.held) > lone);
    CHECK_RC(etcdlock_lock_set_held_release(got.held), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_set_held_release(got.held), ETCDLOCK_E_NOT_HELD); /* twice */
    struct outcome quiet = {0};
    CHECK_RC(etcdlock_lock_set_held_on_lost(got.held, on_lost, &quiet), ETCDLOCK_E_NOT_HELD);
    etcdlock_lock_set_held_free(got.held);
    CHECK(queue_len(a) == 0 && queue_len(b) == 0);

    /* The largest set: 64 names, taken and released in one Txn each; freed while held releases. */
    char many[ETCDLOCK_MAX_LOCK_SET][128];
    const char *m[ETCDLOCK_MAX_LOCK_SET];
    for (int i = 0; i < ETCDLOCK_MAX_LOCK_SET; i++) {
        unique(many[i], sizeof many[i], "ls-m");
        m[i] = many[i];
    }
    etcdlock_lock_set *big = open_names(c, m, ETCDLOCK_MAX_LOCK_SET);
    etcdlock_lock_set_held *bh = NULL;
    CHECK_RC(etcdlock_lock_set_acquire(big, 5000, NULL, &bh), ETCDLOCK_OK);
    size_t n = 0;
    etcdlock_lock_set_held_names(bh, &n);
    CHECK(n == ETCDLOCK_MAX_LOCK_SET && queue_len(many[63]) == 1);
    etcdlock_lock_set_held_free(bh);
    CHECK(queue_len(many[0]) == 0 && queue_len(many[63]) == 0);
    etcdlock_lock_free(holder);
    etcdlock_lock_set_free(big);
    etcdlock_lock_set_free(set);
    etcdlock_client_free(c);
}

int main(int argc, char **argv) {
    int quick = argc == 2 && strcmp(argv[1], "quick") == 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!quick) RUN(test_opposite_orders_never_deadlock_and_never_share_a_name);
    RUN(test_one_token_on_every_key_and_a_deleted_member_loses_the_set);
    RUN(test_mixed_modes_two_readers_a_third_without_a_permit_and_a_writer);
    RUN(test_timeout_try_and_cancel_leave_no_key);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    return summary("test_lockset");
}
