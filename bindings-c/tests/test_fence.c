/* Fences in their string form (etcdlock_pool_held_fence, etcdlock_lock_set_held_fence,
 * etcdlock_lock_fence, etcdlock_task_fence) checked with etcdlock_check_fence against a real
 * etcd: true while held, false after the release, the revoke or for another cluster; the next
 * holder's token larger; the name and token as etcdctl reads the key. Scenario IDs of tests/conformance/scenarios.md are named in `covers:` comments. */
#include "lockset_helpers.h"

/* covers: FENCE-POOL-001 */
static void test_a_slots_fence_checks_while_held_and_not_after_release(void) {
    etcdlock_client *c = connect_client();
    char name[128], key[192];
    unique(name, sizeof name, "fence-pool");
    snprintf(key, sizeof key, "%s/slot/b", name);
    const char *ids[] = {"a", "b"};
    etcdlock_pool *pool = NULL;
    CHECK_RC(etcdlock_pool_open(c, name, ids, 2, 10, 0, &pool), ETCDLOCK_OK);
    etcdlock_pool_held *held = NULL;
    CHECK_RC(etcdlock_pool_acquire(pool, 2, NULL, 5000, NULL, &held), ETCDLOCK_OK);
    if (!held) goto out;
    const int64_t *tokens = etcdlock_pool_held_tokens(held, NULL);
    char *f = NULL, *fa = NULL, *again = NULL;
    CHECK_RC(etcdlock_pool_held_fence(held, "b", &f), ETCDLOCK_OK);
    if (!f) goto out;
    /* The slot's key at its token, as etcd has it. */
    CHECK(strncmp(f, "etcdlock-fence.v1.k.", 20) == 0 && fence_names(f, key));
    int64_t rev = 0, lease = 0;
    key_info(K(key), &rev, &lease);
    CHECK(fence_token(f) == tokens[1] && rev == tokens[1]);
    CHECK(holds(c, f));
    CHECK_RC(etcdlock_pool_held_fence(held, "a", &fa), ETCDLOCK_OK);
    CHECK(fa && fence_token(fa) == tokens[0] && holds(c, fa));
    char *none = (char *)&none;
    CHECK_RC(etcdlock_pool_held_fence(held, "z", &none), ETCDLOCK_E_INVALID_ARGUMENT); /* not held */
    CHECK_RC(etcdlock_pool_held_fence(held, NULL, &none), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_held_fence(NULL, "b", &none), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_held_fence(held, "b", NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(none == (char *)&none);
    CHECK_RC(etcdlock_pool_held_release(held), ETCDLOCK_OK);
    CHECK(!holds(c, f) && !holds(c, fa));
    /* As the core's: the fence is still given after the release, and does not check. */
    CHECK_RC(etcdlock_pool_held_fence(held, "b", &again), ETCDLOCK_OK);
    CHECK(again && strcmp(again, f) == 0);
    etcdlock_pool_held *next = NULL;
    char *newer = NULL;
    CHECK_RC(etcdlock_pool_acquire(pool, 2, NULL, 5000, NULL, &next), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_held_fence(next, "b", &newer), ETCDLOCK_OK);
    CHECK(newer && fence_names(newer, key) && fence_token(newer) > fence_token(f));
    CHECK(newer && fence_token(newer) == etcdlock_pool_held_tokens(next, NULL)[1] && holds(c, newer) && !holds(c, f));
    CHECK_RC(etcdlock_pool_held_release(next), ETCDLOCK_OK);
    CHECK(!holds(c, newer));
    etcdlock_pool_held_free(next);
    etcdlock_string_free(newer);
    etcdlock_string_free(again);
    etcdlock_string_free(fa);
    etcdlock_string_free(f);
out:
    etcdlock_pool_held_free(held);
    etcdlock_pool_free(pool);
    etcdlock_client_free(c);
}

/* covers: LOCKSET-TOKEN-001 (a member's fence is its key at the set's token: it checks while
 * the set holds, not after the release; none for a released set or a name not in it) */
static void test_a_lock_set_members_fence_is_at_the_sets_token(void) {
    etcdlock_client *c = connect_client();
    char x[128], y[128];
    unique(x, sizeof x, "fence-x");
    unique(y, sizeof y, "fence-y");
    etcdlock_set_member m[2] = {{x, ETCDLOCK_SET_EXCLUSIVE, 0}, {y, ETCDLOCK_SET_WRITE, 0}};
    etcdlock_lock_set *set = NULL;
    etcdlock_lock_set_held *h = NULL;
    char *fx = NULL, *fy = NULL, *none = (char *)&none;
    CHECK_RC(etcdlock_lock_set_open(c, m, 2, 10, &set), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_set_acquire(set, 5000, NULL, &h), ETCDLOCK_OK);
    if (!h) goto out;
    int64_t token = etcdlock_lock_set_held_fencing_token(h);
    CHECK_RC(etcdlock_lock_set_held_fence(h, x, &fx), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_set_held_fence(h, y, &fy), ETCDLOCK_OK);
    if (!fx || !fy) goto out;
    CHECK(strncmp(fx, "etcdlock-fence.v1.q.", 20) == 0 && fence_names(fx, x) && fence_names(fy, y));
    CHECK(fence_token(fx) == token && fence_token(fy) == token);
    for (size_t i = 0; i < 2; i++) {
        size_t len = 0;
        const uint8_t *key = etcdlock_lock_set_held_key(h, i, &len);
        int64_t rev = 0, lease = 0;
        key_info(key, len, &rev, &lease);
        CHECK(rev == token);
    }
    CHECK(holds(c, fx) && holds(c, fy));
    CHECK_RC(etcdlock_lock_set_held_release(h), ETCDLOCK_OK);
    CHECK(!holds(c, fx) && !holds(c, fy));
    CHECK_RC(etcdlock_lock_set_held_fence(h, x, &none), ETCDLOCK_E_NOT_HELD);
    CHECK(none == (char *)&none);
    /* The next holder of x: a larger token; its fence checks, the set's does not. */
    etcdlock_lock *lone = NULL;
    char *later = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, x, 10, 5000, NULL, &lone), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_fence(lone, &later), ETCDLOCK_OK);
    CHECK(later && fence_names(later, x) && fence_token(later) == etcdlock_lock_fencing_token(lone));
    CHECK(later && fence_token(later) > token && holds(c, later) && !holds(c, fx));
    CHECK_RC(etcdlock_lock_release(lone), ETCDLOCK_OK);
    CHECK(!holds(c, later));
    CHECK_RC(etcdlock_lock_fence(lone, &none), ETCDLOCK_E_NOT_HELD); /* released */
    CHECK_RC(etcdlock_lock_fence(NULL, &none), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_fence(lone, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(none == (char *)&none);
    etcdlock_string_free(later);
    etcdlock_lock_free(lone);
out:
    etcdlock_string_free(fx);
    etcdlock_string_free(fy);
    etcdlock_lock_set_held_free(h);
    etcdlock_lock_set_free(set);
    etcdlock_client_free(c);
}

/* The name a fence's string form names (its last field, hex-decoded) in `out`. */
static void fence_name(const char *f, char *out, size_t len) {
    const char *hex = fence_field(f, 5);
    size_t n = 0;
    unsigned b = 0;
    for (; n + 1 < len && hex[2 * n] && sscanf(hex + 2 * n, "%2x", &b) == 1; n++) out[n] = (char)b;
    out[n] = 0;
}

/* The fence `f` with its cluster's ID changed (another etcd cluster's, the same name and token),
 * in `out`. */
static void other_cluster(const char *f, char *out, size_t len) {
    const char *cluster = fence_field(f, 3);
    unsigned long long id = strtoull(cluster, NULL, 16);
    snprintf(out, len, "%.*s%llx%s", (int)(cluster - f), f, id ^ 1, strchr(cluster, '.'));
}

/* covers: FENCE-CHECK-001 */
static void test_check_fence_holds_while_held_not_after_release_revoke_or_on_another_cluster(void) {
    etcdlock_client *c = connect_client(), *other = connect_client();
    char name[128], alien[512];
    unique(name, sizeof name, "fence-check");
    etcdlock_lock *first = NULL;
    char *f = NULL, *g = NULL, *none = (char *)&none;
    struct outcome next = {0};
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 5000, NULL, &first), ETCDLOCK_OK);
    if (!first) goto out;
    CHECK_RC(etcdlock_lock_fence(first, &f), ETCDLOCK_OK);
    if (!f) goto out;
    CHECK(fence_names(f, name) && fence_token(f) == etcdlock_lock_fencing_token(first));
    CHECK(holds(c, f) && holds(other, f));
    /* Another cluster's fence, however it names the holder, never checks. */
    other_cluster(f, alien, sizeof alien);
    CHECK(strcmp(alien, f) != 0 && !holds(c, alien));
    /* A waiter behind it (its key is in the queue, not the holder's): released, the first's fence
     * no longer checks; the next holder's does, with a larger token. */
    CHECK_RC(etcdlock_lock_acquire_async(other, name, 10, 10000, NULL, on_lock, &next), ETCDLOCK_OK);
    char queue[160];
    snprintf(queue, sizeof queue, "%s/", name);
    CHECK(wait_keys(queue, 2) == 2);
    CHECK(holds(c, f));
    CHECK_RC(etcdlock_lock_release(first), ETCDLOCK_OK);
    CHECK(!holds(c, f));
    CHECK(wait_flag(&next.done, 10000) && atomic_load(&next.status) == ETCDLOCK_OK);
    if (!next.lock) goto out;
    CHECK_RC(etcdlock_lock_fence(next.lock, &g), ETCDLOCK_OK);
    CHECK(g && fence_names(g, name) && fence_token(g) > fence_token(f));
    CHECK(g && holds(c, g) && holds(other, g) && !holds(c, f));
    /* Expiry: the holder's lease revoked behind its back. */
    CHECK(ctl("lease revoke %llx", (unsigned long long)etcdlock_lock_lease_id(next.lock)));
    CHECK(g && !holds(c, g) && !holds(other, g));
    /* Malformed fences and NULLs: INVALID_ARGUMENT, the result untouched. */
    const char *bad[] = {"", "nonsense", "etcdlock-fence.v1.q.1.1.6", "etcdlock-fence.v1.q.1.01.61",
                         "etcdlock-fence.v1.x.1.1.61", "etcdlock-fence.v1.q.zz.1.61", "etcdlock-fence.v1.q.1.0.61"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bool h = true;
        CHECK_RC(etcdlock_check_fence(c, bad[i], &h), ETCDLOCK_E_INVALID_ARGUMENT);
        CHECK(h);
    }
    bool h = true;
    CHECK_RC(etcdlock_check_fence(c, NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_check_fence(NULL, f, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_check_fence(c, f, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(h && none == (char *)&none);
out:
    etcdlock_string_free(g);
    etcdlock_string_free(f);
    etcdlock_lock_free(next.lock);
    etcdlock_lock_free(first);
    etcdlock_client_free(other);
    etcdlock_client_free(c);
}

/* covers: FENCE-TASK-001 (the claim's fence in etcd; the database's side is tests/test_fence_db.c) */
static void test_a_claims_fence_is_on_its_claim_lock_and_checks_only_while_claimed(void) {
    etcdlock_client *c = connect_client();
    char name[128], claim[160];
    unique(name, sizeof name, "fence-task");
    snprintf(claim, sizeof claim, "%s/claim/", name);
    etcdlock_queue *q = NULL;
    etcdlock_task *first = NULL, *second = NULL;
    char *f1 = NULL, *f2 = NULL, *none = (char *)&none;
    CHECK_RC(etcdlock_queue_open(c, name, 10, 5, &q), ETCDLOCK_OK);
    CHECK_RC(etcdlock_queue_put(q, (const uint8_t *)"job", 3, "job", 0, 0, NULL), ETCDLOCK_OK);
    CHECK_RC(etcdlock_queue_claim(q, 5000, NULL, NULL, 0, &first), ETCDLOCK_OK);
    if (!first) goto out;
    CHECK_RC(etcdlock_task_fence(first, &f1), ETCDLOCK_OK);
    if (!f1) goto out;
    /* A queue-kind fence on the claim's lock `<queue>/claim/<slot>`, at the claim's token. */
    CHECK(strncmp(f1, "etcdlock-fence.v1.q.", 20) == 0 && fence_token(f1) == etcdlock_task_fencing_token(first));
    char fname[256] = {0};
    fence_name(f1, fname, sizeof fname);
    CHECK(strncmp(fname, claim, strlen(claim)) == 0 && strlen(fname) > strlen(claim));
    CHECK(holds(c, f1));
    CHECK_RC(etcdlock_task_nack(first, 0), ETCDLOCK_OK);
    CHECK(!holds(c, f1));
    CHECK_RC(etcdlock_task_fence(first, &none), ETCDLOCK_E_NOT_HELD); /* the claim ended */
    /* The item claimed again: the same claim lock, a larger token. */
    CHECK_RC(etcdlock_queue_claim(q, 5000, NULL, NULL, 0, &second), ETCDLOCK_OK);
    if (!second) goto out;
    CHECK_RC(etcdlock_task_fence(second, &f2), ETCDLOCK_OK);
    CHECK(f2 && fence_names(f2, fname) && fence_token(f2) > fence_token(f1) && holds(c, f2) && !holds(c, f1));
    CHECK_RC(etcdlock_task_ack(second, NULL), ETCDLOCK_OK);
    CHECK(f2 && !holds(c, f2));
    CHECK_RC(etcdlock_task_fence(second, &none), ETCDLOCK_E_NOT_HELD);
    CHECK_RC(etcdlock_task_fence(NULL, &none), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_task_fence(second, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(none == (char *)&none);
out:
    etcdlock_string_free(f2);
    etcdlock_string_free(f1);
    etcdlock_task_free(second);
    etcdlock_task_free(first);
    etcdlock_queue_free(q);
    etcdlock_client_free(c);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_a_slots_fence_checks_while_held_and_not_after_release);
    RUN(test_a_lock_set_members_fence_is_at_the_sets_token);
    RUN(test_check_fence_holds_while_held_not_after_release_revoke_or_on_another_cluster);
    RUN(test_a_claims_fence_is_on_its_claim_lock_and_checks_only_while_claimed);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    return summary("test_fence");
}
