/* Queue inspection (etcdlock_inspect) and the value an acquire attaches
 * (etcdlock_lock_acquire_with_value), checked against what etcdctl shows. */
#include "check.h"
#include <pthread.h>

struct waiter {
    etcdlock_client *client;
    const char *name;
    const char *value;
    int64_t token;
    int rc;
};

static void *wait_and_release(void *arg) {
    struct waiter *w = arg;
    etcdlock_lock *l = NULL;
    w->rc = etcdlock_lock_acquire_with_value(w->client, w->name, 10, 20000, NULL, (const uint8_t *)w->value,
                                             strlen(w->value), &l);
    if (l) {
        w->token = etcdlock_lock_fencing_token(l);
        etcdlock_lock_release(l);
        etcdlock_lock_free(l);
    }
    return NULL;
}

/* The queue under `prefix` as etcdctl shows it, oldest first: create revisions, leases and values. */
static int etcdctl_queue(const char *prefix, int64_t *revs, int64_t *leases, char (*values)[64], int max) {
    char args[400];
    snprintf(args, sizeof args, "get --prefix --sort-by=CREATE --order=ASCEND -w fields '%s'", prefix);
    char *out = etcdctl(args);
    if (!out) return -1;
    int n = -1;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        long long v;
        char s[64];
        if (sscanf(line, "\"CreateRevision\" : %lld", &v) == 1 && n + 1 < max) revs[++n] = v;
        else if (n >= 0 && sscanf(line, "\"Lease\" : %lld", &v) == 1) leases[n] = v;
        else if (n >= 0 && strncmp(line, "\"Value\" : \"", 11) == 0) {
            snprintf(s, sizeof s, "%s", line + 11);
            char *q = strrchr(s, '"');
            if (q) *q = 0;
            snprintf(values[n], 64, "%s", s);
        }
    }
    free(out);
    return n + 1;
}

/* covers: LOCK-INSPECT-001 */
static void test_inspect_matches_etcdctl(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "inspect");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock_state *st = NULL;
    CHECK_RC(etcdlock_inspect(a, name, &st), ETCDLOCK_OK);
    CHECK(st && st->n_entries == 0);
    etcdlock_lock_state_free(st);

    etcdlock_lock *holder = NULL;
    CHECK_RC(etcdlock_lock_acquire_with_value(a, name, 10, 5000, NULL, (const uint8_t *)"host-a pid 1", 12, &holder), ETCDLOCK_OK);
    struct waiter w[3] = {{b, name, "host-b pid 2", 0, -1}, {a, name, "host-a pid 3", 0, -1}, {b, name, "", 0, -1}};
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        pthread_create(&t[i], NULL, wait_and_release, &w[i]);
        for (int k = 0; k < 100 && count_keys(prefix) < i + 2; k++) sleep_ms(50);
        CHECK(count_keys(prefix) == i + 2);
    }

    st = NULL;
    CHECK_RC(etcdlock_inspect(b, name, &st), ETCDLOCK_OK);
    int64_t revs[8] = {0}, leases[8] = {0};
    char values[8][64] = {{0}};
    int n = etcdctl_queue(prefix, revs, leases, values, 8);
    CHECK(n == 4);
    if (st && n == 4 && st->n_entries == 4) {
        const char *want[4] = {"host-a pid 1", "host-b pid 2", "host-a pid 3", ""};
        CHECK(st->entries[0].fencing_token == etcdlock_lock_fencing_token(holder));
        for (int i = 0; i < 4; i++) {
            const etcdlock_queue_entry *e = &st->entries[i];
            CHECK(e->fencing_token == revs[i]);
            CHECK(e->lease == leases[i]);
            CHECK(e->value_len == strlen(want[i]) && memcmp(e->value, want[i], e->value_len) == 0);
            CHECK(strcmp(values[i], want[i]) == 0);
            CHECK(e->ttl_s > 0 && e->ttl_s <= 10);
            CHECK(e->key_len > strlen(prefix) && memcmp(e->key, prefix, strlen(prefix)) == 0);
        }
        CHECK(st->revision >= revs[3]);
    } else {
        CHECK(st && st->n_entries == 4);
    }
    etcdlock_lock_state_free(st);

    /* Served in that order, with the tokens inspect showed. */
    CHECK_RC(etcdlock_lock_release(holder), ETCDLOCK_OK);
    etcdlock_lock_free(holder);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        CHECK_RC(w[i].rc, ETCDLOCK_OK);
        CHECK(w[i].token == revs[i + 1]);
    }
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

/* covers: LOCK-VALUE-001 */
static void test_bad_value_and_name_refused(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "bigvalue");
    snprintf(prefix, sizeof prefix, "%s/", name);
    static uint8_t big[4097];
    memset(big, 'x', sizeof big);
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire_with_value(c, name, 10, 5000, NULL, big, sizeof big, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "at most 4096 bytes") != NULL);
    CHECK(l == NULL);
    CHECK_RC(etcdlock_lock_acquire_with_value(c, name, 10, 5000, NULL, NULL, 3, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(count_keys(prefix) == 0);
    etcdlock_lock_state *st = NULL;
    CHECK_RC(etcdlock_inspect(c, "", &st), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_inspect(c, "jobs/", &st), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_inspect(c, NULL, &st), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_inspect(c, name, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(st == NULL);
    etcdlock_lock_state_free(NULL);
    etcdlock_client_free(c);
}

/* A semaphore permit (permits > 0) or a write lock taken on a thread, held until released. */
struct third {
    etcdlock_client *client;
    const char *name;
    uint32_t permits;
    int rc;
};

static void *take_and_release(void *arg) {
    struct third *t = arg;
    etcdlock_lock *l = NULL;
    t->rc = t->permits ? etcdlock_semaphore_acquire(t->client, t->name, t->permits, 10, 20000, NULL, &l)
                       : etcdlock_rwlock_write(t->client, t->name, 10, 20000, NULL, &l);
    if (l) {
        etcdlock_lock_release(l);
        etcdlock_lock_free(l);
    }
    return NULL;
}

/* Waits up to 5 s for `n` keys under `name`/. */
static void queued(const char *name, int n) {
    char prefix[140];
    snprintf(prefix, sizeof prefix, "%s/", name);
    for (int k = 0; k < 100 && count_keys(prefix) < n; k++) sleep_ms(50);
    CHECK(count_keys(prefix) == n);
}

static int mode_is(const etcdlock_lock_state *st, size_t i, const char *mode) {
    return st && i < st->n_entries && strcmp(st->entries[i].mode, mode) == 0;
}

/* covers: LOCK-INSPECT-002 */
static void test_inspect_every_holder_of_each_kind(void) {
    etcdlock_client *c = connect_client();
    char name[128];
    unique(name, sizeof name, "inspect-slots");
    etcdlock_lock *p1 = NULL, *p2 = NULL;
    CHECK_RC(etcdlock_semaphore_acquire(c, name, 2, 10, 5000, NULL, &p1), ETCDLOCK_OK);
    CHECK_RC(etcdlock_semaphore_acquire(c, name, 2, 10, 5000, NULL, &p2), ETCDLOCK_OK);
    struct third t = {c, name, 2, -1};
    pthread_t th;
    pthread_create(&th, NULL, take_and_release, &t);
    queued(name, 3);
    etcdlock_lock_state *st = NULL;
    CHECK_RC(etcdlock_inspect(c, name, &st), ETCDLOCK_OK);
    CHECK(st && st->n_entries == 3 && st->n_holders == 2);
    CHECK(mode_is(st, 0, "permits=2") && mode_is(st, 1, "permits=2") && mode_is(st, 2, "permits=2"));
    CHECK(st && st->n_entries == 3 && st->entries[0].value_len == 0);
    etcdlock_lock_state_free(st);
    etcdlock_lock_release(p1);
    pthread_join(th, NULL);
    CHECK_RC(t.rc, ETCDLOCK_OK);
    etcdlock_lock_release(p2);
    etcdlock_lock_free(p1);
    etcdlock_lock_free(p2);

    unique(name, sizeof name, "inspect-cfg");
    etcdlock_lock *r1 = NULL, *r2 = NULL;
    CHECK_RC(etcdlock_rwlock_read(c, name, 10, 5000, NULL, &r1), ETCDLOCK_OK);
    CHECK_RC(etcdlock_rwlock_read(c, name, 10, 5000, NULL, &r2), ETCDLOCK_OK);
    struct third w = {c, name, 0, -1};
    pthread_create(&th, NULL, take_and_release, &w);
    queued(name, 3);
    st = NULL;
    CHECK_RC(etcdlock_inspect(c, name, &st), ETCDLOCK_OK);
    CHECK(st && st->n_entries == 3 && st->n_holders == 2);
    CHECK(mode_is(st, 0, "read") && mode_is(st, 1, "read") && mode_is(st, 2, "write"));
    etcdlock_lock_state_free(st);
    etcdlock_lock_release(r1);
    etcdlock_lock_release(r2);
    pthread_join(th, NULL);
    CHECK_RC(w.rc, ETCDLOCK_OK);
    etcdlock_lock_free(r1);
    etcdlock_lock_free(r2);

    unique(name, sizeof name, "inspect-svc");
    etcdlock_lock *leader = NULL;
    CHECK_RC(etcdlock_election_campaign(c, name, 10, 5000, NULL, (const uint8_t *)"node-1", 6, &leader), ETCDLOCK_OK);
    st = NULL;
    CHECK_RC(etcdlock_inspect(c, name, &st), ETCDLOCK_OK);
    CHECK(st && st->n_entries == 1 && st->n_holders == 1 && mode_is(st, 0, ""));
    CHECK(st && st->n_entries == 1 && st->entries[0].value_len == 6 && memcmp(st->entries[0].value, "node-1", 6) == 0);
    etcdlock_lock_state_free(st);
    CHECK_RC(etcdlock_lock_release(leader), ETCDLOCK_OK);
    etcdlock_lock_free(leader);
    etcdlock_client_free(c);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_inspect_matches_etcdctl);
    RUN(test_bad_value_and_name_refused);
    RUN(test_inspect_every_holder_of_each_kind);
    etcdlock_shutdown(2000);
    return summary("test_inspect");
}
