/* etcdlock_*_health (issue #59): ok while held; not ok by the time the lost callback runs (read
 * from inside it); released after a release; NULL handles and out pointers refused. Against the
 * etcd at ETCDLOCK_ENDPOINTS. */
#include "check.h"
#include <pthread.h>
#include <stdatomic.h>

/* What the lost callback saw: the reason, and the lock's health read right then. */
struct seen {
    etcdlock_lock *lock;
    atomic_int reason;
    atomic_int done;
    int rc;
    etcdlock_health health;
};

static void on_lost(void *user_data, int reason) {
    struct seen *s = user_data;
    s->rc = etcdlock_lock_health(s->lock, &s->health);
    atomic_store(&s->reason, reason);
    atomic_store(&s->done, 1);
}

static void key_of(const etcdlock_lock *l, char *buf, size_t cap) {
    size_t len = 0;
    const uint8_t *k = etcdlock_lock_key(l, &len);
    buf[0] = 0;
    if (k && len < cap) {
        memcpy(buf, k, len);
        buf[len] = 0;
    }
}

static void check_held(const etcdlock_lock *l, int64_t ttl_ms) {
    etcdlock_health h;
    memset(&h, 0xAB, sizeof h);
    CHECK_RC(etcdlock_lock_health(l, &h), ETCDLOCK_OK);
    CHECK(h.ok && h.state == ETCDLOCK_HEALTH_HELD && h.lost_reason == 0);
    CHECK(h.fencing_token == etcdlock_lock_fencing_token(l));
    CHECK(h.lease_id != 0);
    CHECK(h.exclusive_for_ms > 0 && h.exclusive_for_ms <= ttl_ms);
}

static void check_released(const etcdlock_lock *l) {
    etcdlock_health h;
    CHECK_RC(etcdlock_lock_health(l, &h), ETCDLOCK_OK);
    CHECK(!h.ok && h.state == ETCDLOCK_HEALTH_RELEASED && h.lost_reason == 0 && h.exclusive_for_ms == -1);
}

/* covers: HEALTH-HANDLE-001 */
static void test_health_flips_no_later_than_the_lost_callback(void) {
    etcdlock_client *c = connect_client();
    char name[128], key[300];
    unique(name, sizeof name, "health");
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    if (!l) {
        etcdlock_client_free(c);
        return;
    }
    check_held(l, 10000);
    struct seen s = {.lock = l};
    CHECK_RC(etcdlock_lock_on_lost(l, on_lost, &s), ETCDLOCK_OK);
    key_of(l, key, sizeof key);
    CHECK(ctl("del '%s'", key)); /* another client deletes the key */
    double end = now_ms() + 5000;
    while (!atomic_load(&s.done) && now_ms() < end) sleep_ms(10);
    CHECK(atomic_load(&s.done));
    CHECK(atomic_load(&s.reason) == ETCDLOCK_LOST_KEY_DELETED);
    CHECK(s.rc == ETCDLOCK_OK);
    CHECK(!s.health.ok && s.health.state == ETCDLOCK_HEALTH_LOST);
    CHECK(s.health.lost_reason == ETCDLOCK_LOST_KEY_DELETED && s.health.exclusive_for_ms == -1);
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_E_NOT_HELD);
    check_released(l);
    etcdlock_lock_free(l);
    etcdlock_client_free(c);
}

/* covers: HEALTH-HANDLE-001 */
static void test_health_of_a_permit_a_write_and_a_leadership(void) {
    etcdlock_client *c = connect_client();
    char name[128];
    etcdlock_lock *l = NULL;
    unique(name, sizeof name, "health-sem");
    CHECK_RC(etcdlock_semaphore_acquire(c, name, 2, 10, 0, NULL, &l), ETCDLOCK_OK);
    if (l) {
        check_held(l, 10000);
        CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
        check_released(l);
        etcdlock_lock_free(l);
    }
    l = NULL;
    unique(name, sizeof name, "health-rw");
    CHECK_RC(etcdlock_rwlock_write(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    if (l) {
        check_held(l, 10000);
        CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
        check_released(l);
        etcdlock_lock_free(l);
    }
    l = NULL;
    unique(name, sizeof name, "health-el");
    CHECK_RC(etcdlock_election_campaign(c, name, 10, 0, NULL, (const uint8_t *)"me", 2, &l), ETCDLOCK_OK);
    if (l) {
        check_held(l, 10000);
        CHECK_RC(etcdlock_election_resign(l), ETCDLOCK_OK);
        check_released(l);
        etcdlock_lock_free(l);
    }
    etcdlock_client_free(c);
}

/* covers: HEALTH-HANDLE-001 (bad input: a NULL handle or out pointer) */
static void test_health_refuses_null(void) {
    etcdlock_client *c = connect_client();
    char name[128];
    unique(name, sizeof name, "health-null");
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    etcdlock_health h;
    memset(&h, 0x5A, sizeof h);
    etcdlock_health untouched = h;
    CHECK_RC(etcdlock_lock_health(l, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "out must not be NULL") != NULL);
    CHECK_RC(etcdlock_lock_health(NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "lock must not be NULL") != NULL);
    CHECK(memcmp(&h, &untouched, sizeof h) == 0); /* nothing written */
    CHECK_RC(etcdlock_lock_set_held_health(NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_held_health(NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_task_health(NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once_health(NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(memcmp(&h, &untouched, sizeof h) == 0);
    if (l) CHECK(etcdlock_lock_is_held(l)); /* the refused calls changed nothing */
    etcdlock_lock_free(l);
    etcdlock_client_free(c);
}

int main(void) {
    RUN(test_health_flips_no_later_than_the_lost_callback);
    RUN(test_health_of_a_permit_a_write_and_a_leadership);
    RUN(test_health_refuses_null);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK); /* the runtime's threads end: valgrind sees no leak */
    return summary("test_health");
}
