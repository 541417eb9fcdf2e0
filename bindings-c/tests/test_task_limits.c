/* The task queue's limit on a claim's life (etcdlock_queue_open_with_max_processing) against a
 * real etcd, with etcdctl as the witness of what is left: a claim whose handler outlives
 * max_processing_ms ends (the lost callback fires, the ack fails, the item is claimed again);
 * a task acked in time is untouched; a negative limit is refused.
 * Scenario IDs of tests/conformance/scenarios.md are named in `covers:` comments. */
#include "check.h"
#include <stdatomic.h>

#define K(s) (const uint8_t *)(s), strlen(s)

struct lost_seen {
    atomic_int calls;
    atomic_int reason;
};

static void on_lost(void *user, int reason) {
    struct lost_seen *l = user;
    atomic_store(&l->reason, reason);
    atomic_fetch_add(&l->calls, 1);
}

static void put_id(etcdlock_queue *q, const char *id) {
    CHECK_RC(etcdlock_queue_put(q, K(id), id, 0, 0, NULL), ETCDLOCK_OK);
}

/* covers: QUEUE-MAXPROC-001 */
static void test_a_claim_past_max_processing_ends(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "q-maxproc");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_queue *q = NULL;
    CHECK_RC(etcdlock_queue_open_with_max_processing(c, name, 10, 5, 1000, &q), ETCDLOCK_OK);
    if (!q) return;
    put_id(q, "hung");
    etcdlock_task *t = NULL;
    CHECK_RC(etcdlock_queue_claim(q, 0, NULL, NULL, 0, &t), ETCDLOCK_OK);
    if (!t) return;
    double at = now_ms();
    struct lost_seen lost = {0};
    CHECK_RC(etcdlock_task_on_lost(t, on_lost, &lost), ETCDLOCK_OK);
    for (int i = 0; i < 500 && atomic_load(&lost.calls) == 0; i++) sleep_ms(10);
    double took = now_ms() - at;
    CHECK(atomic_load(&lost.calls) == 1); /* else the claim outlived max_processing */
    CHECK(atomic_load(&lost.reason) == ETCDLOCK_LOST_KEY_DELETED);
    CHECK(took >= 900);
    CHECK(!etcdlock_task_is_held(t) && etcdlock_task_lost_reason(t) == ETCDLOCK_LOST_KEY_DELETED);
    etcdlock_task *again = NULL;
    CHECK_RC(etcdlock_queue_claim(q, 5000, NULL, NULL, 0, &again), ETCDLOCK_OK);
    if (again) {
        CHECK(strcmp(etcdlock_task_id(again), "hung") == 0 && etcdlock_task_attempts(again) == 2);
        CHECK_RC(etcdlock_task_ack(t, NULL), ETCDLOCK_E_NOT_HELD); /* the late ack */
        CHECK_RC(etcdlock_task_ack(again, NULL), ETCDLOCK_OK);
        etcdlock_task_free(again);
    }
    etcdlock_task_free(t);
    /* A task acked in time is not touched by its timer. */
    put_id(q, "quick");
    etcdlock_task *quick = NULL;
    CHECK_RC(etcdlock_queue_claim(q, 0, NULL, NULL, 0, &quick), ETCDLOCK_OK);
    CHECK_RC(etcdlock_task_ack(quick, NULL), ETCDLOCK_OK);
    etcdlock_task_free(quick);
    CHECK(count_keys(prefix) == 0);
    etcdlock_queue_free(q);
    etcdlock_client_free(c);
}

/* covers: QUEUE-MAXPROC-001 (a negative limit; 0 is no limit) */
static void test_a_negative_max_processing_is_refused(void) {
    etcdlock_client *c = connect_client();
    char name[128];
    unique(name, sizeof name, "q-maxproc-input");
    etcdlock_queue *q = NULL;
    CHECK_RC(etcdlock_queue_open_with_max_processing(c, name, 10, 5, -1, &q), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(q == NULL);
    CHECK_RC(etcdlock_queue_open_with_max_processing(c, name, 10, 5, INT64_MIN, &q), ETCDLOCK_E_INVALID_ARGUMENT);
    /* The core's other checks still apply. */
    CHECK_RC(etcdlock_queue_open_with_max_processing(c, name, 0, 5, 1000, &q), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_open_with_max_processing(c, name, 10, 5, 0, &q), ETCDLOCK_OK);
    etcdlock_queue_free(q);
    CHECK(count_keys(name) == 0);
    etcdlock_client_free(c);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_a_claim_past_max_processing_ends);
    RUN(test_a_negative_max_processing_is_refused);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    return summary("test_task_limits");
}
