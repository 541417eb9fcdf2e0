/* Lock sets: every NULL and bad argument of etcdlock_lock_set_* refused with
 * ETCDLOCK_E_INVALID_ARGUMENT before anything is sent (outputs untouched, no key in any queue,
 * never a callback), NULL getters and frees, and a client closed by etcdlock_shutdown. */
#include "lockset_helpers.h"

#define UNTOUCHED(p) ((void *)&(p))

static void never(void *user, int status, etcdlock_lock_set_held *held) {
    (void)status;
    (void)held;
    atomic_store((atomic_int *)user, 1);
}

/* Opening `m` (`n` members, TTL `ttl`) is INVALID_ARGUMENT and writes nothing. */
static void refused(etcdlock_client *c, const etcdlock_set_member *m, size_t n, int64_t ttl, int line) {
    etcdlock_lock_set *set = (etcdlock_lock_set *)UNTOUCHED(set);
    int rc = etcdlock_lock_set_open(c, m, n, ttl, &set);
    if (rc != ETCDLOCK_E_INVALID_ARGUMENT || set != (etcdlock_lock_set *)UNTOUCHED(set)) {
        fprintf(stderr, "  line %d: open -> %s, want ETCDLOCK_E_INVALID_ARGUMENT\n", line, etcdlock_status_str(rc));
        g_check_failures++;
    }
}
#define REFUSED(c, m, n, ttl) refused((c), (m), (n), (ttl), __LINE__)

/* covers: LOCKSET-BINDING-001 (no names, a name twice, a name under another, 65 names, an empty
 * name, a bad TTL, mode or permits, NULLs: refused before anything is sent) */
static void test_bad_input_is_refused_before_anything_is_sent(void) {
    etcdlock_client *c = connect_client();
    char a[128], ab[160], abc[192], trailing[160];
    unique(a, sizeof a, "lsin-a");
    snprintf(ab, sizeof ab, "%s/b", a);
    snprintf(abc, sizeof abc, "%s/b/c", a);
    snprintf(trailing, sizeof trailing, "%s/", a);
    etcdlock_set_member one[1] = {{a, 0, 0}};
    REFUSED(NULL, one, 1, 10);
    REFUSED(c, NULL, 1, 10);
    REFUSED(c, one, 0, 10); /* no names */
    REFUSED(c, NULL, 0, 10);
    etcdlock_set_member twice[2] = {{a, 0, 0}, {a, ETCDLOCK_SET_READ, 0}};
    REFUSED(c, twice, 2, 10);
    etcdlock_set_member nested[2] = {{a, 0, 0}, {ab, 0, 0}}, nested2[2] = {{abc, 0, 0}, {ab, 0, 0}};
    REFUSED(c, nested, 2, 10);
    REFUSED(c, nested2, 2, 10);
    etcdlock_set_member many[ETCDLOCK_MAX_LOCK_SET + 1];
    char names[ETCDLOCK_MAX_LOCK_SET + 1][128];
    for (int i = 0; i <= ETCDLOCK_MAX_LOCK_SET; i++) {
        unique(names[i], sizeof names[i], "lsin-m");
        many[i] = (etcdlock_set_member){names[i], 0, 0};
    }
    REFUSED(c, many, ETCDLOCK_MAX_LOCK_SET + 1, 10); /* 65 names */
    etcdlock_set_member bad[1];
    bad[0] = (etcdlock_set_member){"", 0, 0};
    REFUSED(c, bad, 1, 10);
    bad[0] = (etcdlock_set_member){trailing, 0, 0};
    REFUSED(c, bad, 1, 10);
    bad[0] = (etcdlock_set_member){NULL, 0, 0};
    REFUSED(c, bad, 1, 10);
    bad[0] = (etcdlock_set_member){a, 4, 0}; /* no such mode */
    REFUSED(c, bad, 1, 10);
    bad[0] = (etcdlock_set_member){a, -1, 0};
    REFUSED(c, bad, 1, 10);
    bad[0] = (etcdlock_set_member){a, ETCDLOCK_SET_PERMIT, 0};
    REFUSED(c, bad, 1, 10);
    bad[0] = (etcdlock_set_member){a, ETCDLOCK_SET_PERMIT, ETCDLOCK_MAX_PERMITS + 1};
    REFUSED(c, bad, 1, 10);
    bad[0] = (etcdlock_set_member){a, ETCDLOCK_SET_EXCLUSIVE, 2}; /* permits without PERMIT */
    REFUSED(c, bad, 1, 10);
    bad[0] = (etcdlock_set_member){a, ETCDLOCK_SET_READ, 1};
    REFUSED(c, bad, 1, 10);
    REFUSED(c, one, 1, 0);
    REFUSED(c, one, 1, -1);
    REFUSED(c, one, 1, 10000000000LL);
    CHECK_RC(etcdlock_lock_set_open(c, one, 1, 10, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(queue_len(a) == 0);

    /* The acquire's arguments. */
    etcdlock_lock_set *set = NULL;
    CHECK_RC(etcdlock_lock_set_open(c, one, 1, 10, &set), ETCDLOCK_OK);
    etcdlock_lock_set_held *h = (etcdlock_lock_set_held *)UNTOUCHED(h);
    CHECK_RC(etcdlock_lock_set_acquire(NULL, 0, NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_acquire(set, 0, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_acquire(set, -2, NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(h == (etcdlock_lock_set_held *)UNTOUCHED(h));
    atomic_int called = 0;
    CHECK_RC(etcdlock_lock_set_acquire_async(NULL, 0, NULL, never, &called), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_acquire_async(set, 0, NULL, NULL, &called), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_acquire_async(set, -2, NULL, never, &called), ETCDLOCK_E_INVALID_ARGUMENT);
    sleep_ms(100);
    CHECK(!atomic_load(&called) && queue_len(a) == 0);

    /* A holding's calls. */
    CHECK_RC(etcdlock_lock_set_acquire(set, 5000, NULL, &h), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_set_held_put(NULL, K("k"), K("v")), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_held_put(h, NULL, 1, K("v")), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_held_put(h, NULL, 0, K("v")), ETCDLOCK_E_INVALID_ARGUMENT); /* an empty key */
    CHECK_RC(etcdlock_lock_set_held_put(h, K("k"), NULL, 1), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_held_delete(NULL, K("k")), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_held_txn(h, NULL, 0, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_op op = {7, K("k"), K("v")};
    CHECK_RC(etcdlock_lock_set_held_txn(h, &op, 1, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_held_on_lost(h, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_held_on_lost(NULL, on_lost, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    char *fence = (char *)UNTOUCHED(fence);
    CHECK_RC(etcdlock_lock_set_held_fence(NULL, a, &fence), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_held_fence(h, NULL, &fence), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_held_fence(h, a, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_set_held_fence(h, ab, &fence), ETCDLOCK_E_INVALID_ARGUMENT); /* not a member */
    CHECK(fence == (char *)UNTOUCHED(fence));
    CHECK_RC(etcdlock_lock_set_held_release(NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(etcdlock_lock_set_held_is_held(h));
    CHECK_RC(etcdlock_lock_set_held_release(h), ETCDLOCK_OK);
    etcdlock_lock_set_held_free(h);

    /* NULL getters give their defaults; NULL frees do nothing. */
    CHECK(etcdlock_lock_set_len(NULL) == 0 && etcdlock_lock_set_len(set) == 1);
    CHECK(etcdlock_lock_set_held_fencing_token(NULL) == 0 && etcdlock_lock_set_held_lease_id(NULL) == 0);
    CHECK(!etcdlock_lock_set_held_is_held(NULL) && etcdlock_lock_set_held_lost_reason(NULL) == 0);
    CHECK(etcdlock_lock_set_held_names(NULL, NULL) == NULL && etcdlock_lock_set_held_key(NULL, 0, NULL) == NULL);
    etcdlock_lock_set_held_free(NULL);
    etcdlock_lock_set_free(NULL);
    bool holds = true;
    CHECK_RC(etcdlock_check_fence(c, "etcdlock-fence.v1.q.1.01.61", &holds), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_check_fence(c, "not a fence", &holds), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_check_fence(c, NULL, &holds), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_check_fence(NULL, "etcdlock-fence.v1.q.1.1.61", &holds), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_check_fence(c, "etcdlock-fence.v1.q.1.1.61", NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(holds);
    /* Another cluster's fence never checks. */
    CHECK_RC(etcdlock_check_fence(c, "etcdlock-fence.v1.q.1.1.61", &holds), ETCDLOCK_OK);
    CHECK(!holds);
    CHECK(queue_len(a) == 0);
    etcdlock_lock_set_free(set);
    etcdlock_client_free(c);
}

/* covers: LOCKSET-BINDING-001 (a closed client: a new set and an acquire of an existing one are
 * ETCDLOCK_E_CLOSED). Shuts the library down: last. */
static void test_a_closed_client(void) {
    etcdlock_client *c = connect_client();
    char a[128];
    unique(a, sizeof a, "lsin-closed");
    etcdlock_set_member one[1] = {{a, 0, 0}};
    etcdlock_lock_set *set = NULL, *after = NULL;
    CHECK_RC(etcdlock_lock_set_open(c, one, 1, 10, &set), ETCDLOCK_OK);
    etcdlock_lock_set_held *h = NULL;
    CHECK_RC(etcdlock_lock_set_acquire(set, 5000, NULL, &h), ETCDLOCK_OK);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_set_open(c, one, 1, 10, &after), ETCDLOCK_E_CLOSED);
    CHECK(after == NULL);
    etcdlock_lock_set_held *h2 = NULL;
    CHECK_RC(etcdlock_lock_set_acquire(set, 5000, NULL, &h2), ETCDLOCK_E_CLOSED);
    CHECK(h2 == NULL && !etcdlock_lock_set_held_is_held(h));
    CHECK_RC(etcdlock_lock_set_held_put(h, K("k"), K("v")), ETCDLOCK_E_CLOSED);
    etcdlock_lock_set_held_free(h);
    etcdlock_lock_set_free(set);
    etcdlock_client_free(c);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_bad_input_is_refused_before_anything_is_sent);
    RUN(test_a_closed_client);
    return summary("test_lockset_input");
}
