/* A lock's queue holds only waiters: keys under `<name>/` that no waiter wrote never block
 * `<name>`, and fenced writes cannot put keys there.
 * Scenario IDs of tests/conformance/scenarios.md are named in `covers:` comments. */
#include "check.h"
#include <inttypes.h>
#include <pthread.h>

#define K(s) (const uint8_t *)(s), strlen(s)

/* covers: LOCK-PREFIX-001 */
static void test_fenced_write_under_the_prefix_is_refused(void) {
    etcdlock_client *c = connect_client();
    char name[128], key[200], prefix[140];
    unique(name, sizeof name, "guardprefix");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 5000, NULL, &l), ETCDLOCK_OK);
    const char *suffixes[] = {"last", "a/b"};
    for (int i = 0; i < 2; i++) {
        snprintf(key, sizeof key, "%s/%s", name, suffixes[i]);
        CHECK_RC(etcdlock_put(c, K(key), K("42"), l), ETCDLOCK_E_INVALID_ARGUMENT);
    }
    CHECK(count_keys(prefix) == 1); /* nothing written: only the lock's own key */
    snprintf(key, sizeof key, "%s-state", name); /* only starts with the name: fine */
    CHECK_RC(etcdlock_put(c, K(key), K("42"), l), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK); /* immediate */
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    CHECK_RC(etcdlock_delete(c, K(key)), ETCDLOCK_OK);
    etcdlock_client_free(c);
}

struct waiter {
    etcdlock_client *client;
    const char *name;
    int rc;
    etcdlock_lock *lock;
};

static void *wait_for_lock(void *arg) {
    struct waiter *w = arg;
    w->rc = etcdlock_lock_acquire(w->client, w->name, 10, 10000, NULL, &w->lock);
    return NULL;
}

/* covers: LOCK-FOREIGN-001 */
static void test_keys_that_are_no_waiters_never_make_the_lock_busy(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "foreign");
    snprintf(prefix, sizeof prefix, "%s/", name);
    /* A lease of our own for a user's key on a lease, via etcdctl ("lease <hex> granted ..."). */
    char *granted = etcdctl("lease grant 60");
    uint64_t lease = 0;
    CHECK(granted && sscanf(granted, "lease %" SCNx64, &lease) == 1);
    free(granted);
    ctl("put '%s/last' 'no lease'", name);
    ctl("put '%s/config' 'on a lease' --lease=%" PRIx64, name, lease);
    ctl("put '%s/%" PRIx64 "' 'named like a waiter of another lease' --lease=%" PRIx64, name, lease + 1, lease);
    ctl("put '%s/%" PRIx64 "' 'named like a waiter, no lease'", name, lease);
    CHECK(count_keys(prefix) == 4);

    etcdlock_lock *held = NULL, *l = (etcdlock_lock *)0x1;
    CHECK_RC(etcdlock_lock_acquire(a, name, 10, 0, NULL, &held), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_acquire(b, name, 10, 0, NULL, &l), ETCDLOCK_E_WOULD_BLOCK); /* exclusion holds */
    ctl("put '%s/between' ''", name);
    struct waiter w = {b, name, -1, NULL};
    pthread_t t;
    pthread_create(&t, NULL, wait_for_lock, &w);
    for (int i = 0; i < 250 && count_keys(prefix) < 7; i++) sleep_ms(20);
    CHECK(count_keys(prefix) == 7); /* four user keys, "between", holder, waiter */
    CHECK_RC(etcdlock_lock_release(held), ETCDLOCK_OK);
    etcdlock_lock_free(held);
    pthread_join(t, NULL);
    CHECK_RC(w.rc, ETCDLOCK_OK);
    if (w.rc == ETCDLOCK_OK) {
        CHECK_RC(etcdlock_lock_release(w.lock), ETCDLOCK_OK);
        etcdlock_lock_free(w.lock);
    }
    l = NULL;
    CHECK_RC(etcdlock_lock_acquire(a, name, 10, 2000, NULL, &l), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    CHECK(count_keys(prefix) == 5); /* the keys that are no waiters, left alone */
    ctl("del --prefix '%s'", prefix);
    ctl("lease revoke %" PRIx64, lease);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

/* covers: LOCK-NESTED-001 */
static void test_a_lock_and_a_lock_named_under_it_are_independent(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char name[128], inner_name[140], prefix[140];
    unique(name, sizeof name, "nested");
    snprintf(inner_name, sizeof inner_name, "%s/a", name);
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *inner = NULL, *outer = NULL, *l = (etcdlock_lock *)0x1;
    CHECK_RC(etcdlock_lock_acquire(a, inner_name, 10, 5000, NULL, &inner), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_acquire(b, name, 10, 0, NULL, &outer), ETCDLOCK_OK); /* N free while N/a held */
    CHECK_RC(etcdlock_lock_acquire(a, name, 10, 0, NULL, &l), ETCDLOCK_E_WOULD_BLOCK);
    CHECK_RC(etcdlock_lock_acquire(b, inner_name, 10, 0, NULL, &l), ETCDLOCK_E_WOULD_BLOCK);
    CHECK(etcdlock_lock_is_held(inner) && etcdlock_lock_is_held(outer));
    CHECK_RC(etcdlock_lock_release(inner), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_release(outer), ETCDLOCK_OK);
    etcdlock_lock_free(inner);
    etcdlock_lock_free(outer);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_fenced_write_under_the_prefix_is_refused);
    RUN(test_keys_that_are_no_waiters_never_make_the_lock_busy);
    RUN(test_a_lock_and_a_lock_named_under_it_are_independent);
    return summary("test_queue");
}
