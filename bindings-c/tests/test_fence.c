/* Fences in their string form (etcdlock_pool_held_fence, etcdlock_lock_set_held_fence,
 * etcdlock_lock_fence) checked with etcdlock_check_fence against a real etcd: true while held,
 * false after the release; the next holder's token larger; the name and token as etcdctl
 * reads the key. Scenario IDs of tests/conformance/scenarios.md are named in `covers:` comments. */
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

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_a_slots_fence_checks_while_held_and_not_after_release);
    RUN(test_a_lock_set_members_fence_is_at_the_sets_token);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    return summary("test_fence");
}
