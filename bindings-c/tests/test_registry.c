/* The service registry through the C API (etcdlock_register, etcdlock_registration_*,
 * etcdlock_instances, etcdlock_discover, etcdlock_discovery_*, etcdlock_grpc_endpoint*),
 * against the test etcd, with etcdctl as the witness of what is left in etcd (keys and leases). */
#include "check.h"
#include <pthread.h>

#define TTL 10

static const uint8_t *u8(const char *s) { return (const uint8_t *)s; }

static int same(const uint8_t *p, size_t n, const char *s) {
    return p && n == strlen(s) && memcmp(p, s, n) == 0;
}

/* `<service>/`, for count_keys. */
static void prefix_of(char *buf, size_t len, const char *service) { snprintf(buf, len, "%s/", service); }

/* The IDs of the leases etcd has now (`etcdctl lease list`), at most `cap`; the count or -1. */
static int lease_list(int64_t *ids, int cap) {
    char *out = etcdctl("lease list");
    if (!out) return -1;
    int n = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned long long id;
        char rest;
        if (strncmp(line, "found ", 6) != 0 && sscanf(line, "%llx%c", &id, &rest) == 1 && n < cap) ids[n++] = (int64_t)id;
    }
    free(out);
    return n;
}

#define MAX_LEASES 4096
static int64_t g_before[MAX_LEASES];
static int g_n_before;

/* Remembers the leases etcd has now. */
static void leases_snapshot(void) { g_n_before = lease_list(g_before, MAX_LEASES); }

/* How many leases etcd has now that it did not have at leases_snapshot (leases of other
 * programs may expire meanwhile: only new ones count); the first in *first (nullable). */
static int new_leases(int64_t *first) {
    static int64_t now[MAX_LEASES];
    int n = lease_list(now, MAX_LEASES), fresh = 0;
    if (n < 0 || g_n_before < 0) return -1;
    for (int i = 0; i < n; i++) {
        int known = 0;
        for (int j = 0; j < g_n_before && !known; j++) known = now[i] == g_before[j];
        if (!known && fresh++ == 0 && first) *first = now[i];
    }
    return fresh;
}

/* The instances of `service` read through `c` (NULL on failure, a failed check). */
static etcdlock_instance_set *instances_of(etcdlock_client *c, const char *service) {
    etcdlock_instance_set *set = NULL;
    CHECK_RC(etcdlock_instances(c, service, &set), ETCDLOCK_OK);
    return set;
}

/* Whether `set` has exactly the names in `names` (a NULL-terminated list), in that order. */
static int names_are(const etcdlock_instance_set *set, const char *const *names) {
    if (!set) return 0;
    size_t n = 0;
    for (; names[n]; n++)
        if (n >= set->n_instances || !same(set->instances[n].name, set->instances[n].name_len, names[n])) return 0;
    return n == set->n_instances;
}

/* The next event of `reg` within `ms`: its status in *rc. */
static etcdlock_registration_event next_event(etcdlock_registration *reg, int64_t ms, int *rc) {
    etcdlock_registration_event e = {-1, -1, -1};
    *rc = etcdlock_registration_next_event(reg, ms, &e);
    return e;
}

/* The next set of `d` within `ms`: its status in *rc (NULL unless OK). */
static etcdlock_instance_set *next_set(etcdlock_discovery *d, int64_t ms, int *rc) {
    etcdlock_instance_set *set = (etcdlock_instance_set *)&set; /* not NULL: must be overwritten */
    *rc = etcdlock_discovery_next(d, ms, &set);
    if (set == (etcdlock_instance_set *)&set) return NULL;
    CHECK(*rc == ETCDLOCK_OK); /* written only on success */
    return set;
}

static int is_lost_reason(int r) {
    return r == ETCDLOCK_LOST_EXPIRED || r == ETCDLOCK_LOST_REVOKED || r == ETCDLOCK_LOST_KEY_DELETED;
}

/* covers: REG-BASIC-001 (register, update, a taken name, replace and TakenOver, close; no key
 * and no lease left) */
static void test_reg_basic(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char svc[128], prefix[140];
    unique(svc, sizeof svc, "reg-basic");
    prefix_of(prefix, sizeof prefix, svc);
    leases_snapshot();
    CHECK(g_n_before >= 0);

    etcdlock_registration *reg = NULL;
    CHECK_RC(etcdlock_register(a, svc, "node-1", u8("v1"), 2, TTL, 0, &reg), ETCDLOCK_OK);
    if (!reg) goto done;
    CHECK(etcdlock_registration_is_registered(reg));
    int64_t lease = etcdlock_registration_lease_id(reg);
    CHECK(lease != 0);
    size_t klen = 0;
    const uint8_t *key = etcdlock_registration_key(reg, &klen);
    char want_key[200];
    snprintf(want_key, sizeof want_key, "%s/node-1", svc);
    CHECK(same(key, klen, want_key));
    CHECK(etcdlock_registration_key(reg, NULL) == key);

    /* Listed from another client, with its value and lease; etcd has the key on that lease. */
    etcdlock_instance_set *set = instances_of(b, svc);
    static const char *const node1[] = {"node-1", NULL};
    CHECK(names_are(set, node1));
    if (set && set->n_instances == 1) {
        CHECK(same(set->instances[0].value, set->instances[0].value_len, "v1"));
        CHECK(set->instances[0].lease == lease);
        CHECK(set->instances[0].mod_revision > 0 && set->revision >= set->instances[0].mod_revision);
    }
    etcdlock_instance_set_free(set);
    int64_t fresh = 0;
    CHECK(new_leases(&fresh) == 1 && fresh == lease);

    /* An update shows, at the revision it returns. */
    int64_t rev = -7;
    CHECK_RC(etcdlock_registration_update(reg, u8("v2"), 2, &rev), ETCDLOCK_OK);
    CHECK(rev > 0);
    set = instances_of(b, svc);
    CHECK(set && set->n_instances == 1 && same(set->instances[0].value, set->instances[0].value_len, "v2") &&
          set->instances[0].mod_revision == rev && set->instances[0].lease == lease);
    etcdlock_instance_set_free(set);
    CHECK_RC(etcdlock_registration_update(reg, NULL, 0, NULL), ETCDLOCK_OK); /* empty; no revision wanted */
    CHECK_RC(etcdlock_registration_update(reg, u8("v2"), 2, NULL), ETCDLOCK_OK);

    /* The same name from another client: WOULD_BLOCK, nothing of it left (no key, no lease). */
    etcdlock_registration *sentinel = (etcdlock_registration *)&rev, *other = sentinel;
    CHECK_RC(etcdlock_register(b, svc, "node-1", u8("other"), 5, TTL, 0, &other), ETCDLOCK_E_WOULD_BLOCK);
    CHECK(other == sentinel);
    char msg[512];
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "node-1") != NULL);
    CHECK(new_leases(NULL) == 1); /* only the first registration's */
    set = instances_of(b, svc);
    CHECK(names_are(set, node1) && set && set->instances[0].lease == lease &&
          same(set->instances[0].value, set->instances[0].value_len, "v2"));
    etcdlock_instance_set_free(set);
    CHECK(count_keys(prefix) == 1);

    /* With replace: the taker has it, the first gets TAKEN_OVER and may not write any more. */
    etcdlock_registration *taker = NULL;
    CHECK_RC(etcdlock_register(b, svc, "node-1", u8("taker"), 5, TTL, ETCDLOCK_REGISTER_REPLACE, &taker), ETCDLOCK_OK);
    int rc;
    etcdlock_registration_event e = next_event(reg, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(e.kind == ETCDLOCK_REGISTRATION_TAKEN_OVER && e.reason == 0 && e.lease == 0);
    CHECK(!etcdlock_registration_is_registered(reg));
    CHECK(etcdlock_registration_lease_id(reg) == 0);
    CHECK(taker && etcdlock_registration_is_registered(taker));
    rev = -7;
    CHECK_RC(etcdlock_registration_update(reg, u8("v3"), 2, &rev), ETCDLOCK_E_NOT_HELD);
    CHECK(rev == -7);
    set = instances_of(b, svc);
    CHECK(names_are(set, node1) && set && same(set->instances[0].value, set->instances[0].value_len, "taker") &&
          taker && set->instances[0].lease == etcdlock_registration_lease_id(taker));
    etcdlock_instance_set_free(set);
    /* TAKEN_OVER was the last event: the events have ended. */
    e = next_event(reg, 1000, &rc);
    CHECK_RC(rc, ETCDLOCK_E_CLOSED);
    CHECK(e.kind == -1); /* untouched */

    /* Closing the ended one leaves the taker's key; closing the taker leaves nothing. */
    CHECK_RC(etcdlock_registration_close(reg), ETCDLOCK_OK);
    set = instances_of(b, svc);
    CHECK(names_are(set, node1));
    etcdlock_instance_set_free(set);
    CHECK_RC(etcdlock_registration_close(taker), ETCDLOCK_OK);
    CHECK(!etcdlock_registration_is_registered(taker) && etcdlock_registration_lease_id(taker) == 0);
    set = instances_of(b, svc);
    CHECK(set && set->n_instances == 0 && set->revision > 0);
    etcdlock_instance_set_free(set);
    CHECK(count_keys(prefix) == 0);
    CHECK(new_leases(NULL) == 0); /* both leases revoked when close returned */

    /* Closed: idempotent; no events, no writes. */
    CHECK_RC(etcdlock_registration_close(taker), ETCDLOCK_OK);
    e = next_event(taker, 0, &rc);
    CHECK_RC(rc, ETCDLOCK_E_CLOSED);
    CHECK_RC(etcdlock_registration_update(taker, u8("late"), 4, NULL), ETCDLOCK_E_NOT_HELD);
    CHECK(count_keys(prefix) == 0);
    etcdlock_registration_free(taker);
    etcdlock_registration_free(reg);
done:
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

struct blocked_event {
    etcdlock_registration *reg;
    int rc;
    etcdlock_registration_event e;
};

/* A next_event on another thread, bounded (5 s): whatever ends it first is checked. */
static void *next_event_blocking(void *arg) {
    struct blocked_event *n = arg;
    n->rc = etcdlock_registration_next_event(n->reg, 5000, &n->e);
    return NULL;
}

/* covers: REG-BASIC-001 (a close from another thread ends a waiting next_event; a free without
 * close deregisters in the background; the value is any bytes, a gRPC endpoint included) */
static void test_reg_close_and_free(void) {
    etcdlock_client *c = connect_client();
    char svc[128], prefix[140];
    unique(svc, sizeof svc, "reg-free");
    prefix_of(prefix, sizeof prefix, svc);
    etcdlock_registration *reg = NULL;
    CHECK_RC(etcdlock_register(c, svc, "n1", NULL, 0, TTL, 0, &reg), ETCDLOCK_OK);
    if (!reg) { etcdlock_client_free(c); return; }
    int rc;
    etcdlock_registration_event e = next_event(reg, 200, &rc);
    CHECK_RC(rc, ETCDLOCK_E_TIMEOUT); /* nothing happened */
    CHECK(e.kind == -1);

    struct blocked_event n = {reg, -1, {-1, -1, -1}};
    pthread_t t;
    pthread_create(&t, NULL, next_event_blocking, &n);
    sleep_ms(300);
    double t0 = now_ms();
    CHECK_RC(etcdlock_registration_close(reg), ETCDLOCK_OK);
    pthread_join(t, NULL);
    CHECK(now_ms() - t0 < 3000);
    CHECK_RC(n.rc, ETCDLOCK_E_CLOSED);
    CHECK(n.e.kind == -1);
    CHECK(count_keys(prefix) == 0);
    etcdlock_registration_free(reg);

    /* Freed without close: gone in the background, soon. A value with NUL bytes is kept. */
    static const uint8_t bin[] = {'a', 0, 'b', 0xff};
    reg = NULL;
    CHECK_RC(etcdlock_register(c, svc, "n2", bin, sizeof bin, TTL, 0, &reg), ETCDLOCK_OK);
    etcdlock_instance_set *set = instances_of(c, svc);
    CHECK(set && set->n_instances == 1 && set->instances[0].value_len == sizeof bin &&
          memcmp(set->instances[0].value, bin, sizeof bin) == 0);
    etcdlock_instance_set_free(set);
    etcdlock_registration_free(reg);
    int left = -1;
    for (int i = 0; i < 100 && (left = count_keys(prefix)) != 0; i++) sleep_ms(50);
    CHECK(left == 0);

    /* A gRPC endpoint value, read back from the listing. */
    char *v = NULL;
    CHECK_RC(etcdlock_grpc_endpoint("10.0.0.7:50051", &v), ETCDLOCK_OK);
    CHECK(v && strcmp(v, "{\"Op\":0,\"Addr\":\"10.0.0.7:50051\",\"Metadata\":null}") == 0);
    reg = NULL;
    CHECK_RC(etcdlock_register(c, svc, "grpc", u8(v ? v : ""), v ? strlen(v) : 0, TTL, 0, &reg), ETCDLOCK_OK);
    etcdlock_string_free(v);
    set = instances_of(c, svc);
    char *addr = NULL;
    CHECK(set && set->n_instances == 1);
    if (set && set->n_instances == 1)
        CHECK_RC(etcdlock_grpc_endpoint_addr(set->instances[0].value, set->instances[0].value_len, &addr), ETCDLOCK_OK);
    CHECK(addr && strcmp(addr, "10.0.0.7:50051") == 0);
    etcdlock_string_free(addr);
    etcdlock_instance_set_free(set);
    CHECK_RC(etcdlock_registration_close(reg), ETCDLOCK_OK);
    etcdlock_registration_free(reg);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(c);
}

/* covers: REG-BASIC-001 (gRPC endpoint values: escapes, Go's form with metadata, not an endpoint) */
static void test_grpc_endpoint(void) {
    char *v = NULL, *addr = (char *)"untouched";
    CHECK_RC(etcdlock_grpc_endpoint("h\"q\\:1", &v), ETCDLOCK_OK);
    CHECK(v && strcmp(v, "{\"Op\":0,\"Addr\":\"h\\\"q\\\\:1\",\"Metadata\":null}") == 0);
    CHECK_RC(etcdlock_grpc_endpoint_addr(u8(v ? v : ""), v ? strlen(v) : 0, &addr), ETCDLOCK_OK);
    CHECK(addr && strcmp(addr, "h\"q\\:1") == 0);
    etcdlock_string_free(addr);
    etcdlock_string_free(v);
    const char go[] = "{\"Op\":0,\"Addr\":\"127.0.0.1:7000\",\"Metadata\":{\"zone\":\"a\"}}";
    addr = NULL;
    CHECK_RC(etcdlock_grpc_endpoint_addr(u8(go), strlen(go), &addr), ETCDLOCK_OK);
    CHECK(addr && strcmp(addr, "127.0.0.1:7000") == 0);
    etcdlock_string_free(addr);
    /* Not an endpoint: OK and NULL (a delete update, a plain value, an empty one, a NUL inside). */
    const char del[] = "{\"Op\":1,\"Addr\":\"127.0.0.1:7000\",\"Metadata\":null}";
    const char nul[] = "{\"Op\":0,\"Addr\":\"a\\u0000b\",\"Metadata\":null}";
    const char *not_endpoints[] = {del, "plain value", "", nul};
    for (size_t i = 0; i < sizeof not_endpoints / sizeof *not_endpoints; i++) {
        addr = (char *)"untouched";
        CHECK_RC(etcdlock_grpc_endpoint_addr(u8(not_endpoints[i]), strlen(not_endpoints[i]), &addr), ETCDLOCK_OK);
        CHECK(addr == NULL);
    }
    addr = (char *)"untouched";
    CHECK_RC(etcdlock_grpc_endpoint_addr(NULL, 0, &addr), ETCDLOCK_OK);
    CHECK(addr == NULL);
}

/* covers: REG-RECOVER-001 */
static void test_reg_recover(void) {
    etcdlock_client *c = connect_client();
    char svc[128], prefix[140];
    unique(svc, sizeof svc, "reg-recover");
    prefix_of(prefix, sizeof prefix, svc);
    etcdlock_registration *reg = NULL;
    CHECK_RC(etcdlock_register(c, svc, "node-1", u8("v1"), 2, 5, 0, &reg), ETCDLOCK_OK);
    if (!reg) { etcdlock_client_free(c); return; }
    int64_t first = etcdlock_registration_lease_id(reg);
    CHECK(first != 0);

    /* Its lease revoked from elsewhere: lost, then registered again on a new lease. */
    double t0 = now_ms();
    CHECK(ctl("lease revoke %" PRIx64, (uint64_t)first));
    int rc;
    etcdlock_registration_event e = next_event(reg, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(e.kind == ETCDLOCK_REGISTRATION_LOST && is_lost_reason(e.reason) && e.lease == 0);
    printf("# lost after an external revoke, reason %d\n", e.reason);
    e = next_event(reg, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(e.kind == ETCDLOCK_REGISTRATION_RESTORED && e.reason == 0);
    CHECK(now_ms() - t0 < 5000);
    int64_t second = e.lease;
    CHECK(second != 0 && second != first);
    CHECK(etcdlock_registration_lease_id(reg) == second);
    CHECK(etcdlock_registration_is_registered(reg));
    etcdlock_instance_set *set = instances_of(c, svc);
    CHECK(set && set->n_instances == 1 && same(set->instances[0].name, set->instances[0].name_len, "node-1") &&
          set->instances[0].lease == second && same(set->instances[0].value, set->instances[0].value_len, "v1"));
    etcdlock_instance_set_free(set);
    CHECK_RC(etcdlock_registration_update(reg, u8("v2"), 2, NULL), ETCDLOCK_OK); /* writes again */

    /* Its key deleted by hand: lost (key_deleted), back on a new lease with the latest value. */
    CHECK(ctl("del '%s/node-1'", svc));
    e = next_event(reg, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(e.kind == ETCDLOCK_REGISTRATION_LOST && e.reason == ETCDLOCK_LOST_KEY_DELETED);
    e = next_event(reg, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(e.kind == ETCDLOCK_REGISTRATION_RESTORED && e.lease != 0 && e.lease != second);
    set = instances_of(c, svc);
    CHECK(set && set->n_instances == 1 && set->instances[0].lease == e.lease &&
          same(set->instances[0].value, set->instances[0].value_len, "v2"));
    etcdlock_instance_set_free(set);
    e = next_event(reg, 300, &rc);
    CHECK_RC(rc, ETCDLOCK_E_TIMEOUT); /* nothing more */

    CHECK_RC(etcdlock_registration_close(reg), ETCDLOCK_OK);
    etcdlock_registration_free(reg);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(c);
}

/* covers: DISC-BASIC-001 */
static void test_discover_basic(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    char svc[128], sub[200];
    unique(svc, sizeof svc, "disc");
    etcdlock_discovery *d = NULL;
    etcdlock_registration *r1 = NULL, *r2 = NULL;
    CHECK_RC(etcdlock_discover(b, svc, &d), ETCDLOCK_OK);
    if (!d) goto done;
    int rc;
    /* The current set first: empty, at the head revision. */
    etcdlock_instance_set *set = next_set(d, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(set && set->n_instances == 0 && set->revision > 0);
    int64_t last_rev = set ? set->revision : 0;
    etcdlock_instance_set_free(set);
    set = next_set(d, 300, &rc);
    CHECK_RC(rc, ETCDLOCK_E_TIMEOUT); /* no change */
    CHECK(set == NULL);

    /* One set per change, in name order, each at its change's revision. */
    CHECK_RC(etcdlock_register(a, svc, "n2", u8("b"), 1, TTL, 0, &r2), ETCDLOCK_OK);
    set = next_set(d, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    static const char *const only_n2[] = {"n2", NULL}, *const both[] = {"n1", "n2", NULL};
    CHECK(names_are(set, only_n2));
    CHECK(set && set->n_instances == 1 && set->revision == set->instances[0].mod_revision && set->revision > last_rev &&
          r2 && set->instances[0].lease == etcdlock_registration_lease_id(r2) && same(set->instances[0].value, set->instances[0].value_len, "b"));
    etcdlock_instance_set_free(set);
    CHECK_RC(etcdlock_register(a, svc, "n1", u8("a"), 1, TTL, 0, &r1), ETCDLOCK_OK);
    set = next_set(d, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(names_are(set, both));
    if (set && set->n_instances == 2) {
        CHECK(set->revision == set->instances[0].mod_revision); /* n1 is the latest change */
        CHECK(set->instances[1].mod_revision < set->revision);
        CHECK(same(set->instances[0].value, set->instances[0].value_len, "a"));
        last_rev = set->revision;
    }
    etcdlock_instance_set_free(set);

    /* A next cut off by its timeout with no change: TIMEOUT; a change made after it is still
     * reported, once. */
    set = next_set(d, 0, &rc);
    CHECK_RC(rc, ETCDLOCK_E_TIMEOUT);
    set = next_set(d, 100, &rc);
    CHECK_RC(rc, ETCDLOCK_E_TIMEOUT);
    int64_t rev = 0;
    CHECK_RC(etcdlock_registration_update(r1, u8("a2"), 2, &rev), ETCDLOCK_OK);
    /* Calls cut off while the change arrives (1 ms each, bounded) lose nothing. */
    set = NULL;
    for (int i = 0; i < 20 && !set; i++) {
        set = next_set(d, 1, &rc);
        CHECK(rc == ETCDLOCK_OK || rc == ETCDLOCK_E_TIMEOUT);
    }
    if (!set) {
        set = next_set(d, 5000, &rc);
        CHECK_RC(rc, ETCDLOCK_OK);
    }
    CHECK(names_are(set, both));
    CHECK(set && set->revision == rev && set->revision > last_rev && set->n_instances == 2 &&
          same(set->instances[0].value, set->instances[0].value_len, "a2") && set->instances[0].mod_revision == rev);
    etcdlock_instance_set_free(set);
    set = next_set(d, 300, &rc);
    CHECK_RC(rc, ETCDLOCK_E_TIMEOUT); /* reported once */

    /* A change to the second instance: the set is at its revision, the first one older. */
    CHECK_RC(etcdlock_registration_update(r2, u8("b2"), 2, &rev), ETCDLOCK_OK);
    set = next_set(d, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(names_are(set, both));
    CHECK(set && set->n_instances == 2 && set->revision == rev && set->instances[1].mod_revision == rev &&
          set->instances[0].mod_revision < rev && same(set->instances[1].value, set->instances[1].value_len, "b2"));
    etcdlock_instance_set_free(set);

    /* A deregistration, at the delete's revision (after every remaining put); a key below an
     * instance is no instance (no set). */
    CHECK_RC(etcdlock_registration_close(r1), ETCDLOCK_OK);
    set = next_set(d, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(names_are(set, only_n2));
    CHECK(set && set->n_instances == 1 && set->revision > rev && set->instances[0].mod_revision == rev);
    etcdlock_instance_set_free(set);
    snprintf(sub, sizeof sub, "%s/n2/sub", svc);
    CHECK_RC(etcdlock_put(a, u8(sub), strlen(sub), u8("x"), 1, NULL), ETCDLOCK_OK);
    set = next_set(d, 300, &rc);
    CHECK_RC(rc, ETCDLOCK_E_TIMEOUT);
    CHECK_RC(etcdlock_registration_close(r2), ETCDLOCK_OK);
    set = next_set(d, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(set && set->n_instances == 0);
    etcdlock_instance_set_free(set);
    CHECK_RC(etcdlock_delete(a, u8(sub), strlen(sub)), ETCDLOCK_OK);

    /* Closed: every later next is CLOSED (a waiting one too: test_discover_close). */
    etcdlock_discovery_close(d);
    set = next_set(d, 1000, &rc);
    CHECK_RC(rc, ETCDLOCK_E_CLOSED);
    etcdlock_discovery_close(d); /* idempotent */
done:
    etcdlock_registration_free(r1);
    etcdlock_registration_free(r2);
    etcdlock_discovery_free(d);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

struct blocked_next {
    etcdlock_discovery *d;
    int rc;
    etcdlock_instance_set *out;
};

/* A discovery_next on another thread, bounded (5 s). */
static void *discovery_next_blocking(void *arg) {
    struct blocked_next *n = arg;
    n->rc = etcdlock_discovery_next(n->d, 5000, &n->out);
    return NULL;
}

/* covers: DISC-BASIC-001 (a discovery's waiting next ends with CLOSED when it is closed from
 * another thread, or when its client is freed) */
static void test_discover_close(void) {
    etcdlock_client *c = connect_client(), *w = connect_client();
    char svc[128];
    unique(svc, sizeof svc, "disc-close");
    etcdlock_discovery *d = NULL;
    CHECK_RC(etcdlock_discover(c, svc, &d), ETCDLOCK_OK);
    int rc;
    etcdlock_instance_set *set = next_set(d, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    etcdlock_instance_set_free(set);
    struct blocked_next n = {d, -1, (etcdlock_instance_set *)&n};
    pthread_t t;
    pthread_create(&t, NULL, discovery_next_blocking, &n);
    sleep_ms(300);
    double t0 = now_ms();
    etcdlock_discovery_close(d);
    pthread_join(t, NULL);
    CHECK(now_ms() - t0 < 3000);
    CHECK_RC(n.rc, ETCDLOCK_E_CLOSED);
    CHECK(n.out == (etcdlock_instance_set *)&n); /* untouched */
    etcdlock_discovery_free(d);

    /* Its client freed while a next waits: CLOSED. */
    d = NULL;
    CHECK_RC(etcdlock_discover(w, svc, &d), ETCDLOCK_OK);
    set = next_set(d, 5000, &rc);
    etcdlock_instance_set_free(set);
    n = (struct blocked_next){d, -1, (etcdlock_instance_set *)&n};
    pthread_create(&t, NULL, discovery_next_blocking, &n);
    sleep_ms(300);
    etcdlock_client_free(w);
    t0 = now_ms();
    pthread_join(t, NULL);
    CHECK(now_ms() - t0 < 2000);
    CHECK_RC(n.rc, ETCDLOCK_E_CLOSED);
    set = next_set(d, 100, &rc);
    CHECK_RC(rc, ETCDLOCK_E_CLOSED);
    etcdlock_discovery_free(d);
    etcdlock_client_free(c);
}

/* The value of the sample `name` (with its labels) in Prometheus text, or -1. */
static double metric(etcdlock_client *c, const char *name) {
    char *text = NULL;
    CHECK_RC(etcdlock_client_metrics_text(c, &text), ETCDLOCK_OK);
    double v = -1;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        /* The sample without its client="..." label (the first; these names hold no quote). */
        char line[512], *label;
        snprintf(line, sizeof line, "%.*s", (int)(strchr(l, '\n') ? strchr(l, '\n') - l : (long)strlen(l)), l);
        if ((label = strstr(line, "{client=\"")) != NULL) {
            char *end = strchr(label + 9, '"');
            if (!end) continue;
            if (end[1] == ',') memmove(label + 1, end + 2, strlen(end + 2) + 1);
            else memmove(label, end + 2, strlen(end + 2) + 1);
        }
        size_t len = strlen(name);
        if (strncmp(line, name, len) == 0 && line[len] == ' ') {
            v = atof(line + len + 1);
            break;
        }
    }
    if (v < 0) fprintf(stderr, "  no sample %s\n", name);
    etcdlock_string_free(text);
    return v;
}

static const char *reason_name(int reason) {
    switch (reason) {
    case ETCDLOCK_LOST_EXPIRED: return "expired";
    case ETCDLOCK_LOST_REVOKED: return "revoked";
    case ETCDLOCK_LOST_KEY_DELETED: return "key_deleted";
    default: return "?";
    }
}

/* covers: REG-METRICS-001 */
static void test_reg_metrics(void) {
    etcdlock_client *c = connect_client(), *w = connect_client();
    char svc[128], sample[160];
    unique(svc, sizeof svc, "reg-metrics");
    CHECK(metric(c, "etcdlock_registrations_alive") == 0);
    etcdlock_registration *reg = NULL, *r2 = NULL;
    CHECK_RC(etcdlock_register(c, svc, "n1", u8("v"), 1, TTL, 0, &reg), ETCDLOCK_OK);
    CHECK(metric(c, "etcdlock_registrations_alive") == 1);
    CHECK(metric(w, "etcdlock_registrations_alive") == 0); /* per client */

    /* Snapshots returned by discoveries are counted, for the discovering client. */
    etcdlock_discovery *d = NULL;
    CHECK_RC(etcdlock_discover(w, svc, &d), ETCDLOCK_OK);
    CHECK(metric(w, "etcdlock_discovery_snapshots_total") == 0);
    int rc;
    etcdlock_instance_set *set = next_set(d, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    etcdlock_instance_set_free(set);
    CHECK(metric(w, "etcdlock_discovery_snapshots_total") == 1);
    set = next_set(d, 200, &rc);
    CHECK_RC(rc, ETCDLOCK_E_TIMEOUT);
    CHECK(metric(w, "etcdlock_discovery_snapshots_total") == 1); /* a timeout returns none */
    CHECK_RC(etcdlock_register(c, svc, "n2", u8("v"), 1, TTL, 0, &r2), ETCDLOCK_OK);
    CHECK(metric(c, "etcdlock_registrations_alive") == 2);
    set = next_set(d, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    etcdlock_instance_set_free(set);
    CHECK(metric(w, "etcdlock_discovery_snapshots_total") == 2);
    CHECK(metric(c, "etcdlock_discovery_snapshots_total") == 0);

    /* A registration lost to an external revoke and registered again: counted by the reason
     * its LOST event gave; alive again once restored. */
    int64_t lease = reg ? etcdlock_registration_lease_id(reg) : 0;
    CHECK(ctl("lease revoke %" PRIx64, (uint64_t)lease));
    etcdlock_registration_event e = next_event(reg, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(e.kind == ETCDLOCK_REGISTRATION_LOST && is_lost_reason(e.reason));
    int reason = e.reason;
    e = next_event(reg, 5000, &rc);
    CHECK_RC(rc, ETCDLOCK_OK);
    CHECK(e.kind == ETCDLOCK_REGISTRATION_RESTORED);
    static const int reasons[] = {ETCDLOCK_LOST_EXPIRED, ETCDLOCK_LOST_REVOKED, ETCDLOCK_LOST_KEY_DELETED};
    for (int i = 0; i < 3; i++) {
        snprintf(sample, sizeof sample, "etcdlock_reregistrations_total{reason=\"%s\"}", reason_name(reasons[i]));
        CHECK(metric(c, sample) == (reasons[i] == reason ? 1 : 0));
    }
    CHECK(metric(c, "etcdlock_registrations_alive") == 2);

    /* Closed (and freed without close): 0. */
    CHECK_RC(etcdlock_registration_close(reg), ETCDLOCK_OK);
    CHECK(metric(c, "etcdlock_registrations_alive") == 1);
    etcdlock_registration_free(r2);
    CHECK(metric(c, "etcdlock_registrations_alive") == 0);
    etcdlock_registration_free(reg);
    etcdlock_discovery_free(d);
    etcdlock_client_free(c);
    etcdlock_client_free(w);
}

/* A pointer no call may write (outputs are written only on success). */
static char g_sentinel;
#define never_written ((void *)&g_sentinel)

/* covers: REG-BASIC-001 (bad inputs, NULLs included: INVALID_ARGUMENT, outputs untouched,
 * nothing sent that stays) */
static void test_reg_bad_arguments(void) {
    const int E = ETCDLOCK_E_INVALID_ARGUMENT;
    etcdlock_client *c = connect_client();
    char svc[128], prefix[140], msg[512];
    unique(svc, sizeof svc, "reg-bad");
    prefix_of(prefix, sizeof prefix, svc);
    leases_snapshot();
    etcdlock_registration *sentinel = (etcdlock_registration *)never_written, *r = sentinel;
    static uint8_t big[4097];

    CHECK_RC(etcdlock_register(NULL, svc, "n", u8("v"), 1, TTL, 0, &r), E);
    CHECK_RC(etcdlock_register(c, NULL, "n", u8("v"), 1, TTL, 0, &r), E);
    CHECK_RC(etcdlock_register(c, svc, NULL, u8("v"), 1, TTL, 0, &r), E);
    CHECK_RC(etcdlock_register(c, svc, "n", u8("v"), 1, TTL, 0, NULL), E);
    CHECK_RC(etcdlock_register(c, svc, "n", NULL, 3, TTL, 0, &r), E);
    CHECK_RC(etcdlock_register(c, svc, "n", big, sizeof big, TTL, 0, &r), E);
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "4096") != NULL);
    CHECK_RC(etcdlock_register(c, svc, "n", u8("v"), 1, 0, 0, &r), E);
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "ttl_s") != NULL);
    CHECK_RC(etcdlock_register(c, svc, "n", u8("v"), 1, -5, 0, &r), E);
    CHECK_RC(etcdlock_register(c, svc, "n", u8("v"), 1, TTL, 2, &r), E);
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "flags") != NULL);
    CHECK_RC(etcdlock_register(c, svc, "n", u8("v"), 1, TTL, ETCDLOCK_REGISTER_REPLACE | 0x80, &r), E);
    /* Bad service and instance names. */
    char slash_svc[140];
    snprintf(slash_svc, sizeof slash_svc, "%s/", svc);
    const char *bad[][2] = {{"", "x"}, {slash_svc, "x"}, {svc, ""}, {svc, "a/b"}, {svc, "/"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_RC(etcdlock_register(c, bad[i][0], bad[i][1], u8("v"), 1, TTL, 0, &r), E);
    }
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "instance") != NULL);
    CHECK(r == sentinel);

    /* The registration's calls. */
    CHECK_RC(etcdlock_registration_update(NULL, u8("v"), 1, NULL), E);
    CHECK_RC(etcdlock_registration_next_event(NULL, 100, &(etcdlock_registration_event){0}), E);
    CHECK_RC(etcdlock_registration_close(NULL), E);
    CHECK(etcdlock_registration_lease_id(NULL) == 0);
    CHECK(!etcdlock_registration_is_registered(NULL));
    size_t len = 77;
    CHECK(etcdlock_registration_key(NULL, &len) == NULL && len == 77);
    etcdlock_registration_free(NULL);
    r = NULL;
    CHECK_RC(etcdlock_register(c, svc, "n", u8("v"), 1, TTL, 0, &r), ETCDLOCK_OK);
    if (r) {
        etcdlock_registration_event e = {-1, -1, -1};
        CHECK_RC(etcdlock_registration_next_event(r, 100, NULL), E);
        CHECK_RC(etcdlock_registration_next_event(r, -2, &e), E);
        etcdlock_last_error(msg, sizeof msg);
        CHECK(strstr(msg, "timeout_ms") != NULL);
        CHECK(e.kind == -1);
        int64_t rev = -7;
        CHECK_RC(etcdlock_registration_update(r, NULL, 2, &rev), E);
        CHECK_RC(etcdlock_registration_update(r, big, sizeof big, &rev), E);
        CHECK(rev == -7);
        etcdlock_instance_set *set = instances_of(c, svc);
        CHECK(set && set->n_instances == 1 && same(set->instances[0].value, set->instances[0].value_len, "v"));
        etcdlock_instance_set_free(set);
        CHECK_RC(etcdlock_registration_close(r), ETCDLOCK_OK);
        etcdlock_registration_free(r);
    }

    /* Instances and discoveries. */
    etcdlock_instance_set *ss = (etcdlock_instance_set *)never_written, *s = ss;
    CHECK_RC(etcdlock_instances(NULL, svc, &s), E);
    CHECK_RC(etcdlock_instances(c, NULL, &s), E);
    CHECK_RC(etcdlock_instances(c, "", &s), E);
    CHECK_RC(etcdlock_instances(c, slash_svc, &s), E);
    CHECK_RC(etcdlock_instances(c, svc, NULL), E);
    CHECK(s == ss);
    etcdlock_discovery *ds = (etcdlock_discovery *)never_written, *d = ds;
    CHECK_RC(etcdlock_discover(NULL, svc, &d), E);
    CHECK_RC(etcdlock_discover(c, NULL, &d), E);
    CHECK_RC(etcdlock_discover(c, "", &d), E);
    CHECK_RC(etcdlock_discover(c, slash_svc, &d), E);
    CHECK_RC(etcdlock_discover(c, svc, NULL), E);
    CHECK(d == ds);
    CHECK_RC(etcdlock_discovery_next(NULL, 100, &s), E);
    d = NULL;
    CHECK_RC(etcdlock_discover(c, svc, &d), ETCDLOCK_OK);
    CHECK_RC(etcdlock_discovery_next(d, 100, NULL), E);
    CHECK_RC(etcdlock_discovery_next(d, -2, &s), E);
    CHECK(s == ss);
    etcdlock_discovery_free(d);
    etcdlock_discovery_close(NULL);
    etcdlock_discovery_free(NULL);
    etcdlock_instance_set_free(NULL);

    /* gRPC endpoint helpers. */
    char *str = (char *)never_written;
    CHECK_RC(etcdlock_grpc_endpoint(NULL, &str), E);
    CHECK_RC(etcdlock_grpc_endpoint("a:1", NULL), E);
    CHECK_RC(etcdlock_grpc_endpoint("\xff\xfe:1", &str), E); /* not UTF-8 */
    CHECK_RC(etcdlock_grpc_endpoint_addr(NULL, 3, &str), E);
    CHECK_RC(etcdlock_grpc_endpoint_addr(u8("x"), 1, NULL), E);
    CHECK(str == (char *)never_written);

    CHECK(count_keys(prefix) == 0);
    CHECK(new_leases(NULL) == 0); /* every lease granted here revoked */
    etcdlock_client_free(c);
}

/* covers: REG-BASIC-001 (handles that outlive their freed client: the client's close revoked
 * the registration's lease, so nothing is left in etcd when etcdlock_client_free returns; the
 * registration and the discovery then report CLOSED / NOT_HELD and can still be freed) */
static void test_reg_client_freed(void) {
    etcdlock_client *c = connect_client();
    char svc[128], prefix[140];
    unique(svc, sizeof svc, "reg-freed");
    prefix_of(prefix, sizeof prefix, svc);
    etcdlock_registration *reg = NULL;
    etcdlock_discovery *d = NULL;
    CHECK_RC(etcdlock_register(c, svc, "n1", u8("v"), 1, TTL, 0, &reg), ETCDLOCK_OK);
    CHECK_RC(etcdlock_discover(c, svc, &d), ETCDLOCK_OK);
    int rc;
    etcdlock_instance_set *set = next_set(d, 5000, &rc);
    CHECK(set && set->n_instances == 1);
    etcdlock_instance_set_free(set);
    CHECK(count_keys(prefix) == 1);

    /* A next_event waiting when the client goes: CLOSED, soon. */
    struct blocked_event n = {reg, -1, {-1, -1, -1}};
    pthread_t t;
    pthread_create(&t, NULL, next_event_blocking, &n);
    sleep_ms(300);
    etcdlock_client_free(c);
    double t0 = now_ms();
    pthread_join(t, NULL);
    CHECK(now_ms() - t0 < 2000);
    CHECK_RC(n.rc, ETCDLOCK_E_CLOSED);
    CHECK(n.e.kind == -1);
    CHECK(count_keys(prefix) == 0);
    if (reg) {
        CHECK(!etcdlock_registration_is_registered(reg));
        etcdlock_registration_event e = next_event(reg, 1000, &rc);
        CHECK_RC(rc, ETCDLOCK_E_CLOSED);
        CHECK(e.kind == -1);
        char msg[256];
        etcdlock_last_error(msg, sizeof msg);
        CHECK(strstr(msg, "closed") != NULL);
        rc = etcdlock_registration_update(reg, u8("v2"), 2, NULL);
        CHECK(rc == ETCDLOCK_E_NOT_HELD || rc == ETCDLOCK_E_CLOSED);
        rc = etcdlock_registration_close(reg);
        CHECK(rc == ETCDLOCK_OK || rc == ETCDLOCK_E_CLOSED);
    }
    etcdlock_instance_set *ss = never_written, *s = ss;
    CHECK_RC(etcdlock_discovery_next(d, 1000, &s), ETCDLOCK_E_CLOSED);
    CHECK(s == ss);
    CHECK(count_keys(prefix) == 0);
    etcdlock_registration_free(reg);
    etcdlock_discovery_free(d);
}

/* covers: REG-BASIC-001 (calls on a closed client: ETCDLOCK_E_CLOSED, outputs untouched, nothing
 * left in etcd). Closes with etcdlock_shutdown, which leaves the client allocated: run last. */
static void test_reg_closed_client(void) {
    etcdlock_client *c = connect_client();
    char svc[128], prefix[140];
    unique(svc, sizeof svc, "reg-closed");
    prefix_of(prefix, sizeof prefix, svc);
    /* A registration alive at the shutdown. */
    etcdlock_registration *reg = NULL;
    CHECK_RC(etcdlock_register(c, svc, "n1", u8("v"), 1, TTL, 0, &reg), ETCDLOCK_OK);
    CHECK(count_keys(prefix) == 1);

    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    etcdlock_registration *rs = never_written, *r = rs;
    CHECK_RC(etcdlock_register(c, svc, "n2", u8("v"), 1, TTL, 0, &r), ETCDLOCK_E_CLOSED);
    CHECK(r == rs);
    etcdlock_instance_set *ss = never_written, *s = ss;
    CHECK_RC(etcdlock_instances(c, svc, &s), ETCDLOCK_E_CLOSED);
    CHECK(s == ss);
    etcdlock_discovery *ds = never_written, *d = ds;
    CHECK_RC(etcdlock_discover(c, svc, &d), ETCDLOCK_E_CLOSED);
    CHECK(d == ds);
    /* Bad arguments are still INVALID_ARGUMENT. */
    CHECK_RC(etcdlock_register(c, svc, "a/b", u8("v"), 1, TTL, 0, &r), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_register(c, svc, "n2", u8("v"), 1, 0, 0, &r), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_discover(c, "", &d), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(r == rs && d == ds);
    int rc;
    if (reg) {
        etcdlock_registration_event e = next_event(reg, 1000, &rc);
        CHECK_RC(rc, ETCDLOCK_E_CLOSED);
        CHECK(e.kind == -1);
    }
    /* Nothing left, at once: the shutdown revokes the registration's lease with the client's
     * others (covers: REG-EXIT-001; before the core's fix a lease the registration dropped in
     * the shutdown's window was revoked by a detached task the runtime cut off). */
    int left = count_keys(prefix);
    CHECK(left == 0);
    etcdlock_registration_free(reg);
    etcdlock_client_free(c);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_reg_bad_arguments);
    RUN(test_reg_basic);
    RUN(test_reg_close_and_free);
    RUN(test_grpc_endpoint);
    RUN(test_reg_recover);
    RUN(test_discover_basic);
    RUN(test_discover_close);
    RUN(test_reg_metrics);
    RUN(test_reg_client_freed);
    RUN(test_reg_closed_client); /* last: shuts the library down */
    etcdlock_shutdown(2000);
    return summary("test_registry");
}
