/* The task queue (etcdlock_queue_*, etcdlock_task_*) and once-per-period jobs (etcdlock_once*)
 * against a real etcd, with etcdctl as the witness of what is left: order, idempotent puts,
 * fenced writes and acks with a lost claim, delays, dead letters, the async claim and cancel,
 * bad input and NULLs, workers (this program run again as a child) SIGKILLed or SIGSTOPped
 * mid-task; once: one winner per period, failed and lost winners, bad options.
 * Scenario IDs of tests/conformance/scenarios.md are named in `covers:` comments. */
#include "check.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#define K(s) (const uint8_t *)(s), strlen(s)

/* A fresh queue name under its own prefix `<name>/`. */
static void queue_name(char *name, size_t len, char *prefix, size_t plen, const char *tag) {
    unique(name, len, tag);
    snprintf(prefix, plen, "%s/", name);
}

static etcdlock_queue *open_queue(etcdlock_client *c, const char *name, int64_t ttl, uint32_t max_attempts) {
    etcdlock_queue *q = NULL;
    CHECK_RC(etcdlock_queue_open(c, name, ttl, max_attempts, &q), ETCDLOCK_OK);
    return q;
}

static void put_id(etcdlock_queue *q, const char *id, int32_t priority) {
    char *got = NULL;
    CHECK_RC(etcdlock_queue_put(q, K(id), id, priority, 0, &got), ETCDLOCK_OK);
    CHECK(got && strcmp(got, id) == 0);
    etcdlock_string_free(got);
}

/* Claims (try once) and returns the task, or NULL with the status in *rc. */
static etcdlock_task *claim_now(etcdlock_queue *q, int *rc) {
    etcdlock_task *t = NULL;
    *rc = etcdlock_queue_claim(q, 0, NULL, NULL, 0, &t);
    return t;
}

static int payload_is(const etcdlock_task *t, const char *want) {
    size_t len = 0;
    const uint8_t *p = etcdlock_task_payload(t, &len);
    return p && len == strlen(want) && memcmp(p, want, len) == 0;
}

/* The value of `key` in etcd as a new string, or NULL when absent. */
static char *value_of(etcdlock_client *c, const char *key) {
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(c, K(key), &b), ETCDLOCK_OK);
    if (!b) return NULL;
    char *s = strndup((const char *)etcdlock_buf_data(b), etcdlock_buf_len(b));
    etcdlock_buf_free(b);
    return s;
}

static int value_equals(etcdlock_client *c, const char *key, const char *want) {
    char *v = value_of(c, key);
    int same = want ? v && strcmp(v, want) == 0 : v == NULL;
    free(v);
    return same;
}

/* The lease of the first key under `prefix`, as etcdctl shows it, or 0. */
static int64_t lease_under(const char *prefix) {
    char args[400];
    snprintf(args, sizeof args, "get --prefix -w fields '%s'", prefix);
    char *out = etcdctl(args);
    long long lease = 0;
    for (char *line = out ? strtok(out, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        if (sscanf(line, "\"Lease\" : %lld", &lease) == 1) break;
    }
    free(out);
    return lease;
}

static void revoke_lease(int64_t lease) {
    char args[64];
    snprintf(args, sizeof args, "lease revoke %" PRIx64, (uint64_t)lease);
    free(etcdctl(args));
}

/* covers: QUEUE-ORDER-001 */
static void test_priority_first_then_the_order_of_the_puts(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140];
    queue_name(name, sizeof name, prefix, sizeof prefix, "q-order");
    etcdlock_queue *q = open_queue(c, name, 10, 5);
    if (!q) return;
    const char *ids[] = {"a", "b", "c", "d", "e", "f"};
    const int32_t prios[] = {0, 5, 0, -1, 5, 0};
    for (int i = 0; i < 6; i++) put_id(q, ids[i], prios[i]);
    etcdlock_queue_counts *s = NULL;
    CHECK_RC(etcdlock_queue_stats(q, &s), ETCDLOCK_OK);
    if (s) {
        CHECK(s->pending == 6 && s->delayed == 0 && s->claimed == 0 && s->dead == 0 && s->revision > 0);
        /* by priority, the highest first: 5 x2, 0 x3, -1 x1 */
        CHECK(s->n_by_priority == 3);
        if (s->n_by_priority == 3) {
            CHECK(s->by_priority[0].priority == 5 && s->by_priority[0].count == 2);
            CHECK(s->by_priority[1].priority == 0 && s->by_priority[1].count == 3);
            CHECK(s->by_priority[2].priority == -1 && s->by_priority[2].count == 1);
        }
    }
    etcdlock_queue_counts_free(s);
    char order[16] = {0};
    int rc = ETCDLOCK_OK;
    for (int i = 0; i < 10; i++) {
        etcdlock_task *t = claim_now(q, &rc);
        if (!t) break;
        strcat(order, etcdlock_task_id(t));
        CHECK_RC(etcdlock_task_ack(t, NULL), ETCDLOCK_OK);
        etcdlock_task_free(t);
    }
    CHECK_RC(rc, ETCDLOCK_E_WOULD_BLOCK);
    CHECK(strcmp(order, "beacfd") == 0);
    if (strcmp(order, "beacfd") != 0) fprintf(stderr, "  claimed in the order %s\n", order);
    CHECK(count_keys(prefix) == 0);
    etcdlock_queue_free(q);
    etcdlock_client_free(c);
}

/* covers: QUEUE-PUT-ID-001 */
static void test_a_put_with_an_existing_id_changes_nothing(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140];
    queue_name(name, sizeof name, prefix, sizeof prefix, "q-idem");
    etcdlock_queue *q = open_queue(c, name, 10, 1);
    if (!q) return;
    char *id = NULL;
    CHECK_RC(etcdlock_queue_put(q, K("first"), "x", 0, 0, &id), ETCDLOCK_OK);
    CHECK(id && strcmp(id, "x") == 0);
    etcdlock_string_free(id);
    id = NULL;
    CHECK_RC(etcdlock_queue_put(q, K("second"), "x", 9, 0, &id), ETCDLOCK_OK);
    CHECK(id && strcmp(id, "x") == 0);
    etcdlock_string_free(id);
    etcdlock_queue_counts *s = NULL;
    CHECK_RC(etcdlock_queue_stats(q, &s), ETCDLOCK_OK);
    CHECK(s && s->pending == 1);
    etcdlock_queue_counts_free(s);
    int rc;
    etcdlock_task *t = claim_now(q, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    if (!t) return;
    CHECK(payload_is(t, "first"));
    CHECK_RC(etcdlock_queue_put(q, K("third"), "x", 0, 0, NULL), ETCDLOCK_OK); /* claimed: no change */
    CHECK_RC(etcdlock_task_nack(t, 0), ETCDLOCK_OK);                           /* its last attempt: dead */
    etcdlock_task_free(t);
    CHECK_RC(etcdlock_queue_put(q, K("fourth"), "x", 0, 0, NULL), ETCDLOCK_OK); /* dead: no change */
    s = NULL;
    CHECK_RC(etcdlock_queue_stats(q, &s), ETCDLOCK_OK);
    CHECK(s && s->pending == 0 && s->claimed == 0 && s->dead == 1);
    etcdlock_queue_counts_free(s);
    bool found = false;
    CHECK_RC(etcdlock_queue_delete_dead(q, "x", &found), ETCDLOCK_OK);
    CHECK(found);
    CHECK_RC(etcdlock_queue_put(q, K("new"), "x", 0, 0, NULL), ETCDLOCK_OK); /* gone: a new item */
    t = claim_now(q, &rc);
    CHECK(t && payload_is(t, "new"));
    CHECK_RC(etcdlock_task_ack(t, NULL), ETCDLOCK_OK);
    etcdlock_task_free(t);
    /* Without an id, each put is an item of its own, with a random id. */
    char *a = NULL, *b = NULL;
    CHECK_RC(etcdlock_queue_put(q, K("p"), NULL, 0, 0, &a), ETCDLOCK_OK);
    CHECK_RC(etcdlock_queue_put(q, K("p"), NULL, 0, 0, &b), ETCDLOCK_OK);
    CHECK(a && b && strlen(a) == 32 && strcmp(a, b) != 0);
    etcdlock_string_free(a);
    etcdlock_string_free(b);
    ctl("del --prefix '%s'", prefix);
    etcdlock_queue_free(q);
    etcdlock_client_free(c);
}

struct lost_seen {
    atomic_int calls;
    atomic_int reason;
};

static void on_lost(void *user, int reason) {
    struct lost_seen *l = user;
    atomic_store(&l->reason, reason);
    atomic_fetch_add(&l->calls, 1);
}

/* An etcdlock_op for a NUL-terminated key (and value). */
static etcdlock_op op(int kind, const char *key, const char *value) {
    etcdlock_op o = {kind, (const uint8_t *)key, strlen(key), (const uint8_t *)value, value ? strlen(value) : 0};
    return o;
}

/* covers: QUEUE-ACK-001 */
static void test_ack_and_fenced_writes_with_a_lost_claim(void) {
    etcdlock_client *c = connect_client(); /* own client: its claim lease gets revoked */
    char name[128], prefix[140], result[160], claims[160], inside[160];
    queue_name(name, sizeof name, prefix, sizeof prefix, "q-ack");
    snprintf(result, sizeof result, "%s-results/1", name);
    snprintf(claims, sizeof claims, "%s/claim/", name);
    snprintf(inside, sizeof inside, "%s/items/x", name);
    etcdlock_queue *q = open_queue(c, name, 10, 5);
    if (!q) return;
    put_id(q, "1", 0);
    int rc;
    etcdlock_task *t = claim_now(q, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    if (!t) return;
    CHECK(strcmp(etcdlock_task_id(t), "1") == 0 && payload_is(t, "1"));
    CHECK(etcdlock_task_attempts(t) == 1 && etcdlock_task_priority(t) == 0);
    CHECK(etcdlock_task_fencing_token(t) > 0 && etcdlock_task_is_held(t));
    CHECK(etcdlock_task_lost_reason(t) == 0);
    struct lost_seen lost = {0};
    CHECK_RC(etcdlock_task_on_lost(t, on_lost, &lost), ETCDLOCK_OK);
    /* The claim is lost (its lease revoked, as when a worker's lease ends): its fenced write
     * and its ack fail, nothing is written, and the item is claimable again. */
    int64_t lease = lease_under(claims);
    CHECK(lease > 0);
    revoke_lease(lease);
    for (int i = 0; i < 1000 && atomic_load(&lost.calls) == 0; i++) sleep_ms(10);
    CHECK(atomic_load(&lost.calls) == 1);
    CHECK(!etcdlock_task_is_held(t) && etcdlock_task_lost_reason(t) != 0);
    CHECK_RC(etcdlock_task_put(t, K(result), K("late")), ETCDLOCK_E_NOT_HELD);
    etcdlock_op late = op(ETCDLOCK_OP_PUT, result, "late");
    CHECK_RC(etcdlock_task_ack_with(t, &late, 1, NULL), ETCDLOCK_E_NOT_HELD);
    CHECK(value_equals(c, result, NULL));
    etcdlock_task *t2 = NULL;
    CHECK_RC(etcdlock_queue_claim(q, 5000, NULL, K("worker-2"), &t2), ETCDLOCK_OK);
    if (!t2) return;
    CHECK(strcmp(etcdlock_task_id(t2), "1") == 0 && etcdlock_task_attempts(t2) == 2);
    CHECK(etcdlock_task_fencing_token(t2) > etcdlock_task_fencing_token(t));
    etcdlock_task_free(t); /* lost: gives nothing back */
    CHECK_RC(etcdlock_task_put(t2, K(result), K("first")), ETCDLOCK_OK);
    /* A task's writes stay out of the queue's own keys; bad ops change nothing. */
    CHECK_RC(etcdlock_task_put(t2, K(inside), K("v")), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_task_delete(t2, K(inside)), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_op bad[2] = {op(ETCDLOCK_OP_PUT, result, "x"), op(ETCDLOCK_OP_PUT, inside, "v")};
    CHECK_RC(etcdlock_task_ack_with(t2, bad, 2, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    bad[1].kind = 7;
    CHECK_RC(etcdlock_task_ack_with(t2, bad, 2, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_task_ack_with(t2, NULL, 1, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(etcdlock_task_is_held(t2) && value_equals(c, result, "first"));
    /* The result and the ack in one transaction. */
    etcdlock_op with = op(ETCDLOCK_OP_PUT, result, "ok");
    int64_t rev = 0;
    CHECK_RC(etcdlock_task_ack_with(t2, &with, 1, &rev), ETCDLOCK_OK);
    CHECK(rev > etcdlock_task_fencing_token(t2));
    CHECK(!etcdlock_task_is_held(t2));
    CHECK_RC(etcdlock_task_ack(t2, NULL), ETCDLOCK_E_NOT_HELD); /* a second ack */
    CHECK_RC(etcdlock_task_nack(t2, 0), ETCDLOCK_E_NOT_HELD);
    CHECK_RC(etcdlock_task_put(t2, K(result), K("after")), ETCDLOCK_E_NOT_HELD);
    CHECK_RC(etcdlock_task_on_lost(t2, on_lost, &lost), ETCDLOCK_E_NOT_HELD);
    CHECK(value_equals(c, result, "ok"));
    etcdlock_task_free(t2);
    /* A fenced delete while held. */
    put_id(q, "2", 0);
    etcdlock_task *t3 = claim_now(q, &rc);
    CHECK(t3 != NULL);
    etcdlock_op del = op(ETCDLOCK_OP_DELETE, result, NULL);
    CHECK_RC(etcdlock_task_ack_with(t3, &del, 1, NULL), ETCDLOCK_OK);
    CHECK(value_equals(c, result, NULL));
    etcdlock_task_free(t3);
    CHECK(count_keys(prefix) == 0);
    etcdlock_queue_free(q);
    etcdlock_client_free(c);
}

/* covers: QUEUE-DELAY-001 */
static void test_a_delayed_item_waits_for_its_delay(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140];
    queue_name(name, sizeof name, prefix, sizeof prefix, "q-delay");
    etcdlock_queue *q = open_queue(c, name, 10, 5);
    if (!q) return;
    double start = now_ms();
    CHECK_RC(etcdlock_queue_put(q, K("later"), "later", 0, 2000, NULL), ETCDLOCK_OK);
    put_id(q, "now", 0);
    etcdlock_queue_counts *s = NULL;
    CHECK_RC(etcdlock_queue_stats(q, &s), ETCDLOCK_OK);
    CHECK(s && s->pending == 1 && s->delayed == 1);
    etcdlock_queue_counts_free(s);
    int rc;
    etcdlock_task *t = claim_now(q, &rc);
    CHECK(t && strcmp(etcdlock_task_id(t), "now") == 0);
    if (!t) return;
    CHECK_RC(etcdlock_task_nack(t, 2500), ETCDLOCK_OK); /* 3 s */
    double nacked = now_ms();
    CHECK(!etcdlock_task_is_held(t));
    etcdlock_task_free(t);
    CHECK(claim_now(q, &rc) == NULL);
    CHECK_RC(rc, ETCDLOCK_E_WOULD_BLOCK);
    etcdlock_task *first = NULL;
    CHECK_RC(etcdlock_queue_claim(q, 10000, NULL, NULL, 0, &first), ETCDLOCK_OK);
    CHECK(first && strcmp(etcdlock_task_id(first), "later") == 0);
    CHECK(now_ms() - start >= 2000);
    CHECK_RC(etcdlock_task_ack(first, NULL), ETCDLOCK_OK);
    etcdlock_task_free(first);
    etcdlock_task *second = NULL;
    CHECK_RC(etcdlock_queue_claim(q, 10000, NULL, NULL, 0, &second), ETCDLOCK_OK);
    CHECK(second && strcmp(etcdlock_task_id(second), "now") == 0 && etcdlock_task_attempts(second) == 2);
    CHECK(now_ms() - nacked >= 3000);
    if (now_ms() - nacked < 3000) fprintf(stderr, "  claimed %.0f ms after a nack of 3 s\n", now_ms() - nacked);
    CHECK_RC(etcdlock_task_ack(second, NULL), ETCDLOCK_OK);
    etcdlock_task_free(second);
    CHECK(count_keys(prefix) == 0);
    etcdlock_queue_free(q);
    etcdlock_client_free(c);
}

/* covers: QUEUE-DEAD-001 */
static void test_dead_letters_after_the_last_attempt(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140];
    queue_name(name, sizeof name, prefix, sizeof prefix, "q-dead");
    etcdlock_queue *q = open_queue(c, name, 10, 2);
    if (!q) return;
    put_id(q, "p", 3);
    int rc;
    for (int i = 1; i <= 2; i++) {
        etcdlock_task *t = claim_now(q, &rc);
        CHECK(t && etcdlock_task_attempts(t) == (uint32_t)i);
        CHECK_RC(etcdlock_task_nack(t, 0), ETCDLOCK_OK);
        etcdlock_task_free(t);
    }
    CHECK(claim_now(q, &rc) == NULL);
    CHECK_RC(rc, ETCDLOCK_E_WOULD_BLOCK);
    etcdlock_dead_task_list *dead = NULL;
    CHECK_RC(etcdlock_queue_dead(q, &dead), ETCDLOCK_OK);
    CHECK(dead && dead->n_tasks == 1);
    if (dead && dead->n_tasks == 1) {
        const etcdlock_dead_task *d = &dead->tasks[0];
        CHECK(strcmp(d->id, "p") == 0 && d->payload_len == 1 && d->payload[0] == 'p');
        CHECK(d->attempts == 2 && d->priority == 3);
    }
    etcdlock_dead_task_list_free(dead);
    /* Claims freed without an ack or a nack give the item back, and count. */
    put_id(q, "k", 0);
    for (int i = 0; i < 2; i++) {
        etcdlock_task *t = claim_now(q, &rc);
        CHECK(t != NULL);
        etcdlock_task_free(t);
    }
    CHECK(claim_now(q, &rc) == NULL);
    CHECK_RC(rc, ETCDLOCK_E_WOULD_BLOCK);
    etcdlock_queue_counts *s = NULL;
    CHECK_RC(etcdlock_queue_stats(q, &s), ETCDLOCK_OK);
    CHECK(s && s->dead == 2 && s->pending == 0);
    etcdlock_queue_counts_free(s);
    bool found = false;
    CHECK_RC(etcdlock_queue_requeue_dead(q, "p", &found), ETCDLOCK_OK);
    CHECK(found);
    CHECK_RC(etcdlock_queue_requeue_dead(q, "p", &found), ETCDLOCK_OK);
    CHECK(!found); /* requeued twice */
    etcdlock_task *back = claim_now(q, &rc);
    CHECK(back && strcmp(etcdlock_task_id(back), "p") == 0);
    CHECK(back && etcdlock_task_attempts(back) == 1 && etcdlock_task_priority(back) == 3);
    CHECK_RC(etcdlock_task_ack(back, NULL), ETCDLOCK_OK);
    etcdlock_task_free(back);
    CHECK_RC(etcdlock_queue_delete_dead(q, "k", &found), ETCDLOCK_OK);
    CHECK(found);
    CHECK_RC(etcdlock_queue_delete_dead(q, "k", NULL), ETCDLOCK_OK);
    dead = NULL;
    CHECK_RC(etcdlock_queue_dead(q, &dead), ETCDLOCK_OK);
    CHECK(dead && dead->n_tasks == 0);
    etcdlock_dead_task_list_free(dead);
    CHECK(count_keys(prefix) == 0);
    etcdlock_queue_free(q);
    etcdlock_client_free(c);
}

static void never_called_task(void *user, int status, etcdlock_task *task) {
    (void)status;
    (void)task;
    atomic_fetch_add((atomic_int *)user, 1);
}

/* covers: QUEUE-INPUT-001 */
/* covers: ERR-NULL-001 (the queue, task and once functions: NULL handles, outputs and
 * callbacks refused with outputs untouched, getters neutral, _free(NULL) no-ops) */
static void test_bad_input_is_refused_with_nothing_written(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140], slash[140];
    queue_name(name, sizeof name, prefix, sizeof prefix, "q-input");
    snprintf(slash, sizeof slash, "%s/", name);
    etcdlock_queue *const SENTINEL_Q = (etcdlock_queue *)0x1;
    etcdlock_queue *q = SENTINEL_Q;
    CHECK_RC(etcdlock_queue_open(c, "", 10, 5, &q), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_open(c, slash, 10, 5, &q), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_open(c, name, 0, 5, &q), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_open(c, name, -1, 5, &q), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_open(c, name, 10, 0, &q), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_open(NULL, name, 10, 5, &q), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_open(c, NULL, 10, 5, &q), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_open(c, name, 10, 5, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(q == SENTINEL_Q);
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "out") != NULL);
    q = open_queue(c, name, 10, 5);
    if (!q) return;

    /* put */
    char *const SENTINEL_S = (char *)0x1;
    char *id = SENTINEL_S;
    size_t big_len = ETCDLOCK_MAX_TASK_PAYLOAD_LEN + 1;
    uint8_t *big = calloc(big_len, 1);
    char long_id[ETCDLOCK_MAX_TASK_ID_LEN + 2];
    memset(long_id, 'i', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = 0;
    CHECK_RC(etcdlock_queue_put(q, big, big_len, NULL, 0, 0, &id), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_put(q, K("x"), "", 0, 0, &id), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_put(q, K("x"), "a\nb", 0, 0, &id), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_put(q, K("x"), long_id, 0, 0, &id), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_put(q, K("x"), "\xff\xfe", 0, 0, &id), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_put(q, K("x"), NULL, 0, -1, &id), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_put(q, K("x"), NULL, 0, INT64_MAX, &id), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_put(q, NULL, 3, NULL, 0, 0, &id), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_put(NULL, K("x"), NULL, 0, 0, &id), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(id == SENTINEL_S);

    /* claim, blocking and async */
    etcdlock_task *const SENTINEL_T = (etcdlock_task *)0x1;
    etcdlock_task *t = SENTINEL_T;
    size_t wlen = 4097;
    uint8_t *w = calloc(wlen, 1);
    atomic_int calls = 0;
    CHECK_RC(etcdlock_queue_claim(q, 0, NULL, w, wlen, &t), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_claim(q, -2, NULL, NULL, 0, &t), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_claim(q, 0, NULL, NULL, 5, &t), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_claim(NULL, 0, NULL, NULL, 0, &t), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_claim(q, 0, NULL, NULL, 0, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(t == SENTINEL_T);
    CHECK_RC(etcdlock_queue_claim_async(q, 0, NULL, w, wlen, never_called_task, &calls), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_claim_async(q, -2, NULL, NULL, 0, never_called_task, &calls), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_claim_async(NULL, 0, NULL, NULL, 0, never_called_task, &calls), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_claim_async(q, 0, NULL, NULL, 0, NULL, &calls), ETCDLOCK_E_INVALID_ARGUMENT);

    /* stats, dead letters */
    etcdlock_queue_counts *const SENTINEL_ST = (etcdlock_queue_counts *)0x1;
    etcdlock_queue_counts *st = SENTINEL_ST;
    CHECK_RC(etcdlock_queue_stats(NULL, &st), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_stats(q, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(st == SENTINEL_ST);
    etcdlock_dead_task_list *const SENTINEL_D = (etcdlock_dead_task_list *)0x1;
    etcdlock_dead_task_list *dl = SENTINEL_D;
    CHECK_RC(etcdlock_queue_dead(NULL, &dl), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_dead(q, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(dl == SENTINEL_D);
    bool found = true;
    CHECK_RC(etcdlock_queue_requeue_dead(q, "", &found), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_requeue_dead(q, NULL, &found), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_requeue_dead(NULL, "x", &found), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_delete_dead(q, "", &found), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_delete_dead(q, NULL, &found), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_queue_delete_dead(NULL, "x", &found), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(found);

    /* the task functions on NULL */
    size_t len = 7;
    CHECK(etcdlock_task_id(NULL) == NULL);
    CHECK(etcdlock_task_payload(NULL, &len) == NULL && len == 7);
    CHECK(etcdlock_task_payload(NULL, NULL) == NULL);
    CHECK(etcdlock_task_priority(NULL) == 0 && etcdlock_task_attempts(NULL) == 0);
    CHECK(etcdlock_task_fencing_token(NULL) == 0 && !etcdlock_task_is_held(NULL));
    CHECK(etcdlock_task_lost_reason(NULL) == 0);
    CHECK_RC(etcdlock_task_on_lost(NULL, on_lost, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_task_put(NULL, K("k"), K("v")), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_task_delete(NULL, K("k")), ETCDLOCK_E_INVALID_ARGUMENT);
    int64_t rev = 42;
    CHECK_RC(etcdlock_task_ack(NULL, &rev), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(rev == 42);
    CHECK_RC(etcdlock_task_nack(NULL, 0), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_task_free(NULL);
    etcdlock_queue_free(NULL);
    etcdlock_queue_counts_free(NULL);
    etcdlock_dead_task_list_free(NULL);
    CHECK(count_keys(name) == 0); /* nothing written by any of the above */

    /* A held task's bad arguments. */
    put_id(q, "held", 0);
    int rc;
    t = claim_now(q, &rc);
    CHECK(t != NULL);
    if (t) {
        CHECK_RC(etcdlock_task_on_lost(t, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
        CHECK_RC(etcdlock_task_put(t, NULL, 0, K("v")), ETCDLOCK_E_INVALID_ARGUMENT); /* empty key */
        CHECK_RC(etcdlock_task_put(t, K("k"), NULL, 2), ETCDLOCK_E_INVALID_ARGUMENT);
        CHECK_RC(etcdlock_task_delete(t, NULL, 1), ETCDLOCK_E_INVALID_ARGUMENT);
        CHECK_RC(etcdlock_task_nack(t, -1), ETCDLOCK_E_INVALID_ARGUMENT);
        CHECK(etcdlock_task_is_held(t)); /* none of it ended the claim */
        CHECK_RC(etcdlock_task_ack(t, NULL), ETCDLOCK_OK);
        etcdlock_task_free(t);
    }
    /* The largest payload goes through. */
    big_len = ETCDLOCK_MAX_TASK_PAYLOAD_LEN;
    memset(big, 7, big_len);
    CHECK_RC(etcdlock_queue_put(q, big, big_len, NULL, 0, 0, NULL), ETCDLOCK_OK);
    t = claim_now(q, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    if (t) {
        size_t got = 0;
        const uint8_t *p = etcdlock_task_payload(t, &got);
        CHECK(got == big_len && p && memcmp(p, big, big_len) == 0);
        CHECK_RC(etcdlock_task_ack(t, NULL), ETCDLOCK_OK);
        etcdlock_task_free(t);
    }
    free(big);
    free(w);
    CHECK(count_keys(prefix) == 0);
    /* After the client is freed: CLOSED, and a new queue on it cannot be opened. */
    etcdlock_client_free(c);
    CHECK_RC(etcdlock_queue_put(q, K("x"), NULL, 0, 0, NULL), ETCDLOCK_E_CLOSED);
    t = SENTINEL_T;
    CHECK_RC(etcdlock_queue_claim(q, 0, NULL, NULL, 0, &t), ETCDLOCK_E_CLOSED);
    CHECK(t == SENTINEL_T);
    etcdlock_queue_free(q);
    sleep_ms(100);
    CHECK(atomic_load(&calls) == 0); /* refused async claims never call back */
}

struct claimed {
    atomic_int calls;
    atomic_int status;
    etcdlock_task *_Atomic task;
    int blocking_rc;
};

static void on_claimed(void *user, int status, etcdlock_task *task) {
    struct claimed *o = user;
    /* Inside the callback blocking calls refuse; the accessors work. */
    o->blocking_rc = task ? etcdlock_task_ack(task, NULL) : -1;
    atomic_store(&o->task, task);
    atomic_store(&o->status, status);
    atomic_fetch_add(&o->calls, 1);
}

/* Waits up to 10 s for the callback, then 100 ms more for a wrong second call. */
static int claimed_once(struct claimed *o) {
    double end = now_ms() + 10000;
    while (atomic_load(&o->calls) == 0 && now_ms() < end) sleep_ms(5);
    sleep_ms(100);
    return atomic_load(&o->calls) == 1;
}

/* covers: QUEUE-CANCEL-001 (etcdlock_cancel tokens: on a waiting async claim, on one queued
 * behind it, on a lone blocking claim, and triggered before the claim starts) */
static void test_async_claims_and_cancel(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140], workers[160];
    queue_name(name, sizeof name, prefix, sizeof prefix, "q-async");
    snprintf(workers, sizeof workers, "%s/workers/", name);
    etcdlock_queue *q = open_queue(c, name, 10, 5);
    if (!q) return;
    /* An async claim of an item that is there. */
    put_id(q, "one", 0);
    struct claimed a = {0};
    CHECK_RC(etcdlock_queue_claim_async(q, 5000, NULL, K("w-a"), on_claimed, &a), ETCDLOCK_OK);
    CHECK(claimed_once(&a));
    CHECK_RC(atomic_load(&a.status), ETCDLOCK_OK);
    etcdlock_task *t = atomic_load(&a.task);
    CHECK(t && strcmp(etcdlock_task_id(t), "one") == 0);
    CHECK_RC(a.blocking_rc, ETCDLOCK_E_WRONG_THREAD);
    if (t) {
        CHECK(etcdlock_task_is_held(t));
        CHECK_RC(etcdlock_task_ack(t, NULL), ETCDLOCK_OK);
        etcdlock_task_free(t);
    }
    /* A waiting claim and one queued behind it for its turn; the first is cancelled, then an
     * item is put: the second gets it. */
    etcdlock_cancel *first_cancel = etcdlock_cancel_new();
    struct claimed first = {0}, second = {0};
    CHECK_RC(etcdlock_queue_claim_async(q, 20000, first_cancel, NULL, 0, on_claimed, &first), ETCDLOCK_OK);
    CHECK(wait_keys(workers, 1) == 1);
    CHECK_RC(etcdlock_queue_claim_async(q, 20000, NULL, NULL, 0, on_claimed, &second), ETCDLOCK_OK);
    CHECK(wait_keys(workers, 2) == 2);
    etcdlock_cancel_trigger(first_cancel);
    CHECK(claimed_once(&first));
    CHECK_RC(atomic_load(&first.status), ETCDLOCK_E_CANCELLED);
    CHECK(atomic_load(&first.task) == NULL);
    CHECK(wait_keys(workers, 1) == 1); /* the cancelled one's turn key is gone */
    put_id(q, "two", 0);
    CHECK(claimed_once(&second));
    CHECK_RC(atomic_load(&second.status), ETCDLOCK_OK);
    t = atomic_load(&second.task);
    CHECK(t && strcmp(etcdlock_task_id(t), "two") == 0);
    if (t) {
        CHECK_RC(etcdlock_task_ack(t, NULL), ETCDLOCK_OK);
        etcdlock_task_free(t);
    }
    etcdlock_cancel_free(first_cancel);
    /* A lone blocking claim cancelled from another thread's token, and one whose token fired
     * before it began. */
    etcdlock_cancel *lone = etcdlock_cancel_new();
    struct claimed late = {0};
    CHECK_RC(etcdlock_queue_claim_async(q, ETCDLOCK_WAIT_FOREVER, lone, NULL, 0, on_claimed, &late), ETCDLOCK_OK);
    CHECK(wait_keys(workers, 1) == 1);
    etcdlock_cancel_trigger(lone);
    CHECK(claimed_once(&late));
    CHECK_RC(atomic_load(&late.status), ETCDLOCK_E_CANCELLED);
    etcdlock_task *none = NULL;
    double began = now_ms();
    CHECK_RC(etcdlock_queue_claim(q, 10000, lone, NULL, 0, &none), ETCDLOCK_E_CANCELLED);
    CHECK(none == NULL && now_ms() - began < 2000);
    etcdlock_cancel_free(lone);
    /* A timeout with nothing there. */
    began = now_ms();
    CHECK_RC(etcdlock_queue_claim(q, 300, NULL, NULL, 0, &none), ETCDLOCK_E_LOCK_TIMEOUT);
    CHECK(now_ms() - began >= 290 && now_ms() - began < 3000);
    CHECK(count_keys(prefix) == 0);
    /* A client freed under a waiting async claim: CLOSED, before the free returns. */
    struct claimed closed = {0};
    CHECK_RC(etcdlock_queue_claim_async(q, ETCDLOCK_WAIT_FOREVER, NULL, NULL, 0, on_claimed, &closed), ETCDLOCK_OK);
    CHECK(wait_keys(workers, 1) == 1);
    etcdlock_client_free(c);
    CHECK(atomic_load(&closed.calls) == 1);
    CHECK_RC(atomic_load(&closed.status), ETCDLOCK_E_CLOSED);
    etcdlock_queue_free(q);
    CHECK(wait_keys(prefix, 0) == 0);
}

/* ---- workers in a process of their own ----------------------------------------------------- */

/* The worker: claims one task of queue `name` (TTL `ttl`), prints "claimed <id> <attempts>",
 * waits for a line on stdin, then writes `<name>-result` = "first" fenced and acks, printing
 * "acked" or "not held". */
static int worker_main(const char *name, int ttl) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    etcdlock_client *c = NULL;
    etcdlock_queue *q = NULL;
    etcdlock_task *t = NULL;
    if (etcdlock_client_new(endpoints(), NULL, &c) != ETCDLOCK_OK || etcdlock_queue_open(c, name, ttl, 5, &q) != ETCDLOCK_OK
        || etcdlock_queue_claim(q, 10000, NULL, K("child"), &t) != ETCDLOCK_OK) {
        printf("failed\n");
        return 1;
    }
    printf("claimed %s %u\n", etcdlock_task_id(t), etcdlock_task_attempts(t));
    char line[64];
    if (!fgets(line, sizeof line, stdin)) return 1;
    char result[200];
    snprintf(result, sizeof result, "%s-result", name);
    int rc = etcdlock_task_put(t, K(result), K("first"));
    if (rc == ETCDLOCK_OK) rc = etcdlock_task_ack(t, NULL);
    printf("%s\n", rc == ETCDLOCK_OK ? "acked" : rc == ETCDLOCK_E_NOT_HELD ? "not held" : etcdlock_status_str(rc));
    etcdlock_task_free(t);
    etcdlock_queue_free(q);
    etcdlock_client_free(c);
    etcdlock_shutdown(5000);
    return 0;
}

/* This program's path, for the worker child (argv[0]: the suite runs it by its path). */
static const char *g_self = "/proc/self/exe";

struct child {
    pid_t pid;
    int to;   /* its stdin */
    int from; /* its stdout */
};

/* Reads one line from `fd` within `ms` (bounded); returns its length, or -1. */
static int read_line(int fd, char *buf, size_t len, int ms) {
    size_t n = 0;
    double end = now_ms() + ms;
    while (n + 1 < len) {
        struct pollfd p = {fd, POLLIN, 0};
        int left = (int)(end - now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0) return -1;
        ssize_t got = read(fd, buf + n, 1);
        if (got <= 0) return -1;
        if (buf[n] == '\n') break;
        n++;
    }
    buf[n] = 0;
    return (int)n;
}

/* Starts this program as a worker of queue `name` and waits (up to 15 s) for its claim. */
static int start_worker(struct child *ch, const char *name, int ttl, char *line, size_t len) {
    int in[2], out[2];
    if (pipe(in) || pipe(out)) return 0;
    char ttl_s[16];
    snprintf(ttl_s, sizeof ttl_s, "%d", ttl);
    ch->pid = fork();
    if (ch->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(g_self, g_self, "worker", name, ttl_s, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    ch->to = in[1];
    ch->from = out[0];
    return read_line(ch->from, line, len, 15000) > 0 && strncmp(line, "claimed ", 8) == 0;
}

/* Waits (up to 10 s) for the child's exit; kills it after that. */
static void reap(struct child *ch) {
    int status;
    for (int i = 0; i < 500 && waitpid(ch->pid, &status, WNOHANG) == 0; i++) sleep_ms(20);
    if (waitpid(ch->pid, &status, WNOHANG) == 0) {
        kill(ch->pid, SIGKILL);
        waitpid(ch->pid, &status, 0);
    }
    close(ch->to);
    close(ch->from);
}

/* covers: QUEUE-KILL-001 */
static void test_a_worker_killed_mid_task_loses_it_to_another_within_ttl(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140], line[128];
    queue_name(name, sizeof name, prefix, sizeof prefix, "q-kill");
    etcdlock_queue *q = open_queue(c, name, 2, 5);
    if (!q) return;
    put_id(q, "job", 0);
    struct child ch;
    int started = start_worker(&ch, name, 2, line, sizeof line);
    CHECK(started);
    if (started) CHECK(strcmp(line, "claimed job 1") == 0);
    kill(ch.pid, SIGKILL);
    int status;
    waitpid(ch.pid, &status, 0);
    double killed = now_ms();
    etcdlock_task *t = NULL;
    CHECK_RC(etcdlock_queue_claim(q, 10000, NULL, NULL, 0, &t), ETCDLOCK_OK);
    double took = now_ms() - killed;
    CHECK(t && strcmp(etcdlock_task_id(t), "job") == 0 && etcdlock_task_attempts(t) == 2);
    CHECK(took < 2000 + 1500);
    if (took >= 3500) fprintf(stderr, "  claimed again %.0f ms after the kill\n", took);
    CHECK_RC(etcdlock_task_ack(t, NULL), ETCDLOCK_OK);
    etcdlock_task_free(t);
    close(ch.to);
    close(ch.from);
    CHECK(count_keys(prefix) == 0);
    etcdlock_queue_free(q);
    etcdlock_client_free(c);
}

/* covers: QUEUE-STOP-001 */
static void test_a_worker_frozen_past_its_ttl_cannot_ack(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140], line[128], result[160];
    queue_name(name, sizeof name, prefix, sizeof prefix, "q-stop");
    snprintf(result, sizeof result, "%s-result", name);
    etcdlock_queue *q = open_queue(c, name, 2, 5);
    if (!q) return;
    put_id(q, "job", 0);
    struct child ch;
    int started = start_worker(&ch, name, 2, line, sizeof line);
    CHECK(started);
    kill(ch.pid, SIGSTOP);
    etcdlock_task *t = NULL;
    CHECK_RC(etcdlock_queue_claim(q, 10000, NULL, NULL, 0, &t), ETCDLOCK_OK);
    CHECK(t && etcdlock_task_attempts(t) == 2);
    CHECK_RC(etcdlock_task_put(t, K(result), K("second")), ETCDLOCK_OK);
    CHECK_RC(etcdlock_task_ack(t, NULL), ETCDLOCK_OK);
    etcdlock_task_free(t);
    kill(ch.pid, SIGCONT);
    CHECK(write(ch.to, "go\n", 3) == 3);
    CHECK(read_line(ch.from, line, sizeof line, 20000) > 0);
    CHECK(strcmp(line, "not held") == 0);
    if (strcmp(line, "not held") != 0) fprintf(stderr, "  the resumed worker said: %s\n", line);
    reap(&ch);
    CHECK(value_equals(c, result, "second"));
    ctl("del '%s'", result);
    CHECK(count_keys(prefix) == 0);
    etcdlock_queue_free(q);
    etcdlock_client_free(c);
}

/* ---- once per period ------------------------------------------------------------------------ */

#define HOUR_MS 3600000LL
#define T0_MS (HOUR_MS * 500000LL)

struct trigger {
    etcdlock_client *client;
    const char *name;
    int64_t at;
    pthread_barrier_t *barrier;
    int rc;
    etcdlock_once_slot *slot;
};

static void *trigger(void *arg) {
    struct trigger *tr = arg;
    pthread_barrier_wait(tr->barrier);
    tr->rc = etcdlock_once(tr->client, tr->name, HOUR_MS, 10, tr->at, 3, &tr->slot);
    return NULL;
}

/* covers: ONCE-SLOT-001 */
static void test_once_runs_one_trigger_per_period(void) {
    char name[128];
    unique(name, sizeof name, "daily");
    etcdlock_client *clients[3] = {connect_client(), connect_client(), connect_client()};
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 3);
    /* Clocks up to 29 minutes apart pick the same slot, the nearest boundary. */
    const int64_t offsets[3] = {-29 * 60000LL, 0, 29 * 60000LL};
    struct trigger tr[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        tr[i] = (struct trigger){clients[i], name, T0_MS + offsets[i], &barrier, -1, (etcdlock_once_slot *)0x1};
        pthread_create(&th[i], NULL, trigger, &tr[i]);
    }
    int winners = 0;
    etcdlock_once_slot *won = NULL;
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        CHECK_RC(tr[i].rc, ETCDLOCK_OK);
        if (tr[i].rc == ETCDLOCK_OK && tr[i].slot) {
            winners++;
            won = tr[i].slot;
        }
    }
    pthread_barrier_destroy(&barrier);
    CHECK(winners == 1);
    if (won) {
        CHECK(etcdlock_once_index(won) == 500000);
        CHECK(etcdlock_once_fencing_token(won) > 0 && etcdlock_once_is_held(won));
        CHECK(etcdlock_once_lost_reason(won) == 0);
        CHECK_RC(etcdlock_once_done(won), ETCDLOCK_OK);
        CHECK(!etcdlock_once_is_held(won));
        CHECK_RC(etcdlock_once_done(won), ETCDLOCK_E_NOT_HELD);
        CHECK_RC(etcdlock_once_release(won), ETCDLOCK_E_NOT_HELD);
        etcdlock_once_free(won);
    }
    etcdlock_once_slot *s = (etcdlock_once_slot *)0x1;
    CHECK_RC(etcdlock_once(clients[0], name, HOUR_MS, 10, T0_MS + 60000, 3, &s), ETCDLOCK_OK);
    CHECK(s == NULL); /* done for this period */
    s = NULL;
    CHECK_RC(etcdlock_once(clients[1], name, HOUR_MS, 10, T0_MS + HOUR_MS, 3, &s), ETCDLOCK_OK);
    CHECK(s && etcdlock_once_index(s) == 500001); /* the next period runs */
    CHECK_RC(etcdlock_once_done(s), ETCDLOCK_OK);
    etcdlock_once_free(s);
    for (int i = 0; i < 3; i++) etcdlock_client_free(clients[i]);
}

/* covers: ONCE-RETRY-001 */
static void test_a_failed_or_lost_once_job_runs_at_the_next_trigger(void) {
    etcdlock_client *c = connect_client();
    char name[128], slots[160];
    unique(name, sizeof name, "job");
    snprintf(slots, sizeof slots, "%s/slot/", name);
    /* One trigger time for all: "now" could cross the half hour that moves the nearest slot. */
    const int64_t at = (int64_t)time(NULL) * 1000;
    etcdlock_once_slot *first = NULL, *none = (etcdlock_once_slot *)0x1, *second = NULL, *third = NULL;
    CHECK_RC(etcdlock_once(c, name, HOUR_MS, 2, at, 3, &first), ETCDLOCK_OK);
    CHECK(first != NULL);
    CHECK_RC(etcdlock_once(c, name, HOUR_MS, 2, at, 3, &none), ETCDLOCK_OK);
    CHECK(none == NULL); /* claimed: not twice */
    CHECK_RC(etcdlock_once_release(first), ETCDLOCK_OK); /* the job failed */
    etcdlock_once_free(first);
    CHECK_RC(etcdlock_once(c, name, HOUR_MS, 2, at, 3, &second), ETCDLOCK_OK);
    CHECK(second != NULL); /* a failed job runs again */
    if (!second) return;
    struct lost_seen lost = {0};
    CHECK_RC(etcdlock_once_on_lost(second, on_lost, &lost), ETCDLOCK_OK);
    /* The winner "dies": its claim goes with its lease. */
    int64_t lease = lease_under(slots);
    CHECK(lease > 0);
    revoke_lease(lease);
    for (int i = 0; i < 1000 && atomic_load(&lost.calls) == 0; i++) sleep_ms(10);
    CHECK(atomic_load(&lost.calls) == 1 && etcdlock_once_lost_reason(second) != 0);
    CHECK_RC(etcdlock_once(c, name, HOUR_MS, 2, at, 3, &third), ETCDLOCK_OK);
    CHECK(third != NULL); /* a lost winner's job runs again */
    CHECK_RC(etcdlock_once_done(second), ETCDLOCK_E_NOT_HELD); /* and marks nothing */
    etcdlock_once_free(second);
    CHECK_RC(etcdlock_once_done(third), ETCDLOCK_OK);
    CHECK_RC(etcdlock_once_on_lost(third, on_lost, &lost), ETCDLOCK_E_NOT_HELD);
    etcdlock_once_free(third);
    none = (etcdlock_once_slot *)0x1;
    CHECK_RC(etcdlock_once(c, name, HOUR_MS, 10, at, 3, &none), ETCDLOCK_OK);
    CHECK(none == NULL);
    /* A slot freed without done is released: the next trigger runs it. */
    char other[160];
    snprintf(other, sizeof other, "%s-2", name);
    etcdlock_once_slot *dropped = NULL, *again = NULL;
    CHECK_RC(etcdlock_once(c, other, HOUR_MS, 10, at, 3, &dropped), ETCDLOCK_OK);
    CHECK(dropped != NULL);
    etcdlock_once_free(dropped);
    CHECK_RC(etcdlock_once(c, other, HOUR_MS, 10, at, 3, &again), ETCDLOCK_OK);
    CHECK(again != NULL);
    CHECK_RC(etcdlock_once_done(again), ETCDLOCK_OK);
    etcdlock_once_free(again);
    etcdlock_client_free(c);
}

/* covers: ONCE-INPUT-001 */
static void test_once_options_are_checked(void) {
    etcdlock_client *c = connect_client();
    char name[128], slash[140];
    unique(name, sizeof name, "j");
    snprintf(slash, sizeof slash, "%s/", name);
    etcdlock_once_slot *const SENTINEL = (etcdlock_once_slot *)0x1;
    etcdlock_once_slot *s = SENTINEL;
    CHECK_RC(etcdlock_once(c, "", 60000, 10, 0, 3, &s), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once(c, slash, 60000, 10, 0, 3, &s), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once(c, name, 500, 10, 0, 3, &s), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once(c, name, -60000, 10, 0, 3, &s), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once(c, name, 60000, 10, 0, 1, &s), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once(c, name, 60000, 0, 0, 3, &s), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once(c, name, 60000, 10, -1000, 3, &s), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once(c, name, INT64_MAX, 10, 0, UINT32_MAX, &s), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once(NULL, name, 60000, 10, 0, 3, &s), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once(c, NULL, 60000, 10, 0, 3, &s), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once(c, name, 60000, 10, 0, 3, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(s == SENTINEL);
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "INVALID_ARGUMENT") != NULL);
    /* the slot functions on NULL */
    CHECK(etcdlock_once_index(NULL) == 0 && etcdlock_once_fencing_token(NULL) == 0);
    CHECK(!etcdlock_once_is_held(NULL) && etcdlock_once_lost_reason(NULL) == 0);
    CHECK_RC(etcdlock_once_on_lost(NULL, on_lost, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once_done(NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once_release(NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_once_free(NULL);
    CHECK(count_keys(name) == 0);
    /* A slot's on_lost without a callback. */
    s = NULL;
    CHECK_RC(etcdlock_once(c, name, 60000, 10, 0, 3, &s), ETCDLOCK_OK);
    CHECK(s != NULL);
    CHECK_RC(etcdlock_once_on_lost(s, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once_release(s), ETCDLOCK_OK);
    etcdlock_once_free(s);
    CHECK(count_keys(name) == 0);
    etcdlock_client_free(c);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "worker") == 0) return worker_main(argv[2], atoi(argv[3]));
    if (strchr(argv[0], '/')) g_self = argv[0];
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_priority_first_then_the_order_of_the_puts);
    RUN(test_a_put_with_an_existing_id_changes_nothing);
    RUN(test_ack_and_fenced_writes_with_a_lost_claim);
    RUN(test_a_delayed_item_waits_for_its_delay);
    RUN(test_dead_letters_after_the_last_attempt);
    RUN(test_bad_input_is_refused_with_nothing_written);
    RUN(test_async_claims_and_cancel);
    RUN(test_a_worker_killed_mid_task_loses_it_to_another_within_ttl);
    RUN(test_a_worker_frozen_past_its_ttl_cannot_ack);
    RUN(test_once_runs_one_trigger_per_period);
    RUN(test_a_failed_or_lost_once_job_runs_at_the_next_trigger);
    RUN(test_once_options_are_checked);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK); /* the library's threads stop: valgrind sees no leak */
    return summary("test_tasks");
}
