/* Pools of named slots (etcdlock_pool_*), semaphores taking several permits at once
 * (etcdlock_semaphore_acquire_with_count) and fenced writes through a once-per-period slot
 * (etcdlock_once_put/_delete) against a real etcd, with etcdctl as the witness of what is left:
 * 12 threads on 3 slots never share one; a holder (this program run again as a child) SIGKILLed
 * leaves its slot resting the reuse delay, a released one is taken at once; a request for 2
 * goes before later single ones; owners; definitions; runtime changes; NULLs and bad input.
 * `test_pool quick` leaves out the two timing tests (for the valgrind run).
 * Scenario IDs of tests/conformance/scenarios.md are named in `covers:` comments. */
#include "check.h"
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#define K(s) (const uint8_t *)(s), strlen(s)

static const char *g_self = "/proc/self/exe";

/* Whether `key` exists (etcdlock_get). */
static int exists(etcdlock_client *c, const char *key) {
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(c, K(key), &b), ETCDLOCK_OK);
    int there = b != NULL;
    etcdlock_buf_free(b);
    return there;
}

static const char *slot_of(etcdlock_pool_held *h, size_t i) {
    size_t n = 0;
    const char *const *s = etcdlock_pool_held_slots(h, &n);
    return s && i < n ? s[i] : "";
}

static size_t n_slots_of(etcdlock_pool_held *h) {
    size_t n = 0;
    etcdlock_pool_held_slots(h, &n);
    return n;
}

/* An _async acquire's outcome. */
struct pending {
    atomic_int done;
    atomic_int status;
    etcdlock_pool_held *held;
    atomic_int order; /* the order it completed in (1, 2, ...) */
    double at;        /* when */
};
static atomic_int g_completed;

static void on_acquired(void *user, int status, etcdlock_pool_held *held) {
    struct pending *p = user;
    p->held = held;
    p->at = now_ms();
    atomic_store(&p->status, status);
    atomic_store(&p->order, atomic_fetch_add(&g_completed, 1) + 1);
    atomic_store(&p->done, 1);
}

/* Waits (bounded by `ms`) for an _async acquire to complete; returns whether it did. */
static int wait_done(struct pending *p, int ms) {
    for (int i = 0; i < ms / 10 && !atomic_load(&p->done); i++) sleep_ms(10);
    return atomic_load(&p->done);
}

/* ---- POOL-EXCL-001: 12 threads on 3 slots ---- */

struct worker {
    const char *name, *marks;
    int index;
    atomic_int *inside, *most, *failed;
};

static void *excl_worker(void *arg) {
    struct worker *w = arg;
    etcdlock_client *c = NULL;
    if (etcdlock_client_new(endpoints(), NULL, &c) != ETCDLOCK_OK) {
        atomic_fetch_add(w->failed, 1);
        return NULL;
    }
    const char *gpus[] = {"gpu0", "gpu1", "gpu2"};
    etcdlock_pool *pool = NULL;
    if (etcdlock_pool_open(c, w->name, gpus, 3, 10, 2000, &pool) != ETCDLOCK_OK) atomic_fetch_add(w->failed, 1);
    for (int round = 0; pool && round < 3; round++) {
        etcdlock_pool_held *h = NULL;
        if (etcdlock_pool_acquire(pool, 1, NULL, 60000, NULL, &h) != ETCDLOCK_OK) {
            fprintf(stderr, "  worker %d: acquire failed\n", w->index);
            atomic_fetch_add(w->failed, 1);
            break;
        }
        int now = atomic_fetch_add(w->inside, 1) + 1;
        int most = atomic_load(w->most);
        while (now > most && !atomic_compare_exchange_weak(w->most, &most, now)) {
        }
        /* A fenced mark per slot: a second holder of the slot would find it. */
        char mark[256], value[16];
        snprintf(mark, sizeof mark, "%s%s", w->marks, slot_of(h, 0));
        snprintf(value, sizeof value, "%d", w->index);
        etcdlock_buf *b = NULL;
        if (etcdlock_get(c, K(mark), &b) != ETCDLOCK_OK || b != NULL) {
            fprintf(stderr, "  slot %s used by two holders (worker %d, round %d)\n", slot_of(h, 0), w->index, round);
            atomic_fetch_add(w->failed, 1);
        }
        etcdlock_buf_free(b);
        if (etcdlock_pool_held_put(h, K(mark), K(value)) != ETCDLOCK_OK) atomic_fetch_add(w->failed, 1);
        sleep_ms(3 * (w->index % 4));
        if (etcdlock_pool_held_delete(h, K(mark)) != ETCDLOCK_OK) atomic_fetch_add(w->failed, 1);
        atomic_fetch_sub(w->inside, 1);
        if (etcdlock_pool_held_release(h) != ETCDLOCK_OK) atomic_fetch_add(w->failed, 1);
        etcdlock_pool_held_free(h);
    }
    etcdlock_pool_free(pool);
    etcdlock_client_free(c);
    return NULL;
}

/* covers: POOL-EXCL-001 */
static void test_twelve_threads_on_three_slots_never_share_one(void) {
    char name[128], marks[160], prefix[160];
    unique(name, sizeof name, "pool-excl");
    snprintf(marks, sizeof marks, "%s-using/", name);
    atomic_int inside = 0, most = 0, failed = 0;
    struct worker w[12];
    pthread_t t[12];
    for (int i = 0; i < 12; i++) {
        w[i] = (struct worker){name, marks, i, &inside, &most, &failed};
        CHECK(pthread_create(&t[i], NULL, excl_worker, &w[i]) == 0);
    }
    for (int i = 0; i < 12; i++) pthread_join(t[i], NULL);
    CHECK(atomic_load(&failed) == 0);
    CHECK(atomic_load(&most) <= 3); /* never a fourth holder */
    CHECK(atomic_load(&most) >= 2); /* and the slots were used side by side */
    snprintf(prefix, sizeof prefix, "%s/queue/", name);
    CHECK(count_keys(prefix) == 0);
    snprintf(prefix, sizeof prefix, "%s/slot/", name);
    CHECK(count_keys(prefix) == 0);
    CHECK(count_keys(marks) == 0);
}

/* ---- POOL-REUSE-001: a released slot at once; a SIGKILLed holder's after the delay ---- */

/* The child: holds the pool's one slot until killed. */
static int holder_main(const char *name) {
    etcdlock_client *c = NULL;
    if (etcdlock_client_new(endpoints(), NULL, &c) != ETCDLOCK_OK) return 2;
    const char *ids[] = {"w0"};
    etcdlock_pool *pool = NULL;
    etcdlock_pool_held *h = NULL;
    if (etcdlock_pool_open(c, name, ids, 1, 2, 3000, &pool) != ETCDLOCK_OK) return 3;
    if (etcdlock_pool_acquire(pool, 1, NULL, 15000, NULL, &h) != ETCDLOCK_OK) return 4;
    const int64_t *tokens = etcdlock_pool_held_tokens(h, NULL);
    printf("held %s %lld\n", slot_of(h, 0), (long long)tokens[0]);
    fflush(stdout);
    for (;;) pause();
}

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

/* covers: POOL-REUSE-001 */
static void test_a_killed_holders_slot_rests_the_reuse_delay_and_a_released_one_does_not(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char name[128], slot_key[160], line[128];
    unique(name, sizeof name, "pool-reuse");
    snprintf(slot_key, sizeof slot_key, "%s/slot/w0", name);
    const char *ids[] = {"w0"};
    etcdlock_pool *pa = NULL, *pb = NULL;
    CHECK_RC(etcdlock_pool_open(a, name, ids, 1, 2, 3000, &pa), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_open(b, name, ids, 1, 2, 3000, &pb), ETCDLOCK_OK);
    if (!pa || !pb) return;
    /* A clean release: the next request gets the slot at once, with a larger token. */
    etcdlock_pool_held *first = NULL, *second = NULL;
    CHECK_RC(etcdlock_pool_acquire(pa, 1, NULL, 5000, NULL, &first), ETCDLOCK_OK);
    if (!first) return;
    int64_t token = etcdlock_pool_held_tokens(first, NULL)[0];
    CHECK_RC(etcdlock_pool_held_release(first), ETCDLOCK_OK);
    double at = now_ms();
    CHECK_RC(etcdlock_pool_acquire(pb, 1, NULL, 5000, NULL, &second), ETCDLOCK_OK);
    CHECK(now_ms() - at < 500);
    if (second) CHECK(etcdlock_pool_held_tokens(second, NULL)[0] > token);
    CHECK_RC(etcdlock_pool_held_release(second), ETCDLOCK_OK);
    etcdlock_pool_held_free(first);
    etcdlock_pool_held_free(second);

    /* A holder process SIGKILLed: its lease ends within its TTL (2 s), and the request waiting
     * meanwhile gets the slot only after the reuse delay (3 s) more. */
    int out[2];
    CHECK(pipe(out) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        execl(g_self, g_self, "holder", name, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    int started = read_line(out[0], line, sizeof line, 15000) > 0 && strncmp(line, "held w0 ", 8) == 0;
    CHECK(started);
    long long child_token = started ? atoll(line + 8) : 0;
    struct pending p = {0};
    CHECK_RC(etcdlock_pool_acquire_async(pa, 1, NULL, 15000, NULL, on_acquired, &p), ETCDLOCK_OK);
    sleep_ms(300);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    close(out[0]);
    /* The slot key goes with the dead holder's lease. */
    double died = 0;
    for (int i = 0; i < 1000 && !died; i++) {
        if (!exists(a, slot_key)) died = now_ms();
        else sleep_ms(10);
    }
    CHECK(died > 0);
    CHECK(wait_done(&p, 15000));
    CHECK_RC(atomic_load(&p.status), ETCDLOCK_OK);
    double rested = p.at - died;
    if (rested < 2900 || rested >= 6000) fprintf(stderr, "  the dead holder's slot was handed out %.0f ms after its lease ended\n", rested);
    CHECK(rested >= 2900);
    CHECK(rested < 6000);
    if (p.held) {
        CHECK(strcmp(slot_of(p.held, 0), "w0") == 0);
        CHECK(etcdlock_pool_held_tokens(p.held, NULL)[0] > child_token);
        CHECK_RC(etcdlock_pool_held_release(p.held), ETCDLOCK_OK);
        etcdlock_pool_held_free(p.held);
    }
    etcdlock_pool_free(pa);
    etcdlock_pool_free(pb);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

/* ---- POOL-FIFO-001 ---- */

/* covers: POOL-FIFO-001 */
static void test_a_request_for_two_goes_before_later_single_ones(void) {
    etcdlock_client *c = connect_client();
    char name[128], queue[160];
    unique(name, sizeof name, "pool-fifo");
    snprintf(queue, sizeof queue, "%s/queue/", name);
    etcdlock_pool *pool = NULL;
    CHECK_RC(etcdlock_pool_open(c, name, NULL, 3, 10, 0, &pool), ETCDLOCK_OK);
    if (!pool) return;
    etcdlock_pool_held *x = NULL, *y = NULL;
    CHECK_RC(etcdlock_pool_acquire(pool, 1, NULL, 5000, NULL, &x), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_acquire(pool, 1, NULL, 5000, NULL, &y), ETCDLOCK_OK);
    if (!x || !y) return;
    CHECK(strcmp(slot_of(x, 0), "0") == 0 && strcmp(slot_of(y, 0), "1") == 0);
    CHECK(etcdlock_pool_held_fencing_token(y) > etcdlock_pool_held_fencing_token(x));
    atomic_store(&g_completed, 0);
    struct pending p[3] = {{0}, {0}, {0}};
    const uint32_t counts[3] = {2, 1, 1};
    for (int i = 0; i < 3; i++) {
        CHECK_RC(etcdlock_pool_acquire_async(pool, counts[i], NULL, 10000, NULL, on_acquired, &p[i]), ETCDLOCK_OK);
        CHECK(wait_keys(queue, i + 1) == i + 1); /* queued in this order */
    }
    /* One slot is free, but the head wants two: nobody passes it. */
    sleep_ms(300);
    CHECK(atomic_load(&g_completed) == 0);
    CHECK_RC(etcdlock_pool_held_release(x), ETCDLOCK_OK);
    CHECK(wait_done(&p[0], 5000));
    CHECK_RC(atomic_load(&p[0].status), ETCDLOCK_OK);
    if (p[0].held) CHECK(n_slots_of(p[0].held) == 2);
    CHECK(atomic_load(&g_completed) == 1);
    /* Singles then go one free slot at a time, in their order (each release
     * frees exactly one slot, so the order checked is etcd's, not the callbacks'). */
    CHECK_RC(etcdlock_pool_held_release(y), ETCDLOCK_OK);
    CHECK(wait_done(&p[1], 5000));
    CHECK(atomic_load(&g_completed) == 2);
    CHECK_RC(etcdlock_pool_held_release(p[0].held), ETCDLOCK_OK);
    for (int i = 1; i < 3; i++) {
        CHECK(wait_done(&p[i], 5000));
        CHECK_RC(atomic_load(&p[i].status), ETCDLOCK_OK);
        CHECK(atomic_load(&p[i].order) == i + 1);
        if (p[i].held) CHECK(n_slots_of(p[i].held) == 1);
    }
    for (int i = 0; i < 3; i++) etcdlock_pool_held_free(p[i].held); /* the last two released here */
    etcdlock_pool_held_free(x);
    etcdlock_pool_held_free(y);
    /* A waiting acquire cancelled: CANCELLED, nothing left behind. */
    etcdlock_pool_held *all = NULL;
    CHECK_RC(etcdlock_pool_acquire(pool, 3, NULL, 5000, NULL, &all), ETCDLOCK_OK);
    etcdlock_cancel *cancel = etcdlock_cancel_new();
    struct pending w = {0};
    CHECK_RC(etcdlock_pool_acquire_async(pool, 1, NULL, ETCDLOCK_WAIT_FOREVER, cancel, on_acquired, &w), ETCDLOCK_OK);
    CHECK(wait_keys(queue, 1) == 1);
    etcdlock_cancel_trigger(cancel);
    CHECK(wait_done(&w, 5000));
    CHECK_RC(atomic_load(&w.status), ETCDLOCK_E_CANCELLED);
    CHECK(w.held == NULL);
    CHECK(count_keys(queue) == 0);
    etcdlock_cancel_free(cancel);
    etcdlock_pool_held_free(all); /* held: released by the free */
    all = NULL;
    CHECK(etcdlock_pool_acquire(pool, 3, NULL, 0, NULL, &all) == ETCDLOCK_OK && n_slots_of(all) == 3);
    etcdlock_pool_held_free(all);
    etcdlock_pool_free(pool);
    etcdlock_client_free(c);
}

/* ---- POOL-OWNER-001 ---- */

/* covers: POOL-OWNER-001 */
static void test_an_acquire_with_the_owner_of_a_live_holding_returns_it(void) {
    etcdlock_client *c = connect_client();
    char name[128];
    unique(name, sizeof name, "pool-owner");
    etcdlock_pool *pool = NULL;
    CHECK_RC(etcdlock_pool_open(c, name, NULL, 2, 10, 0, &pool), ETCDLOCK_OK);
    if (!pool) return;
    etcdlock_pool_held *first = NULL, *again = NULL, *other = NULL, *fresh = NULL;
    CHECK_RC(etcdlock_pool_acquire(pool, 1, "job-7", 5000, NULL, &first), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_acquire(pool, 1, "job-7", 5000, NULL, &again), ETCDLOCK_OK);
    if (!first || !again) return;
    CHECK(again != first);
    CHECK(strcmp(slot_of(again, 0), slot_of(first, 0)) == 0);
    CHECK(etcdlock_pool_held_fencing_token(again) == etcdlock_pool_held_fencing_token(first));
    const char *owner = etcdlock_pool_held_owner(again);
    CHECK(owner && strcmp(owner, "job-7") == 0);
    CHECK_RC(etcdlock_pool_acquire(pool, 1, "job-8", 5000, NULL, &other), ETCDLOCK_OK);
    if (other) CHECK(strcmp(slot_of(other, 0), slot_of(first, 0)) != 0);
    etcdlock_pool_state *st = NULL;
    CHECK_RC(etcdlock_inspect_pool(c, name, &st), ETCDLOCK_OK);
    if (st) {
        CHECK(st->n_slots == 2 && strcmp(st->slots[0].id, "0") == 0);
        CHECK(st->slots[0].state == ETCDLOCK_SLOT_HELD && strcmp(st->slots[0].owner, "job-7") == 0);
        CHECK(st->slots[0].acquisition == etcdlock_pool_held_fencing_token(first));
        CHECK(st->slots[0].token == etcdlock_pool_held_tokens(first, NULL)[0]);
        CHECK(st->slots[0].lease == etcdlock_pool_held_lease_id(first) && st->slots[0].ttl_s > 0);
        CHECK(st->slots[1].state == ETCDLOCK_SLOT_HELD && strcmp(st->slots[1].owner, "job-8") == 0);
    }
    etcdlock_pool_state_free(st);
    /* Freeing one handle keeps the holding for the other. */
    etcdlock_pool_held_free(again);
    CHECK(etcdlock_pool_held_is_held(first));
    char rec[160];
    snprintf(rec, sizeof rec, "%s-rec", name);
    CHECK_RC(etcdlock_pool_held_put(first, K(rec), K("x")), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_held_release(first), ETCDLOCK_OK);
    CHECK(!etcdlock_pool_held_is_held(first) && etcdlock_pool_held_lost_reason(first) == 0);
    CHECK_RC(etcdlock_pool_acquire(pool, 1, "job-7", 5000, NULL, &fresh), ETCDLOCK_OK);
    if (fresh) CHECK(etcdlock_pool_held_fencing_token(fresh) > etcdlock_pool_held_fencing_token(first));
    CHECK_RC(etcdlock_pool_held_release(first), ETCDLOCK_E_NOT_HELD);
    CHECK_RC(etcdlock_pool_held_put(first, K(rec), K("late")), ETCDLOCK_E_NOT_HELD);
    etcdlock_pool_held_free(first);
    etcdlock_pool_held_free(fresh);
    etcdlock_pool_held_free(other);
    char slots[160];
    snprintf(slots, sizeof slots, "%s/slot/", name);
    CHECK(count_keys(slots) == 0);
    etcdlock_pool_free(pool);
    etcdlock_client_free(c);
}

/* ---- a lost holding (POOL-LOST-001's C side) ---- */

struct lost_seen {
    atomic_int calls;
    atomic_int reason;
};

static void on_lost(void *user, int reason) {
    struct lost_seen *l = user;
    atomic_store(&l->reason, reason);
    atomic_fetch_add(&l->calls, 1);
}

/* covers: POOL-LOST-001 (C: the lost callback, fenced writes and release of a lost holding) */
static void test_a_lost_holding_calls_back_once_and_writes_nothing(void) {
    etcdlock_client *c = connect_client();
    char name[128], result[160], slots[160];
    unique(name, sizeof name, "pool-lost");
    snprintf(result, sizeof result, "%s-result", name);
    snprintf(slots, sizeof slots, "%s/slot/", name);
    etcdlock_pool *pool = NULL;
    CHECK_RC(etcdlock_pool_open(c, name, NULL, 3, 2, 0, &pool), ETCDLOCK_OK);
    if (!pool) return;
    etcdlock_pool_held *h = NULL, *other = NULL;
    CHECK_RC(etcdlock_pool_acquire(pool, 2, NULL, 5000, NULL, &h), ETCDLOCK_OK);
    if (!h) return;
    struct lost_seen lost = {0}, never = {0};
    CHECK_RC(etcdlock_pool_held_on_lost(h, on_lost, &lost), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_held_put(h, K(result), K("first")), ETCDLOCK_OK);
    CHECK(ctl("lease revoke %llx", (unsigned long long)etcdlock_pool_held_lease_id(h)));
    for (int i = 0; i < 500 && atomic_load(&lost.calls) == 0; i++) sleep_ms(10);
    sleep_ms(100);
    CHECK(atomic_load(&lost.calls) == 1);
    CHECK(atomic_load(&lost.reason) != 0 && atomic_load(&lost.reason) == etcdlock_pool_held_lost_reason(h));
    CHECK(!etcdlock_pool_held_is_held(h));
    CHECK_RC(etcdlock_pool_held_put(h, K(result), K("late")), ETCDLOCK_E_NOT_HELD);
    CHECK_RC(etcdlock_pool_held_delete(h, K(result)), ETCDLOCK_E_NOT_HELD);
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(c, K(result), &b), ETCDLOCK_OK);
    CHECK(b && etcdlock_buf_len(b) == 5 && memcmp(etcdlock_buf_data(b), "first", 5) == 0);
    etcdlock_buf_free(b);
    CHECK_RC(etcdlock_pool_held_release(h), ETCDLOCK_E_NOT_HELD);
    CHECK(count_keys(slots) == 0);
    /* A holding released normally: no callback. */
    CHECK_RC(etcdlock_pool_acquire(pool, 1, NULL, 5000, NULL, &other), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_held_on_lost(other, on_lost, &never), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_held_release(other), ETCDLOCK_OK);
    etcdlock_pool_held_free(other);
    sleep_ms(100);
    CHECK(atomic_load(&never.calls) == 0 && atomic_load(&lost.calls) == 1);
    etcdlock_pool_held_free(h);
    etcdlock_delete(c, K(result));
    etcdlock_pool_free(pool);
    etcdlock_client_free(c);
}

/* ---- POOL-DEF-001 ---- */

/* covers: POOL-DEF-001 */
static void test_definitions_must_agree_and_slots_change_at_runtime(void) {
    etcdlock_client *c = connect_client();
    char name[128], none[140], msg[512];
    unique(name, sizeof name, "pool-def");
    const char *ab[] = {"a", "b"}, *ac[] = {"a", "c"};
    etcdlock_pool *pool = NULL, *other = NULL, *joined = NULL;
    etcdlock_pool_held *h = NULL;
    CHECK_RC(etcdlock_pool_open(c, name, ab, 2, 10, 0, &pool), ETCDLOCK_OK);
    if (!pool) return;
    /* Not defined yet: nothing to change. */
    const char *cc[] = {"c"};
    CHECK_RC(etcdlock_pool_add_slots(pool, cc, 1, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_acquire(pool, 1, NULL, 5000, NULL, &h), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_held_release(h), ETCDLOCK_OK);
    etcdlock_pool_held_free(h);
    h = NULL;
    /* Other slots, or another reuse delay: refused, naming how to change them. */
    CHECK_RC(etcdlock_pool_open(c, name, ac, 2, 10, 0, &other), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_acquire(other, 1, NULL, 1000, NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "add_slots") != NULL);
    CHECK(h == NULL);
    etcdlock_pool_free(other);
    CHECK_RC(etcdlock_pool_open(c, name, ab, 2, 10, 5000, &other), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_acquire(other, 1, NULL, 1000, NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_pool_free(other);
    /* Joining takes the stored definition; joining a pool nobody defined is refused. */
    CHECK_RC(etcdlock_pool_join(c, name, 10, &joined), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_acquire(joined, 2, NULL, 5000, NULL, &h), ETCDLOCK_OK);
    if (h) CHECK(n_slots_of(h) == 2);
    CHECK_RC(etcdlock_pool_held_release(h), ETCDLOCK_OK);
    etcdlock_pool_held_free(h);
    h = NULL;
    etcdlock_pool_free(joined);
    snprintf(none, sizeof none, "%s-none", name);
    CHECK_RC(etcdlock_pool_join(c, none, 10, &joined), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_acquire(joined, 1, NULL, 1000, NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_pool_free(joined);
    /* A request waiting while both slots are held gets a slot added meanwhile. */
    etcdlock_pool_held *both = NULL;
    CHECK_RC(etcdlock_pool_acquire(pool, 2, NULL, 5000, NULL, &both), ETCDLOCK_OK);
    struct pending p = {0};
    CHECK_RC(etcdlock_pool_acquire_async(pool, 1, NULL, 5000, NULL, on_acquired, &p), ETCDLOCK_OK);
    sleep_ms(300);
    size_t size = 0;
    CHECK_RC(etcdlock_pool_add_slots(pool, cc, 1, &size), ETCDLOCK_OK);
    CHECK(size == 3);
    CHECK(wait_done(&p, 5000));
    CHECK_RC(atomic_load(&p.status), ETCDLOCK_OK);
    if (p.held) CHECK(strcmp(slot_of(p.held, 0), "c") == 0);
    /* A held slot removed goes at its release; it is not handed out meanwhile. */
    const char *a[] = {"a"};
    CHECK_RC(etcdlock_pool_remove_slots(pool, a, 1, &size), ETCDLOCK_OK);
    CHECK(size == 2);
    CHECK_RC(etcdlock_pool_held_release(both), ETCDLOCK_OK);
    etcdlock_pool_held_free(both);
    etcdlock_pool_state *st = NULL;
    CHECK_RC(etcdlock_inspect_pool(c, name, &st), ETCDLOCK_OK);
    if (st) {
        CHECK(st->n_slots == 2);
        CHECK(strcmp(st->slots[0].id, "b") == 0 && st->slots[0].state == ETCDLOCK_SLOT_FREE);
        CHECK(strcmp(st->slots[1].id, "c") == 0 && st->slots[1].state == ETCDLOCK_SLOT_HELD);
    }
    etcdlock_pool_state_free(st);
    const char *b[] = {"b"}, *zz[] = {"zz"};
    size = 99;
    CHECK_RC(etcdlock_pool_add_slots(pool, b, 1, &size), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_remove_slots(pool, zz, 1, &size), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(size == 99); /* outputs only on success */
    etcdlock_pool_held_free(p.held);
    /* No pool defined there: NULL. */
    st = (etcdlock_pool_state *)1;
    CHECK_RC(etcdlock_inspect_pool(c, none, &st), ETCDLOCK_OK);
    CHECK(st == NULL);
    etcdlock_pool_free(pool);
    etcdlock_client_free(c);
}

/* ---- POOL-INPUT-001 ---- */

static void never_called(void *user, int status, etcdlock_pool_held *held) {
    (void)status;
    (void)held;
    atomic_fetch_add((atomic_int *)user, 1);
}

static void never_called_lost(void *user, int reason) {
    (void)reason;
    atomic_fetch_add((atomic_int *)user, 1);
}

/* covers: POOL-INPUT-001 */
static void test_nulls_and_bad_input_are_refused_with_nothing_written(void) {
    etcdlock_client *c = connect_client();
    char name[128], key[160];
    unique(name, sizeof name, "pool-input");
    etcdlock_pool *pool = NULL;
    const char *ok[] = {"a", "b"};
    const char *dup[] = {"a", "a"}, *slash[] = {"a/b"}, *empty[] = {""}, *nul[] = {"a", NULL}, *bad_utf8[] = {"\xff"};
    CHECK_RC(etcdlock_pool_open(NULL, name, ok, 2, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_open(c, NULL, ok, 2, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_open(c, name, ok, 2, 10, 0, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_open(c, name, ok, 0, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);    /* no slots */
    CHECK_RC(etcdlock_pool_open(c, name, NULL, 0, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);  /* size 0 */
    CHECK_RC(etcdlock_pool_open(c, name, NULL, ETCDLOCK_MAX_POOL_SLOTS + 1, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_open(c, name, NULL, SIZE_MAX, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_open(c, name, dup, 2, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_open(c, name, slash, 1, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_open(c, name, empty, 1, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_open(c, name, nul, 2, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_open(c, name, bad_utf8, 1, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_open(c, name, ok, 2, 0, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);     /* TTL 0 */
    CHECK_RC(etcdlock_pool_open(c, name, ok, 2, 10, -1, &pool), ETCDLOCK_E_INVALID_ARGUMENT);   /* negative delay */
    CHECK_RC(etcdlock_pool_open(c, "", ok, 2, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    snprintf(key, sizeof key, "%s/", name);
    CHECK_RC(etcdlock_pool_open(c, key, ok, 2, 10, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_join(c, NULL, 10, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_join(c, name, 0, &pool), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(pool == NULL);

    CHECK_RC(etcdlock_pool_open(c, name, ok, 2, 10, 0, &pool), ETCDLOCK_OK);
    if (!pool) return;
    etcdlock_pool_held *h = NULL;
    atomic_int calls = 0;
    CHECK_RC(etcdlock_pool_acquire(NULL, 1, NULL, 0, NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_acquire(pool, 1, NULL, 0, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_acquire(pool, 0, NULL, 0, NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_acquire(pool, 3, NULL, 0, NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);   /* above the size */
    CHECK_RC(etcdlock_pool_acquire(pool, 1, NULL, -2, NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_acquire(pool, 1, "\xff", 0, NULL, &h), ETCDLOCK_E_INVALID_ARGUMENT); /* owner not UTF-8 */
    CHECK_RC(etcdlock_pool_acquire_async(pool, 1, NULL, 0, NULL, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_acquire_async(NULL, 1, NULL, 0, NULL, never_called, &calls), ETCDLOCK_E_INVALID_ARGUMENT);
    /* The count's bounds are the pool's (its size is etcd's): an _async acquire reports them. */
    struct pending zero = {0};
    CHECK_RC(etcdlock_pool_acquire_async(pool, 0, NULL, 0, NULL, on_acquired, &zero), ETCDLOCK_OK);
    CHECK(wait_done(&zero, 5000));
    CHECK_RC(atomic_load(&zero.status), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(zero.held == NULL);
    CHECK_RC(etcdlock_pool_add_slots(pool, NULL, 1, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_add_slots(NULL, ok, 1, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_remove_slots(pool, nul, 2, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_inspect_pool(c, name, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_inspect_pool(c, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(h == NULL);
    /* NULL holdings: neutral values, INVALID_ARGUMENT, no crash. */
    size_t n = 7;
    CHECK(etcdlock_pool_held_slots(NULL, &n) == NULL && n == 7);
    CHECK(etcdlock_pool_held_tokens(NULL, NULL) == NULL);
    CHECK(etcdlock_pool_held_fencing_token(NULL) == 0 && etcdlock_pool_held_lease_id(NULL) == 0);
    CHECK(!etcdlock_pool_held_is_held(NULL) && etcdlock_pool_held_lost_reason(NULL) == 0);
    CHECK(etcdlock_pool_held_owner(NULL) == NULL);
    CHECK_RC(etcdlock_pool_held_release(NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_held_put(NULL, K("k"), K("v")), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_held_delete(NULL, K("k")), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_held_txn(NULL, NULL, 0, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_held_on_lost(NULL, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_pool_held_free(NULL);
    etcdlock_pool_free(NULL);
    etcdlock_pool_state_free(NULL);
    CHECK(count_keys(name) == 0); /* nothing written */

    /* A try that finds no slot free leaves nothing but the definition. */
    etcdlock_pool_held *both = NULL;
    CHECK_RC(etcdlock_pool_acquire(pool, 2, NULL, 5000, NULL, &both), ETCDLOCK_OK);
    if (!both) return;
    CHECK(etcdlock_pool_held_owner(both) == NULL);
    CHECK_RC(etcdlock_pool_acquire(pool, 1, NULL, 0, NULL, &h), ETCDLOCK_E_WOULD_BLOCK);
    CHECK_RC(etcdlock_pool_acquire(pool, 1, NULL, 200, NULL, &h), ETCDLOCK_E_LOCK_TIMEOUT);
    CHECK(h == NULL);
    snprintf(key, sizeof key, "%s/queue/", name);
    CHECK(count_keys(key) == 0);
    /* Writes through the holding: not to the pool's own keys, not without ops or with a bad one. */
    snprintf(key, sizeof key, "%s/slot/a", name);
    CHECK_RC(etcdlock_pool_held_put(both, K(key), K("mine")), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_held_put(both, NULL, 3, K("v")), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_held_on_lost(both, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    int64_t rev = -5;
    CHECK_RC(etcdlock_pool_held_txn(both, NULL, 0, &rev), ETCDLOCK_E_INVALID_ARGUMENT);
    snprintf(key, sizeof key, "%s-out", name);
    etcdlock_op bad = {7, K(key), K("v")};
    CHECK_RC(etcdlock_pool_held_txn(both, &bad, 1, &rev), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_pool_held_txn(both, NULL, 1, &rev), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(rev == -5 && !exists(c, key));
    etcdlock_op ops[2] = {{ETCDLOCK_OP_PUT, K(key), K("v")}, {ETCDLOCK_OP_DELETE, K("ctest-never-there"), NULL, 0}};
    CHECK_RC(etcdlock_pool_held_txn(both, ops, 2, &rev), ETCDLOCK_OK);
    CHECK(rev > etcdlock_pool_held_fencing_token(both) && exists(c, key));
    CHECK_RC(etcdlock_pool_held_release(both), ETCDLOCK_OK);
    CHECK_RC(etcdlock_pool_held_txn(both, ops, 1, &rev), ETCDLOCK_E_NOT_HELD);
    CHECK_RC(etcdlock_pool_held_on_lost(both, never_called_lost, &calls), ETCDLOCK_E_NOT_HELD);
    etcdlock_pool_held_free(both);
    etcdlock_delete(c, K(key));
    CHECK(atomic_load(&calls) == 0);
    etcdlock_pool_free(pool);
    etcdlock_client_free(c);
}

/* ---- SEM-COUNT-001/002 ---- */

struct sem_pending {
    atomic_int done;
    atomic_int status;
    etcdlock_lock *lock;
};

static void on_permits(void *user, int status, etcdlock_lock *lock) {
    struct sem_pending *p = user;
    p->lock = lock;
    atomic_store(&p->status, status);
    atomic_store(&p->done, 1);
}

/* covers: SEM-COUNT-001 */
static void test_a_request_for_two_permits_waits_for_two_and_goes_first(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "sem-count");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *a = NULL, *b = NULL, *late = NULL, *extra = NULL;
    CHECK_RC(etcdlock_semaphore_acquire(c, name, 3, 10, 5000, NULL, &a), ETCDLOCK_OK);
    CHECK_RC(etcdlock_semaphore_acquire_with_count(c, name, 3, 1, 10, 5000, NULL, &b), ETCDLOCK_OK);
    /* One permit is free: the request for two waits at the head ... */
    struct sem_pending p = {0};
    CHECK_RC(etcdlock_semaphore_acquire_with_count_async(c, name, 3, 2, 10, 10000, NULL, on_permits, &p), ETCDLOCK_OK);
    CHECK(wait_keys(prefix, 3) == 3);
    /* ... and a later request for one waits behind it, though one permit is free. */
    CHECK_RC(etcdlock_semaphore_acquire(c, name, 3, 10, 600, NULL, &late), ETCDLOCK_E_LOCK_TIMEOUT);
    CHECK(!atomic_load(&p.done));
    CHECK_RC(etcdlock_lock_release(a), ETCDLOCK_OK);
    for (int i = 0; i < 500 && !atomic_load(&p.done); i++) sleep_ms(10);
    CHECK_RC(atomic_load(&p.status), ETCDLOCK_OK);
    if (p.lock) CHECK(etcdlock_lock_fencing_token(p.lock) > etcdlock_lock_fencing_token(b));
    /* Two of three held by it and one by b: nothing is free. */
    CHECK_RC(etcdlock_semaphore_acquire(c, name, 3, 10, 0, NULL, &extra), ETCDLOCK_E_WOULD_BLOCK);
    etcdlock_lock_state *st = NULL;
    CHECK_RC(etcdlock_inspect(c, name, &st), ETCDLOCK_OK);
    if (st) {
        CHECK(st->n_holders == 2 && st->n_entries == 2);
        if (st->n_entries == 2) CHECK(strcmp(st->entries[1].mode, "permits=3,count=2") == 0);
    }
    etcdlock_lock_state_free(st);
    CHECK_RC(etcdlock_lock_release(p.lock), ETCDLOCK_OK);
    CHECK_RC(etcdlock_semaphore_acquire(c, name, 3, 10, 0, NULL, &extra), ETCDLOCK_OK);
    etcdlock_lock_free(p.lock);
    etcdlock_lock_free(extra);
    etcdlock_lock_free(b);
    etcdlock_lock_free(a);
    /* None, or more than N, is refused before anything is sent. */
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_semaphore_acquire_with_count(c, name, 3, 0, 10, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_semaphore_acquire_with_count(c, name, 3, 4, 10, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_semaphore_acquire_with_count(c, name, 3, 1, 10, 0, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_semaphore_acquire_with_count_async(c, name, 3, 4, 10, 0, NULL, on_permits, &p), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_semaphore_acquire_with_count_async(c, name, 3, 1, 10, 0, NULL, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(l == NULL);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(c);
}

struct sem_worker {
    const char *name;
    uint32_t count;
    atomic_int *used, *most, *failed;
};

static void *sem_worker(void *arg) {
    struct sem_worker *w = arg;
    etcdlock_client *c = NULL;
    if (etcdlock_client_new(endpoints(), NULL, &c) != ETCDLOCK_OK) {
        atomic_fetch_add(w->failed, 1);
        return NULL;
    }
    for (int round = 0; round < 3; round++) {
        etcdlock_lock *l = NULL;
        if (etcdlock_semaphore_acquire_with_count(c, w->name, 4, w->count, 10, 60000, NULL, &l) != ETCDLOCK_OK) {
            atomic_fetch_add(w->failed, 1);
            break;
        }
        int now = atomic_fetch_add(w->used, (int)w->count) + (int)w->count;
        int most = atomic_load(w->most);
        while (now > most && !atomic_compare_exchange_weak(w->most, &most, now)) {
        }
        sleep_ms(10);
        atomic_fetch_sub(w->used, (int)w->count);
        if (etcdlock_lock_release(l) != ETCDLOCK_OK) atomic_fetch_add(w->failed, 1);
        etcdlock_lock_free(l);
    }
    etcdlock_client_free(c);
    return NULL;
}

/* covers: SEM-COUNT-002 */
static void test_mixed_counts_never_take_more_than_n_permits(void) {
    char name[128], prefix[140];
    unique(name, sizeof name, "sem-count-mix");
    snprintf(prefix, sizeof prefix, "%s/", name);
    atomic_int used = 0, most = 0, failed = 0;
    struct sem_worker w[6];
    pthread_t t[6];
    for (int i = 0; i < 6; i++) {
        w[i] = (struct sem_worker){name, 1 + (uint32_t)(i % 3), &used, &most, &failed};
        CHECK(pthread_create(&t[i], NULL, sem_worker, &w[i]) == 0);
    }
    for (int i = 0; i < 6; i++) pthread_join(t[i], NULL);
    CHECK(atomic_load(&failed) == 0);
    CHECK(atomic_load(&most) <= 4);
    CHECK(count_keys(prefix) == 0);
}

/* ---- ONCE-FENCE-001 ---- */

/* covers: ONCE-FENCE-001 */
static void test_a_once_slot_fences_the_jobs_writes(void) {
    etcdlock_client *c = connect_client(), *other = connect_client();
    char name[128], result[160], own[200], slot_name[200];
    unique(name, sizeof name, "once-fence");
    snprintf(result, sizeof result, "%s-result", name);
    etcdlock_once_slot *first = NULL, *second = NULL;
    CHECK_RC(etcdlock_once(c, name, 3600000, 2, 0, 3, &first), ETCDLOCK_OK);
    if (!first) return;
    CHECK_RC(etcdlock_once_put(first, K(result), K("first")), ETCDLOCK_OK);
    snprintf(own, sizeof own, "%s/done/%lld", name, (long long)etcdlock_once_index(first));
    CHECK_RC(etcdlock_once_put(first, K(own), K("done")), ETCDLOCK_E_INVALID_ARGUMENT); /* the job's own keys */
    CHECK_RC(etcdlock_once_delete(first, K(own)), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once_put(NULL, K(result), K("x")), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once_delete(NULL, K(result)), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_once_put(first, NULL, 4, K("x")), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(!exists(c, own));
    /* The winner's lease revoked: the next trigger wins, and the lost winner writes nothing. */
    snprintf(slot_name, sizeof slot_name, "%s/slot/%lld", name, (long long)etcdlock_once_index(first));
    etcdlock_lock_state *st = NULL;
    CHECK_RC(etcdlock_inspect(c, slot_name, &st), ETCDLOCK_OK);
    CHECK(st && st->n_entries == 1);
    if (st && st->n_entries == 1) CHECK(ctl("lease revoke %llx", (unsigned long long)st->entries[0].lease));
    etcdlock_lock_state_free(st);
    CHECK_RC(etcdlock_once(other, name, 3600000, 2, 0, 3, &second), ETCDLOCK_OK);
    CHECK(second != NULL);
    if (second) CHECK_RC(etcdlock_once_put(second, K(result), K("second")), ETCDLOCK_OK);
    CHECK_RC(etcdlock_once_put(first, K(result), K("late")), ETCDLOCK_E_NOT_HELD);
    CHECK_RC(etcdlock_once_delete(first, K(result)), ETCDLOCK_E_NOT_HELD);
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(c, K(result), &b), ETCDLOCK_OK);
    CHECK(b && etcdlock_buf_len(b) == 6 && memcmp(etcdlock_buf_data(b), "second", 6) == 0);
    etcdlock_buf_free(b);
    if (second) {
        CHECK_RC(etcdlock_once_delete(second, K(result)), ETCDLOCK_OK);
        CHECK(!exists(c, result));
        CHECK_RC(etcdlock_once_done(second), ETCDLOCK_OK);
        CHECK_RC(etcdlock_once_put(second, K(result), K("after")), ETCDLOCK_E_NOT_HELD);
    }
    etcdlock_once_free(second);
    etcdlock_once_free(first);
    etcdlock_client_free(other);
    etcdlock_client_free(c);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "holder") == 0) return holder_main(argv[2]);
    if (strchr(argv[0], '/')) g_self = argv[0];
    int quick = argc == 2 && strcmp(argv[1], "quick") == 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!quick) RUN(test_twelve_threads_on_three_slots_never_share_one);
    if (!quick) RUN(test_a_killed_holders_slot_rests_the_reuse_delay_and_a_released_one_does_not);
    RUN(test_a_request_for_two_goes_before_later_single_ones);
    RUN(test_an_acquire_with_the_owner_of_a_live_holding_returns_it);
    RUN(test_a_lost_holding_calls_back_once_and_writes_nothing);
    RUN(test_definitions_must_agree_and_slots_change_at_runtime);
    RUN(test_nulls_and_bad_input_are_refused_with_nothing_written);
    RUN(test_a_request_for_two_permits_waits_for_two_and_goes_first);
    if (!quick) RUN(test_mixed_counts_never_take_more_than_n_permits);
    RUN(test_a_once_slot_fences_the_jobs_writes);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    return summary("test_pool");
}
