/* Leader election, semaphores and read-write locks through the C API
 * (etcdlock_election_*, etcdlock_observer_*, etcdlock_semaphore_*, etcdlock_rwlock_*),
 * against the test etcd, with etcdctl as the witness of what is left in etcd. */
#include "check.h"
#include <pthread.h>
#include <stdatomic.h>

#define TTL 10

static const uint8_t *u8(const char *s) { return (const uint8_t *)s; }

static int same(const uint8_t *p, size_t n, const char *s) {
    return p && n == strlen(s) && memcmp(p, s, n) == 0;
}

static void prefix_of(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/", name); }

/* The outcome of one `_async` acquire. */
struct pending {
    atomic_int done;
    atomic_int calls;
    int status;
    etcdlock_lock *lock;
    atomic_int *order; /* shared sequence counter, nullable */
    int seq;
};

static void on_acquired(void *user_data, int status, etcdlock_lock *lock) {
    struct pending *p = user_data;
    p->status = status;
    p->lock = lock;
    if (p->order) p->seq = atomic_fetch_add(p->order, 1);
    atomic_fetch_add(&p->calls, 1);
    atomic_store(&p->done, 1);
}

/* Waits at most `ms` for the callback; returns whether it came. */
static int wait_done(struct pending *p, long ms) {
    for (long waited = 0; !atomic_load(&p->done) && waited < ms; waited += 20) sleep_ms(20);
    return atomic_load(&p->done);
}

/* The leader of `name` through etcdlock_election_leader (NULL: none or failed). */
static etcdlock_leader *leader_of(etcdlock_client *c, const char *name) {
    etcdlock_leader *l = (etcdlock_leader *)&l; /* not NULL: must be overwritten */
    CHECK_RC(etcdlock_election_leader(c, name, &l), ETCDLOCK_OK);
    return l == (etcdlock_leader *)&l ? NULL : l;
}

/* covers: ELECT-BASIC-001 */
static void test_election_basic(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "elect-basic");
    prefix_of(prefix, sizeof prefix, name);

    CHECK(leader_of(c, name) == NULL); /* nobody campaigns */

    etcdlock_lock *lead = NULL;
    double t0 = now_ms();
    CHECK_RC(etcdlock_election_campaign(c, name, TTL, 5000, NULL, u8("node-1"), 6, &lead), ETCDLOCK_OK);
    CHECK(now_ms() - t0 < 3000); /* leads at once */
    CHECK(lead && etcdlock_lock_is_held(lead));
    if (!lead) { etcdlock_client_free(c); return; }

    size_t klen = 0;
    const uint8_t *key = etcdlock_lock_key(lead, &klen);
    char want_key[200];
    snprintf(want_key, sizeof want_key, "%s%" PRIx64, prefix, (uint64_t)etcdlock_lock_lease_id(lead));
    CHECK(same(key, klen, want_key));

    etcdlock_leader *l = leader_of(c, name);
    CHECK(l != NULL);
    if (l) {
        CHECK(same(l->key, l->key_len, want_key));
        CHECK(same(l->value, l->value_len, "node-1"));
        CHECK(l->revision == etcdlock_lock_fencing_token(lead));
        CHECK(l->lease == etcdlock_lock_lease_id(lead));
        CHECK(l->revision > 0 && l->lease != 0);
    }
    etcdlock_leader_free(l);

    /* etcd agrees: one key, our value. */
    CHECK(count_keys(prefix) == 1);
    char args[300];
    snprintf(args, sizeof args, "get --print-value-only '%s'", want_key);
    char *v = etcdctl(args);
    CHECK(v && strcmp(v, "node-1\n") == 0);
    free(v);

    CHECK_RC(etcdlock_election_resign(lead), ETCDLOCK_OK);
    etcdlock_lock_free(lead);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(c);
}

/* covers: ELECT-PROCLAIM-001 */
static void test_election_proclaim(void) {
    etcdlock_client *c = connect_client(), *other = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "elect-proclaim");
    prefix_of(prefix, sizeof prefix, name);
    etcdlock_lock *lead = NULL;
    CHECK_RC(etcdlock_election_campaign(c, name, TTL, 5000, NULL, u8("v1"), 2, &lead), ETCDLOCK_OK);
    if (!lead) { etcdlock_client_free(c); etcdlock_client_free(other); return; }
    int64_t token = etcdlock_lock_fencing_token(lead);
    size_t klen = 0;
    const uint8_t *key = etcdlock_lock_key(lead, &klen);

    int64_t rev = -1;
    CHECK_RC(etcdlock_election_proclaim(lead, u8("v2 ready"), 8, &rev), ETCDLOCK_OK);
    CHECK(rev > token);
    etcdlock_leader *l = leader_of(other, name);
    CHECK(l != NULL);
    if (l) {
        CHECK(same(l->value, l->value_len, "v2 ready"));
        CHECK(l->key_len == klen && memcmp(l->key, key, klen) == 0); /* same key */
        CHECK(l->revision == token);                                  /* same token */
    }
    etcdlock_leader_free(l);

    /* The returned revision is the write's: etcd's mod revision of the key. */
    char args[300];
    snprintf(args, sizeof args, "get -w fields '%.*s'", (int)klen, (const char *)key);
    char *out = etcdctl(args);
    long long mod = 0;
    for (char *line = out ? strtok(out, "\n") : NULL; line; line = strtok(NULL, "\n"))
        sscanf(line, "\"ModRevision\" : %lld", &mod);
    free(out);
    CHECK(mod == rev);

    /* The revision output is optional; an empty value is allowed. */
    CHECK_RC(etcdlock_election_proclaim(lead, NULL, 0, NULL), ETCDLOCK_OK);
    l = leader_of(other, name);
    CHECK(l && l->value_len == 0 && l->revision == token);
    etcdlock_leader_free(l);
    CHECK(count_keys(prefix) == 1);

    CHECK_RC(etcdlock_election_resign(lead), ETCDLOCK_OK);
    etcdlock_lock_free(lead);
    etcdlock_client_free(other);
    etcdlock_client_free(c);
}

/* covers: ELECT-RESIGN-001 */
static void test_election_resign(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "elect-resign");
    prefix_of(prefix, sizeof prefix, name);
    etcdlock_lock *lead = NULL;
    CHECK_RC(etcdlock_election_campaign(c, name, TTL, 5000, NULL, u8("first"), 5, &lead), ETCDLOCK_OK);
    if (!lead) { etcdlock_client_free(c); return; }
    int64_t first = etcdlock_lock_fencing_token(lead);

    CHECK_RC(etcdlock_election_resign(lead), ETCDLOCK_OK);
    CHECK(!etcdlock_lock_is_held(lead));
    CHECK(leader_of(c, name) == NULL); /* no leader */
    CHECK(count_keys(prefix) == 0);
    int64_t rev = -7;
    CHECK_RC(etcdlock_election_proclaim(lead, u8("late"), 4, &rev), ETCDLOCK_E_NOT_HELD);
    CHECK(rev == -7);
    CHECK(count_keys(prefix) == 0); /* the late proclaim wrote nothing */
    CHECK_RC(etcdlock_election_resign(lead), ETCDLOCK_E_NOT_HELD);
    etcdlock_lock_free(lead);

    etcdlock_lock *again = NULL;
    CHECK_RC(etcdlock_election_campaign(c, name, TTL, 5000, NULL, u8("second"), 6, &again), ETCDLOCK_OK);
    CHECK(again && etcdlock_lock_fencing_token(again) > first);
    etcdlock_leader *l = leader_of(c, name);
    CHECK(l && same(l->value, l->value_len, "second"));
    etcdlock_leader_free(l);
    CHECK_RC(etcdlock_election_resign(again), ETCDLOCK_OK);
    etcdlock_lock_free(again);
    CHECK(count_keys(prefix) == 0); /* no key left */
    etcdlock_client_free(c);
}

/* covers: ELECT-PROCLAIM-FENCED-001 */
static void test_election_proclaim_fenced(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140], guarded[160];
    unique(name, sizeof name, "elect-fenced");
    prefix_of(prefix, sizeof prefix, name);
    snprintf(guarded, sizeof guarded, "%s-data", name);
    etcdlock_lock *lead = NULL;
    CHECK_RC(etcdlock_election_campaign(c, name, TTL, 5000, NULL, u8("leader"), 6, &lead), ETCDLOCK_OK);
    if (!lead) { etcdlock_client_free(c); return; }
    /* A guarded write works while leading. */
    CHECK_RC(etcdlock_put(c, u8(guarded), strlen(guarded), u8("1"), 1, lead), ETCDLOCK_OK);

    size_t klen = 0;
    const uint8_t *key = etcdlock_lock_key(lead, &klen);
    char args[300];
    snprintf(args, sizeof args, "del '%.*s'", (int)klen, (const char *)key);
    CHECK(ctl("%s", args)); /* prints "1" */
    CHECK(count_keys(prefix) == 0);

    int64_t rev = -7;
    CHECK_RC(etcdlock_election_proclaim(lead, u8("deposed"), 7, &rev), ETCDLOCK_E_NOT_HELD);
    CHECK(rev == -7);
    CHECK_RC(etcdlock_put(c, u8(guarded), strlen(guarded), u8("2"), 1, lead), ETCDLOCK_E_NOT_HELD);
    /* Nothing written: the guarded key keeps its value, and no leader appears. */
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(c, u8(guarded), strlen(guarded), &b), ETCDLOCK_OK);
    CHECK(b && etcdlock_buf_len(b) == 1 && etcdlock_buf_data(b)[0] == '1');
    etcdlock_buf_free(b);
    CHECK(count_keys(prefix) == 0);
    CHECK(leader_of(c, name) == NULL);
    CHECK(!etcdlock_lock_is_held(lead));
    CHECK(etcdlock_lock_lost_reason(lead) == ETCDLOCK_LOST_KEY_DELETED);
    etcdlock_lock_free(lead);
    CHECK_RC(etcdlock_delete(c, u8(guarded), strlen(guarded)), ETCDLOCK_OK);
    etcdlock_client_free(c);
}

/* covers: ELECT-FIFO-001 */
static void test_election_fifo(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "elect-fifo");
    prefix_of(prefix, sizeof prefix, name);
    etcdlock_lock *la = NULL;
    CHECK_RC(etcdlock_election_campaign(a, name, TTL, 5000, NULL, u8("a"), 1, &la), ETCDLOCK_OK);
    if (!la) { etcdlock_client_free(a); etcdlock_client_free(b); return; }

    struct pending pb = {0};
    CHECK_RC(etcdlock_election_campaign_async(b, name, TTL, 20000, NULL, u8("b"), 1, on_acquired, &pb), ETCDLOCK_OK);
    CHECK(wait_keys(prefix, 2) == 2);
    sleep_ms(300);
    CHECK(!atomic_load(&pb.done)); /* it waits */
    etcdlock_leader *l = leader_of(a, name);
    CHECK(l && same(l->value, l->value_len, "a"));
    etcdlock_leader_free(l);

    CHECK_RC(etcdlock_election_resign(la), ETCDLOCK_OK);
    CHECK(wait_done(&pb, 5000));
    CHECK_RC(pb.status, ETCDLOCK_OK);
    CHECK(atomic_load(&pb.calls) == 1);
    if (pb.lock) {
        CHECK(etcdlock_lock_fencing_token(pb.lock) > etcdlock_lock_fencing_token(la));
        l = leader_of(a, name);
        CHECK(l && same(l->value, l->value_len, "b")); /* its value is the leader's */
        CHECK(l && l->revision == etcdlock_lock_fencing_token(pb.lock));
        etcdlock_leader_free(l);
        CHECK_RC(etcdlock_election_resign(pb.lock), ETCDLOCK_OK);
        etcdlock_lock_free(pb.lock);
    }
    etcdlock_lock_free(la);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

/* covers: ELECT-TIMEOUT-001 */
static void test_election_timeout(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "elect-timeout");
    prefix_of(prefix, sizeof prefix, name);
    etcdlock_lock *la = NULL, *lb = NULL;
    CHECK_RC(etcdlock_election_campaign(a, name, TTL, 5000, NULL, u8("a"), 1, &la), ETCDLOCK_OK);
    CHECK_RC(etcdlock_election_campaign(b, name, TTL, 0, NULL, u8("b"), 1, &lb), ETCDLOCK_E_WOULD_BLOCK);
    CHECK(lb == NULL);
    CHECK(count_keys(prefix) == 1);
    double t0 = now_ms();
    CHECK_RC(etcdlock_election_campaign(b, name, TTL, 300, NULL, u8("b"), 1, &lb), ETCDLOCK_E_LOCK_TIMEOUT);
    double took = now_ms() - t0;
    CHECK(took >= 280 && took < 2500);
    CHECK(lb == NULL);
    CHECK(count_keys(prefix) == 1); /* neither left a key */
    etcdlock_leader *l = leader_of(b, name);
    CHECK(l && same(l->value, l->value_len, "a"));
    etcdlock_leader_free(l);

    /* The async form reports the timeout the same way, once. */
    struct pending p = {0};
    CHECK_RC(etcdlock_election_campaign_async(b, name, TTL, 300, NULL, u8("b"), 1, on_acquired, &p), ETCDLOCK_OK);
    CHECK(wait_done(&p, 5000));
    CHECK_RC(p.status, ETCDLOCK_E_LOCK_TIMEOUT);
    CHECK(p.lock == NULL);
    CHECK(count_keys(prefix) == 1);

    /* A cancelled campaign leaves nothing either. */
    etcdlock_cancel *cancel = etcdlock_cancel_new();
    etcdlock_cancel_trigger(cancel);
    CHECK_RC(etcdlock_election_campaign(b, name, TTL, 5000, cancel, u8("b"), 1, &lb), ETCDLOCK_E_CANCELLED);
    etcdlock_cancel_free(cancel);
    CHECK(count_keys(prefix) == 1);

    etcdlock_lock_free(la); /* frees a leadership still held: resigns */
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

/* Next leader state from `o` within `ms`: status in *rc, the leader (or NULL). */
static etcdlock_leader *next_of(etcdlock_observer *o, int64_t ms, int *rc) {
    etcdlock_leader *l = (etcdlock_leader *)&l;
    *rc = etcdlock_observer_next(o, ms, &l);
    return l == (etcdlock_leader *)&l ? NULL : l;
}

/* covers: ELECT-OBSERVE-001 */
static void test_election_observe(void) {
    etcdlock_client *a = connect_client(), *b = connect_client(), *w = connect_client();
    char name[128];
    unique(name, sizeof name, "elect-observe");
    etcdlock_observer *o = NULL;
    CHECK_RC(etcdlock_election_observe(w, name, &o), ETCDLOCK_OK);
    if (!o) goto done;
    int rc;
    /* The current state first: nobody. */
    etcdlock_leader *l = next_of(o, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(l == NULL);
    etcdlock_leader_free(l);
    l = next_of(o, 300, &rc);
    CHECK_RC(rc, ETCDLOCK_E_TIMEOUT); /* no change */

    etcdlock_lock *la = NULL;
    CHECK_RC(etcdlock_election_campaign(a, name, TTL, 5000, NULL, u8("a"), 1, &la), ETCDLOCK_OK);
    l = next_of(o, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(l && same(l->value, l->value_len, "a") && la && l->revision == etcdlock_lock_fencing_token(la));
    etcdlock_leader_free(l);

    /* A second candidate is no change. */
    struct pending pb = {0};
    CHECK_RC(etcdlock_election_campaign_async(b, name, TTL, 20000, NULL, u8("b"), 1, on_acquired, &pb), ETCDLOCK_OK);
    char prefix[140];
    prefix_of(prefix, sizeof prefix, name);
    CHECK(wait_keys(prefix, 2) == 2);
    l = next_of(o, 500, &rc);
    CHECK_RC(rc, ETCDLOCK_E_TIMEOUT);
    CHECK(l == NULL);

    /* A proclamation: same key, new value. */
    CHECK_RC(etcdlock_election_proclaim(la, u8("a2"), 2, NULL), ETCDLOCK_OK);
    l = next_of(o, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(l && same(l->value, l->value_len, "a2") && l->revision == etcdlock_lock_fencing_token(la));
    etcdlock_leader_free(l);

    /* A resignation: the next candidate leads. */
    CHECK_RC(etcdlock_election_resign(la), ETCDLOCK_OK);
    CHECK(wait_done(&pb, 5000));
    CHECK_RC(pb.status, ETCDLOCK_OK);
    l = next_of(o, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(l && same(l->value, l->value_len, "b"));
    CHECK(l && pb.lock && l->revision == etcdlock_lock_fencing_token(pb.lock));
    etcdlock_leader_free(l);

    if (pb.lock) {
        CHECK_RC(etcdlock_election_resign(pb.lock), ETCDLOCK_OK);
        etcdlock_lock_free(pb.lock);
    }
    l = next_of(o, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(l == NULL);
    etcdlock_lock_free(la);
done:
    etcdlock_observer_free(o);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
    etcdlock_client_free(w);
}

struct blocked_next {
    etcdlock_observer *o;
    int rc;
    etcdlock_leader *out;
};

static void *next_forever(void *arg) {
    struct blocked_next *n = arg;
    n->rc = etcdlock_observer_next(n->o, ETCDLOCK_WAIT_FOREVER, &n->out);
    return NULL;
}

/* covers: ELECT-OBSERVE-NOLEADER-001 */
static void test_election_observe_noleader(void) {
    etcdlock_client *a = connect_client(), *w = connect_client();
    char name[128];
    unique(name, sizeof name, "elect-noleader");
    etcdlock_lock *la = NULL;
    CHECK_RC(etcdlock_election_campaign(a, name, TTL, 5000, NULL, u8("only"), 4, &la), ETCDLOCK_OK);
    etcdlock_observer *o = NULL;
    CHECK_RC(etcdlock_election_observe(w, name, &o), ETCDLOCK_OK);
    int rc;
    etcdlock_leader *l = next_of(o, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(l && same(l->value, l->value_len, "only"));
    etcdlock_leader_free(l);

    /* The last candidate resigns: "no leader". */
    CHECK_RC(etcdlock_election_resign(la), ETCDLOCK_OK);
    etcdlock_lock_free(la);
    l = next_of(o, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(l == NULL);

    /* Then the client closes: CLOSED, for a waiting next and every later one. */
    struct blocked_next n = {o, -1, (etcdlock_leader *)&n};
    pthread_t t;
    pthread_create(&t, NULL, next_forever, &n);
    sleep_ms(300);
    etcdlock_client_free(w);
    pthread_join(t, NULL);
    CHECK_RC(n.rc, ETCDLOCK_E_CLOSED);
    CHECK(n.out == (etcdlock_leader *)&n); /* untouched */
    l = next_of(o, 1000, &rc);
    CHECK_RC(rc, ETCDLOCK_E_CLOSED);
    CHECK(l == NULL);
    etcdlock_observer_free(o);

    /* etcdlock_observer_close from another thread ends a waiting next too. */
    CHECK_RC(etcdlock_election_observe(a, name, &o), ETCDLOCK_OK);
    l = next_of(o, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(l == NULL);
    n = (struct blocked_next){o, -1, (etcdlock_leader *)&n};
    pthread_create(&t, NULL, next_forever, &n);
    sleep_ms(300);
    double t0 = now_ms();
    etcdlock_observer_close(o);
    pthread_join(t, NULL);
    CHECK(now_ms() - t0 < 3000);
    CHECK_RC(n.rc, ETCDLOCK_E_CLOSED);
    l = next_of(o, 0, &rc);
    CHECK_RC(rc, ETCDLOCK_E_CLOSED);
    etcdlock_observer_close(o); /* idempotent */
    etcdlock_observer_free(o);
    etcdlock_client_free(a);
}

/* SEM-LIMIT-001: 8 clients x 4 rounds on a semaphore of 3. */
#define SEM_N 3
#define SEM_THREADS 8
#define SEM_ROUNDS 4

struct sem_shared {
    const char *name;
    const char *marks; /* prefix of the holders' marks */
    atomic_int holders;
    atomic_int max_holders;
    atomic_int max_marks;
    atomic_int cycles;
};

struct sem_worker {
    struct sem_shared *s;
    int id;
};

static void atomic_max(atomic_int *m, int v) {
    int cur = atomic_load(m);
    while (v > cur && !atomic_compare_exchange_weak(m, &cur, v)) {
    }
}

static void *sem_worker(void *arg) {
    struct sem_worker *w = arg;
    struct sem_shared *s = w->s;
    etcdlock_client *c = connect_client();
    if (!c) return NULL;
    char mark[200];
    snprintf(mark, sizeof mark, "%s%d", s->marks, w->id);
    for (int r = 0; r < SEM_ROUNDS; r++) {
        etcdlock_lock *l = NULL;
        CHECK_RC(etcdlock_semaphore_acquire(c, s->name, SEM_N, TTL, 60000, NULL, &l), ETCDLOCK_OK);
        if (!l) continue;
        atomic_max(&s->max_holders, atomic_fetch_add(&s->holders, 1) + 1);
        CHECK_RC(etcdlock_put(c, u8(mark), strlen(mark), u8("held"), 4, l), ETCDLOCK_OK); /* fenced */
        sleep_ms(150);
        int marks = count_keys(s->marks);
        CHECK(marks >= 1 && marks <= SEM_N);
        atomic_max(&s->max_marks, marks);
        CHECK_RC(etcdlock_delete(c, u8(mark), strlen(mark)), ETCDLOCK_OK);
        atomic_fetch_sub(&s->holders, 1);
        CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
        etcdlock_lock_free(l);
        atomic_fetch_add(&s->cycles, 1);
    }
    etcdlock_client_free(c);
    return NULL;
}

/* covers: SEM-LIMIT-001 */
static void test_semaphore_limit(void) {
    char name[128], prefix[140], marks[160];
    unique(name, sizeof name, "sem-limit");
    prefix_of(prefix, sizeof prefix, name);
    snprintf(marks, sizeof marks, "%s-marks/", name);
    struct sem_shared s = {.name = name, .marks = marks};
    struct sem_worker w[SEM_THREADS];
    pthread_t t[SEM_THREADS];
    for (int i = 0; i < SEM_THREADS; i++) {
        w[i] = (struct sem_worker){&s, i};
        pthread_create(&t[i], NULL, sem_worker, &w[i]);
    }
    for (int i = 0; i < SEM_THREADS; i++) pthread_join(t[i], NULL);
    CHECK(atomic_load(&s.cycles) == SEM_THREADS * SEM_ROUNDS);
    CHECK(atomic_load(&s.max_holders) <= SEM_N);
    CHECK(atomic_load(&s.max_holders) == SEM_N); /* N reached */
    CHECK(atomic_load(&s.max_marks) <= SEM_N);
    fprintf(stderr, "  semaphore of %d: at most %d holders, %d marks at once\n", SEM_N, atomic_load(&s.max_holders),
            atomic_load(&s.max_marks));
    CHECK(count_keys(prefix) == 0);
    CHECK(count_keys(marks) == 0);
}

/* covers: SEM-PERMITS-001 */
static void test_semaphore_permits(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char name[128], prefix[140], lockname[140], lockprefix[150];
    unique(name, sizeof name, "sem-permits");
    prefix_of(prefix, sizeof prefix, name);
    snprintf(lockname, sizeof lockname, "%s-mutex", name);
    prefix_of(lockprefix, sizeof lockprefix, lockname);
    etcdlock_lock *l = NULL, *untouched = (etcdlock_lock *)&l;
    char msg[512];

    /* 0 or over ETCDLOCK_MAX_PERMITS: refused before anything is sent. */
    l = untouched;
    CHECK_RC(etcdlock_semaphore_acquire(a, name, 0, TTL, 1000, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_semaphore_acquire(a, name, ETCDLOCK_MAX_PERMITS + 1, TTL, 1000, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "1025") != NULL || strstr(msg, "1024") != NULL);
    struct pending p = {0};
    CHECK_RC(etcdlock_semaphore_acquire_async(a, name, 0, TTL, 1000, NULL, on_acquired, &p), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(l == untouched);
    CHECK(count_keys(prefix) == 0);

    /* A participant with 2 while one with 3 holds: refused, naming the 3; nothing left. */
    etcdlock_lock *h3 = NULL;
    CHECK_RC(etcdlock_semaphore_acquire(a, name, 3, TTL, 5000, NULL, &h3), ETCDLOCK_OK);
    CHECK(count_keys(prefix) == 1);
    l = untouched;
    CHECK_RC(etcdlock_semaphore_acquire(b, name, 2, TTL, 2000, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "3") != NULL);
    CHECK(l == untouched);
    CHECK(count_keys(prefix) == 1);
    /* The async form reports it in the callback. */
    CHECK_RC(etcdlock_semaphore_acquire_async(b, name, 2, TTL, 2000, NULL, on_acquired, &p), ETCDLOCK_OK);
    CHECK(wait_done(&p, 5000));
    CHECK_RC(p.status, ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(p.lock == NULL);
    CHECK(count_keys(prefix) == 1);
    /* The same count joins. */
    etcdlock_lock *second = NULL;
    CHECK_RC(etcdlock_semaphore_acquire(b, name, 3, TTL, 2000, NULL, &second), ETCDLOCK_OK);
    CHECK(second && h3 && etcdlock_lock_fencing_token(second) > etcdlock_lock_fencing_token(h3));
    CHECK_RC(etcdlock_lock_release(second), ETCDLOCK_OK);
    etcdlock_lock_free(second);

    /* A semaphore on a name a plain lock holds. */
    etcdlock_lock *m = NULL;
    CHECK_RC(etcdlock_lock_acquire(a, lockname, TTL, 5000, NULL, &m), ETCDLOCK_OK);
    l = untouched;
    CHECK_RC(etcdlock_semaphore_acquire(b, lockname, 2, TTL, 1000, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(l == untouched);
    CHECK(count_keys(lockprefix) == 1);
    CHECK_RC(etcdlock_lock_release(m), ETCDLOCK_OK);
    etcdlock_lock_free(m);

    /* Once nobody participates the count may change. */
    CHECK_RC(etcdlock_lock_release(h3), ETCDLOCK_OK);
    etcdlock_lock_free(h3);
    CHECK(count_keys(prefix) == 0);
    etcdlock_lock *h2a = NULL, *h2b = NULL, *h2c = NULL;
    CHECK_RC(etcdlock_semaphore_acquire(b, name, 2, TTL, 2000, NULL, &h2a), ETCDLOCK_OK);
    CHECK_RC(etcdlock_semaphore_acquire(a, name, 2, TTL, 2000, NULL, &h2b), ETCDLOCK_OK);
    CHECK_RC(etcdlock_semaphore_acquire(a, name, 2, TTL, 0, NULL, &h2c), ETCDLOCK_E_WOULD_BLOCK);
    etcdlock_lock_free(h2a);
    etcdlock_lock_free(h2b);
    /* The largest count works. */
    CHECK_RC(etcdlock_semaphore_acquire(a, name, ETCDLOCK_MAX_PERMITS, TTL, 2000, NULL, &h2c), ETCDLOCK_OK);
    etcdlock_lock_free(h2c);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

/* covers: SEM-TRY-001 */
static void test_semaphore_try(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "sem-try");
    prefix_of(prefix, sizeof prefix, name);
    etcdlock_lock *h1 = NULL, *h2 = NULL, *l = NULL;
    CHECK_RC(etcdlock_semaphore_acquire(a, name, 2, TTL, 0, NULL, &h1), ETCDLOCK_OK);
    CHECK_RC(etcdlock_semaphore_acquire(b, name, 2, TTL, 0, NULL, &h2), ETCDLOCK_OK); /* two holders */
    CHECK(h1 && h2 && etcdlock_lock_is_held(h1) && etcdlock_lock_is_held(h2));
    CHECK_RC(etcdlock_semaphore_acquire(b, name, 2, TTL, 0, NULL, &l), ETCDLOCK_E_WOULD_BLOCK);
    CHECK(l == NULL);
    CHECK(count_keys(prefix) == 2); /* nothing left */
    CHECK_RC(etcdlock_lock_release(h1), ETCDLOCK_OK);
    etcdlock_lock_free(h1);
    /* Then a permit: through the async form this time. */
    struct pending p = {0};
    CHECK_RC(etcdlock_semaphore_acquire_async(b, name, 2, TTL, 0, NULL, on_acquired, &p), ETCDLOCK_OK);
    CHECK(wait_done(&p, 5000));
    CHECK_RC(p.status, ETCDLOCK_OK);
    CHECK(p.lock && h2 && etcdlock_lock_fencing_token(p.lock) > etcdlock_lock_fencing_token(h2));
    CHECK(count_keys(prefix) == 2);
    etcdlock_lock_free(p.lock);
    etcdlock_lock_free(h2);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

/* covers: SEM-TIMEOUT-001 */
static void test_semaphore_timeout(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "sem-timeout");
    prefix_of(prefix, sizeof prefix, name);
    etcdlock_lock *h1 = NULL, *h2 = NULL, *l = NULL;
    CHECK_RC(etcdlock_semaphore_acquire(a, name, 2, TTL, 2000, NULL, &h1), ETCDLOCK_OK);
    CHECK_RC(etcdlock_semaphore_acquire(a, name, 2, TTL, 2000, NULL, &h2), ETCDLOCK_OK);
    double t0 = now_ms();
    CHECK_RC(etcdlock_semaphore_acquire(b, name, 2, TTL, 300, NULL, &l), ETCDLOCK_E_LOCK_TIMEOUT);
    double took = now_ms() - t0;
    CHECK(took >= 280 && took < 2500);
    CHECK(l == NULL);
    CHECK(count_keys(prefix) == 2); /* nothing left */
    struct pending p = {0};
    CHECK_RC(etcdlock_semaphore_acquire_async(b, name, 2, TTL, 300, NULL, on_acquired, &p), ETCDLOCK_OK);
    CHECK(wait_done(&p, 5000));
    CHECK_RC(p.status, ETCDLOCK_E_LOCK_TIMEOUT);
    CHECK(p.lock == NULL && atomic_load(&p.calls) == 1);
    CHECK(count_keys(prefix) == 2);
    etcdlock_lock_free(h1);
    etcdlock_lock_free(h2);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

/* covers: RW-READERS-001 */
static void test_rw_readers(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "rw-readers");
    prefix_of(prefix, sizeof prefix, name);
    etcdlock_lock *r[3] = {NULL, NULL, NULL}, *l = NULL;
    /* Three readers from two clients hold together (each a try). */
    CHECK_RC(etcdlock_rwlock_read(a, name, TTL, 0, NULL, &r[0]), ETCDLOCK_OK);
    CHECK_RC(etcdlock_rwlock_read(b, name, TTL, 0, NULL, &r[1]), ETCDLOCK_OK);
    struct pending pr = {0};
    CHECK_RC(etcdlock_rwlock_read_async(a, name, TTL, 0, NULL, on_acquired, &pr), ETCDLOCK_OK);
    CHECK(wait_done(&pr, 5000));
    CHECK_RC(pr.status, ETCDLOCK_OK);
    r[2] = pr.lock;
    for (int i = 0; i < 3; i++) CHECK(r[i] && etcdlock_lock_is_held(r[i]));
    CHECK(count_keys(prefix) == 3);

    /* A try-write and a 300 ms write meanwhile: WouldBlock, LockTimeout, nothing left. */
    CHECK_RC(etcdlock_rwlock_write(b, name, TTL, 0, NULL, &l), ETCDLOCK_E_WOULD_BLOCK);
    double t0 = now_ms();
    CHECK_RC(etcdlock_rwlock_write(b, name, TTL, 300, NULL, &l), ETCDLOCK_E_LOCK_TIMEOUT);
    double took = now_ms() - t0;
    CHECK(took >= 280 && took < 2500);
    CHECK(l == NULL);
    CHECK(count_keys(prefix) == 3);

    /* A writer waiting while the readers release one by one. */
    struct pending pw = {0};
    CHECK_RC(etcdlock_rwlock_write_async(b, name, TTL, 30000, NULL, on_acquired, &pw), ETCDLOCK_OK);
    CHECK(wait_keys(prefix, 4) == 4);
    int64_t max_reader = 0;
    for (int i = 0; i < 3; i++) {
        if (!r[i]) continue;
        if (etcdlock_lock_fencing_token(r[i]) > max_reader) max_reader = etcdlock_lock_fencing_token(r[i]);
    }
    for (int i = 0; i < 3; i++) {
        sleep_ms(300);
        CHECK(!atomic_load(&pw.done)); /* not before the last reader's release */
        if (r[i]) CHECK_RC(etcdlock_lock_release(r[i]), ETCDLOCK_OK);
    }
    CHECK(wait_done(&pw, 5000));
    CHECK_RC(pw.status, ETCDLOCK_OK);
    CHECK(pw.lock && etcdlock_lock_fencing_token(pw.lock) > max_reader);
    /* The writer excludes a try-read. */
    CHECK_RC(etcdlock_rwlock_read(a, name, TTL, 0, NULL, &l), ETCDLOCK_E_WOULD_BLOCK);
    CHECK(l == NULL);
    CHECK(count_keys(prefix) == 1);
    if (pw.lock) CHECK_RC(etcdlock_lock_release(pw.lock), ETCDLOCK_OK);
    etcdlock_lock_free(pw.lock);
    for (int i = 0; i < 3; i++) etcdlock_lock_free(r[i]);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

struct rw_waiter {
    etcdlock_client *c;
    const char *name;
    int write;
    atomic_int *order;
    int seq;
    int rc;
    int64_t token;
    etcdlock_lock *lock;
};

static void *rw_wait(void *arg) {
    struct rw_waiter *w = arg;
    w->rc = w->write ? etcdlock_rwlock_write(w->c, w->name, TTL, 20000, NULL, &w->lock)
                     : etcdlock_rwlock_read(w->c, w->name, TTL, 20000, NULL, &w->lock);
    w->seq = atomic_fetch_add(w->order, 1);
    if (w->lock) w->token = etcdlock_lock_fencing_token(w->lock);
    return NULL;
}

/* covers: RW-WRITER-FAIR-001 */
static void test_rw_writer_fair(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "rw-fair");
    prefix_of(prefix, sizeof prefix, name);
    atomic_int order = 1;
    etcdlock_lock *r1 = NULL, *l = NULL;
    CHECK_RC(etcdlock_rwlock_read(a, name, TTL, 5000, NULL, &r1), ETCDLOCK_OK);
    if (!r1) { etcdlock_client_free(a); etcdlock_client_free(b); return; }
    int64_t t1 = etcdlock_lock_fencing_token(r1);

    struct rw_waiter w = {b, name, 1, &order, 0, -1, 0, NULL};
    pthread_t tw;
    pthread_create(&tw, NULL, rw_wait, &w);
    CHECK(wait_keys(prefix, 2) == 2);

    /* A second reader comes: it waits behind the writer. */
    CHECK_RC(etcdlock_rwlock_read(a, name, TTL, 0, NULL, &l), ETCDLOCK_E_WOULD_BLOCK);
    CHECK(l == NULL);
    CHECK(count_keys(prefix) == 2);
    struct pending r2 = {.order = &order};
    CHECK_RC(etcdlock_rwlock_read_async(a, name, TTL, 20000, NULL, on_acquired, &r2), ETCDLOCK_OK);
    CHECK(wait_keys(prefix, 3) == 3);
    sleep_ms(300);
    CHECK(!atomic_load(&r2.done));

    CHECK_RC(etcdlock_lock_release(r1), ETCDLOCK_OK);
    etcdlock_lock_free(r1);
    pthread_join(tw, NULL);
    CHECK_RC(w.rc, ETCDLOCK_OK);
    sleep_ms(300);
    CHECK(!atomic_load(&r2.done)); /* the writer holds alone */
    if (w.lock) {
        CHECK_RC(etcdlock_lock_release(w.lock), ETCDLOCK_OK);
        etcdlock_lock_free(w.lock);
    }
    CHECK(wait_done(&r2, 5000));
    CHECK_RC(r2.status, ETCDLOCK_OK);
    /* Holds went reader, writer, reader. */
    CHECK(w.seq == 1 && r2.seq == 2);
    CHECK(r2.lock && t1 < w.token && w.token < etcdlock_lock_fencing_token(r2.lock));
    etcdlock_lock_free(r2.lock);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

static void never_called(void *user_data, int status, etcdlock_lock *lock) {
    (void)status;
    (void)lock;
    atomic_fetch_add((atomic_int *)user_data, 1);
}

/* NULLs and bad values for every new function: the status, a message, outputs untouched,
 * nothing sent, no callback. */
static void test_bad_arguments(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "recipes-bad");
    prefix_of(prefix, sizeof prefix, name);
    etcdlock_lock *sentinel = (etcdlock_lock *)&c, *l = sentinel;
    const int E = ETCDLOCK_E_INVALID_ARGUMENT;
    const char *bad_names[] = {"", "jobs/", NULL};
    for (int i = 0; i < 3; i++) {
        const char *n = bad_names[i];
        CHECK_RC(etcdlock_election_campaign(c, n, TTL, 100, NULL, NULL, 0, &l), E);
        CHECK_RC(etcdlock_semaphore_acquire(c, n, 2, TTL, 100, NULL, &l), E);
        CHECK_RC(etcdlock_rwlock_read(c, n, TTL, 100, NULL, &l), E);
        CHECK_RC(etcdlock_rwlock_write(c, n, TTL, 100, NULL, &l), E);
    }
    /* TTL <= 0 or too large, timeout < -1 */
    int64_t ttls[] = {0, -5, 10000000000LL};
    for (int i = 0; i < 3; i++) {
        CHECK_RC(etcdlock_election_campaign(c, name, ttls[i], 100, NULL, NULL, 0, &l), E);
        CHECK_RC(etcdlock_semaphore_acquire(c, name, 2, ttls[i], 100, NULL, &l), E);
        CHECK_RC(etcdlock_rwlock_read(c, name, ttls[i], 100, NULL, &l), E);
        CHECK_RC(etcdlock_rwlock_write(c, name, ttls[i], 100, NULL, &l), E);
    }
    CHECK_RC(etcdlock_election_campaign(c, name, TTL, -2, NULL, NULL, 0, &l), E);
    CHECK_RC(etcdlock_semaphore_acquire(c, name, 2, TTL, -2, NULL, &l), E);
    CHECK_RC(etcdlock_rwlock_read(c, name, TTL, -2, NULL, &l), E);
    CHECK_RC(etcdlock_rwlock_write(c, name, TTL, -2, NULL, &l), E);
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "timeout_ms") != NULL);
    /* NULL client / out, and a value NULL with a length or too long */
    CHECK_RC(etcdlock_election_campaign(NULL, name, TTL, 100, NULL, NULL, 0, &l), E);
    CHECK_RC(etcdlock_election_campaign(c, name, TTL, 100, NULL, NULL, 0, NULL), E);
    CHECK_RC(etcdlock_election_campaign(c, name, TTL, 100, NULL, NULL, 3, &l), E);
    static uint8_t big[4097];
    CHECK_RC(etcdlock_election_campaign(c, name, TTL, 100, NULL, big, sizeof big, &l), E);
    CHECK_RC(etcdlock_semaphore_acquire(NULL, name, 2, TTL, 100, NULL, &l), E);
    CHECK_RC(etcdlock_semaphore_acquire(c, name, 2, TTL, 100, NULL, NULL), E);
    CHECK_RC(etcdlock_rwlock_read(NULL, name, TTL, 100, NULL, &l), E);
    CHECK_RC(etcdlock_rwlock_read(c, name, TTL, 100, NULL, NULL), E);
    CHECK_RC(etcdlock_rwlock_write(NULL, name, TTL, 100, NULL, &l), E);
    CHECK_RC(etcdlock_rwlock_write(c, name, TTL, 100, NULL, NULL), E);
    CHECK(l == sentinel);

    /* The async forms: status at once, never a callback. */
    atomic_int calls = 0;
    CHECK_RC(etcdlock_election_campaign_async(NULL, name, TTL, 100, NULL, NULL, 0, never_called, &calls), E);
    CHECK_RC(etcdlock_election_campaign_async(c, name, TTL, 100, NULL, NULL, 0, NULL, &calls), E);
    CHECK_RC(etcdlock_election_campaign_async(c, "x/", TTL, 100, NULL, NULL, 0, never_called, &calls), E);
    CHECK_RC(etcdlock_election_campaign_async(c, name, 0, 100, NULL, NULL, 0, never_called, &calls), E);
    CHECK_RC(etcdlock_semaphore_acquire_async(NULL, name, 2, TTL, 100, NULL, never_called, &calls), E);
    CHECK_RC(etcdlock_semaphore_acquire_async(c, name, 2, TTL, 100, NULL, NULL, &calls), E);
    CHECK_RC(etcdlock_semaphore_acquire_async(c, name, 2, TTL, -3, NULL, never_called, &calls), E);
    CHECK_RC(etcdlock_rwlock_read_async(NULL, name, TTL, 100, NULL, never_called, &calls), E);
    CHECK_RC(etcdlock_rwlock_read_async(c, name, TTL, 100, NULL, NULL, &calls), E);
    CHECK_RC(etcdlock_rwlock_read_async(c, "", TTL, 100, NULL, never_called, &calls), E);
    CHECK_RC(etcdlock_rwlock_write_async(NULL, name, TTL, 100, NULL, never_called, &calls), E);
    CHECK_RC(etcdlock_rwlock_write_async(c, name, TTL, 100, NULL, NULL, &calls), E);
    CHECK_RC(etcdlock_rwlock_write_async(c, name, -1, 100, NULL, never_called, &calls), E);

    /* Leadership calls, leader reads, observers. */
    CHECK_RC(etcdlock_election_proclaim(NULL, u8("v"), 1, NULL), E);
    CHECK_RC(etcdlock_election_resign(NULL), E);
    etcdlock_leader *ls = (etcdlock_leader *)&c, *lo = ls;
    CHECK_RC(etcdlock_election_leader(NULL, name, &lo), E);
    CHECK_RC(etcdlock_election_leader(c, NULL, &lo), E);
    CHECK_RC(etcdlock_election_leader(c, "", &lo), E);
    CHECK_RC(etcdlock_election_leader(c, "jobs/", &lo), E);
    CHECK_RC(etcdlock_election_leader(c, name, NULL), E);
    CHECK(lo == ls);
    etcdlock_observer *os = (etcdlock_observer *)&c, *o = os;
    CHECK_RC(etcdlock_election_observe(NULL, name, &o), E);
    CHECK_RC(etcdlock_election_observe(c, NULL, &o), E);
    CHECK_RC(etcdlock_election_observe(c, "jobs/", &o), E);
    CHECK_RC(etcdlock_election_observe(c, name, NULL), E);
    CHECK(o == os);
    CHECK_RC(etcdlock_observer_next(NULL, 100, &lo), E);
    o = NULL;
    CHECK_RC(etcdlock_election_observe(c, name, &o), ETCDLOCK_OK);
    CHECK_RC(etcdlock_observer_next(o, 100, NULL), E);
    CHECK_RC(etcdlock_observer_next(o, -2, &lo), E);
    CHECK(lo == ls);
    etcdlock_observer_free(o);
    etcdlock_observer_close(NULL);
    etcdlock_observer_free(NULL);
    etcdlock_leader_free(NULL);

    /* Proclaim with a bad value leaves the leader's alone. */
    etcdlock_lock *lead = NULL;
    CHECK_RC(etcdlock_election_campaign(c, name, TTL, 2000, NULL, u8("v"), 1, &lead), ETCDLOCK_OK);
    int64_t rev = -7;
    CHECK_RC(etcdlock_election_proclaim(lead, NULL, 1, &rev), E);
    CHECK_RC(etcdlock_election_proclaim(lead, big, sizeof big, &rev), E);
    CHECK(rev == -7);
    etcdlock_leader *cur = leader_of(c, name);
    CHECK(cur && same(cur->value, cur->value_len, "v"));
    etcdlock_leader_free(cur);
    etcdlock_lock_free(lead);

    sleep_ms(100);
    CHECK(atomic_load(&calls) == 0);
    CHECK(count_keys(prefix) == 0); /* nothing was sent that stayed */
    etcdlock_client_free(c);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_bad_arguments);
    RUN(test_election_basic);
    RUN(test_election_proclaim);
    RUN(test_election_resign);
    RUN(test_election_proclaim_fenced);
    RUN(test_election_fifo);
    RUN(test_election_timeout);
    RUN(test_election_observe);
    RUN(test_election_observe_noleader);
    RUN(test_semaphore_limit);
    RUN(test_semaphore_permits);
    RUN(test_semaphore_try);
    RUN(test_semaphore_timeout);
    RUN(test_rw_readers);
    RUN(test_rw_writer_fair);
    etcdlock_shutdown(2000);
    return summary("test_recipes");
}
