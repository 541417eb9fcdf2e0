/* The whole C API against a real etcd: results, NULL and bad arguments for every function,
 * try-once / timeout / cancel cleanup, lost callbacks (lease revoked, key deleted by an operator),
 * a stale holder fenced off, callback vs free, wrong thread, watches (key, prefix, start
 * revision, compaction), one runtime for many clients, shutdown (also under a waiting acquire).
 * Scenario IDs of tests/conformance/scenarios.md are named in `covers:` comments. */
#include "check.h"
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

static etcdlock_client *g_client;

#define K(s) (const uint8_t *)(s), strlen(s)

/* covers: ERR-NULL-001 (etcdlock_last_error with a NULL buffer writes nothing) */
static void test_status_and_errors(void) {
    CHECK(strcmp(etcdlock_status_str(ETCDLOCK_OK), "ETCDLOCK_OK") == 0);
    CHECK(strcmp(etcdlock_status_str(ETCDLOCK_E_WOULD_BLOCK), "ETCDLOCK_E_WOULD_BLOCK") == 0);
    CHECK(strcmp(etcdlock_status_str(ETCDLOCK_E_WRONG_THREAD), "ETCDLOCK_E_WRONG_THREAD") == 0);
    CHECK(strcmp(etcdlock_status_str(9999), "ETCDLOCK_E_UNKNOWN") == 0);
    CHECK(strcmp(etcdlock_status_str(-1), "ETCDLOCK_E_UNKNOWN") == 0);
    /* Stable numbers: part of the ABI. */
    CHECK(ETCDLOCK_OK == 0 && ETCDLOCK_E_INVALID_ARGUMENT == 1 && ETCDLOCK_E_UNAVAILABLE == 2 &&
          ETCDLOCK_E_TIMEOUT == 3 && ETCDLOCK_E_WOULD_BLOCK == 4 && ETCDLOCK_E_LOCK_LOST == 5 &&
          ETCDLOCK_E_NOT_HELD == 6 && ETCDLOCK_E_COMPACTED == 7 && ETCDLOCK_E_CANCELLED == 8 &&
          ETCDLOCK_E_CLOSED == 9 && ETCDLOCK_E_AUTH == 10 && ETCDLOCK_E_WRONG_THREAD == 11 &&
          ETCDLOCK_E_INTERNAL == 12 && ETCDLOCK_E_LOCK_TIMEOUT == 13);
    CHECK(ETCDLOCK_WAIT_FOREVER == -1);
    CHECK(strcmp(etcdlock_version(), ETCDLOCK_VERSION) == 0);
    CHECK(ETCDLOCK_VERSION_NUMBER == ETCDLOCK_VERSION_MAJOR * 10000 + ETCDLOCK_VERSION_MINOR * 100 + ETCDLOCK_VERSION_PATCH);

    /* A failure leaves its message; length query, truncation, NUL termination. */
    CHECK_RC(etcdlock_client_new(NULL, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    size_t need = etcdlock_last_error(NULL, 0);
    CHECK(need > 0);
    char small[8];
    memset(small, 'x', sizeof small);
    CHECK(etcdlock_last_error(small, sizeof small) == need);
    CHECK(small[7] == 0 && strlen(small) == 7);
    char big[512];
    CHECK(etcdlock_last_error(big, sizeof big) == need);
    CHECK(strstr(big, "endpoints") != NULL);
    CHECK(etcdlock_last_error(NULL, 10) == need); /* NULL buffer: nothing written */
}

/* covers: CONN-BADURL-001 (empty endpoint list, malformed URLs: INVALID_ARGUMENT, output untouched) */
/* covers: ERR-NULL-001 (etcdlock_client_options_init, etcdlock_client_new, etcdlock_client_free) */
static void test_client_options_and_new(void) {
    CHECK_RC(etcdlock_client_options_init((etcdlock_client_options *)NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_client_options o;
    memset(&o, 0xff, sizeof o);
    CHECK_RC(etcdlock_client_options_init(&o), ETCDLOCK_OK);
    CHECK(o.struct_size == sizeof o && o.connect_timeout_ms == 5000 && o.request_timeout_ms == 5000);
    CHECK(o.user == NULL && o.password == NULL && o.max_in_flight == 256);
    CHECK(o.ca_file == NULL && o.ca_pem == NULL && o.ca_pem_len == 0 && o.server_name == NULL);

    etcdlock_client *c = (etcdlock_client *)0x1;
    CHECK_RC(etcdlock_client_new(NULL, NULL, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(c == (etcdlock_client *)0x1); /* outputs written only on success */
    CHECK_RC(etcdlock_client_new(endpoints(), NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_client_new("", NULL, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_client_new("not a url", NULL, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_client_new("ftp://127.0.0.1:1", NULL, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_client_new("\xff\xfe", NULL, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(c == (etcdlock_client *)0x1);

    etcdlock_client_options bad;
    etcdlock_client_options_init(&bad);
    bad.connect_timeout_ms = -5;
    CHECK_RC(etcdlock_client_new(endpoints(), &bad, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_client_options_init(&bad);
    bad.request_timeout_ms = -1;
    CHECK_RC(etcdlock_client_new(endpoints(), &bad, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_client_options_init(&bad);
    bad.user = "root";
    CHECK_RC(etcdlock_client_new(endpoints(), &bad, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_client_options_init(&bad);
    bad.password = "pw";
    CHECK_RC(etcdlock_client_new(endpoints(), &bad, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(c == (etcdlock_client *)0x1);

    CHECK_RC(etcdlock_client_new(",", NULL, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_client_new("http://127.0.0.1:0", NULL, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(c == (etcdlock_client *)0x1);

    /* ETCDLOCK_CLIENT_OPTIONS_INIT: the defaults; several endpoints and bare host:port are
     * accepted. (Sizes of the options struct: test_options.c.) */
    etcdlock_client_options zero = ETCDLOCK_CLIENT_OPTIONS_INIT;
    char eps[600];
    snprintf(eps, sizeof eps, "%s,%s", endpoints(), endpoints());
    etcdlock_client *ok = NULL;
    CHECK_RC(etcdlock_client_new(eps, &zero, &ok), ETCDLOCK_OK);
    CHECK(ok != NULL);
    etcdlock_client_free(ok);
    etcdlock_client_free(NULL);
}

/* A TCP port on 127.0.0.1 that nobody listens on (bound, then closed), or 0. */
static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 0;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* covers: CONN-UNREACH-001 */
static void test_connect_unreachable(void) {
    int port = free_port();
    CHECK(port > 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    etcdlock_client_options fast;
    etcdlock_client_options_init(&fast);
    fast.connect_timeout_ms = 500;
    etcdlock_client *c = (etcdlock_client *)0x1;
    double t0 = now_ms();
    CHECK_RC(etcdlock_client_new(url, &fast, &c), ETCDLOCK_E_UNAVAILABLE);
    double took = now_ms() - t0;
    /* Within the connect timeout (plus scheduling slack), not the 5 s default or a hang. */
    if (took >= 500 + 1000) fprintf(stderr, "  connect to %s took %.0f ms\n", url, took);
    CHECK(took < 500 + 1000);
    CHECK(c == (etcdlock_client *)0x1);
}

/* covers: KV-BASIC-001 (etcdlock_delete has no existence result in C: OK for a missing key too) */
/* covers: ERR-BADKEY-001, ERR-NULL-001 (put, get, delete, buf accessors) */
static void test_kv(void) {
    char key[128];
    unique(key, sizeof key, "kv");
    etcdlock_buf *b = (etcdlock_buf *)0x1;
    CHECK_RC(etcdlock_get(g_client, K(key), &b), ETCDLOCK_OK);
    CHECK(b == NULL); /* absent */

    CHECK_RC(etcdlock_put(g_client, K(key), (const uint8_t *)"v\0x", 3, NULL), ETCDLOCK_OK);
    CHECK_RC(etcdlock_get(g_client, K(key), &b), ETCDLOCK_OK);
    CHECK(b != NULL && etcdlock_buf_len(b) == 3 && memcmp(etcdlock_buf_data(b), "v\0x", 3) == 0);
    CHECK(etcdlock_buf_mod_revision(b) > 0);
    etcdlock_buf_free(b);

    /* Empty value: NULL with length 0 is fine. */
    CHECK_RC(etcdlock_put(g_client, K(key), NULL, 0, NULL), ETCDLOCK_OK);
    b = NULL;
    CHECK_RC(etcdlock_get(g_client, K(key), &b), ETCDLOCK_OK);
    CHECK(b != NULL && etcdlock_buf_len(b) == 0);
    etcdlock_buf_free(b);

    CHECK_RC(etcdlock_delete(g_client, K(key)), ETCDLOCK_OK);
    CHECK_RC(etcdlock_delete(g_client, K(key)), ETCDLOCK_OK); /* absent: still OK */
    b = (etcdlock_buf *)0x1;
    CHECK_RC(etcdlock_get(g_client, K(key), &b), ETCDLOCK_OK);
    CHECK(b == NULL);

    /* Binary keys (NUL and non-UTF-8 bytes inside) round-trip too. */
    uint8_t bkey[160];
    size_t bklen = strlen(key);
    memcpy(bkey, key, bklen);
    memcpy(bkey + bklen, "/\xff\0\x01", 4);
    bklen += 4;
    const uint8_t bval[] = {0x00, 0xff, 0x80, 'z'};
    CHECK_RC(etcdlock_put(g_client, bkey, bklen, bval, sizeof bval, NULL), ETCDLOCK_OK);
    b = NULL;
    CHECK_RC(etcdlock_get(g_client, bkey, bklen, &b), ETCDLOCK_OK);
    CHECK(b != NULL && etcdlock_buf_len(b) == sizeof bval && memcmp(etcdlock_buf_data(b), bval, sizeof bval) == 0);
    etcdlock_buf_free(b);
    b = NULL;
    CHECK_RC(etcdlock_get(g_client, bkey, bklen - 1, &b), ETCDLOCK_OK); /* a different key */
    CHECK(b == NULL);
    CHECK_RC(etcdlock_delete(g_client, bkey, bklen), ETCDLOCK_OK);
    b = (etcdlock_buf *)0x1;
    CHECK_RC(etcdlock_get(g_client, bkey, bklen, &b), ETCDLOCK_OK);
    CHECK(b == NULL);

    /* Bad arguments: rejected, nothing sent (the key stays absent). */
    etcdlock_buf *keep = (etcdlock_buf *)0x1;
    CHECK_RC(etcdlock_put(NULL, K(key), K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put(g_client, NULL, 3, K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put(g_client, NULL, 0, K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT); /* empty key */
    CHECK_RC(etcdlock_put(g_client, (const uint8_t *)"", 0, K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put(g_client, K(key), NULL, 5, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_get(NULL, K(key), &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_get(g_client, NULL, 1, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_get(g_client, (const uint8_t *)"", 0, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_get(g_client, K(key), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(keep == (etcdlock_buf *)0x1);
    CHECK_RC(etcdlock_delete(NULL, K(key)), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_delete(g_client, NULL, 2), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_delete(g_client, NULL, 0), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_delete(g_client, (const uint8_t *)"", 0), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(count_keys(key) == 0);
    CHECK(etcdlock_buf_data(NULL) == NULL);
    CHECK(etcdlock_buf_len(NULL) == 0);
    CHECK(etcdlock_buf_mod_revision(NULL) == 0);
    etcdlock_buf_free(NULL);
}

static void lost_cb_unused(void *user_data, int reason) {
    (void)user_data;
    (void)reason;
}

/* covers: LOCK-BASIC-001, LOCK-GUARD-001, LOCK-TOKEN-001 */
/* covers: LOCK-RELEASE-001 (released twice: NOT_HELD, the guarded write with it refused, data unchanged) */
static void test_lock_basic(void) {
    char name[128], prefix[140];
    unique(name, sizeof name, "lock");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, ETCDLOCK_WAIT_FOREVER, NULL, &l), ETCDLOCK_OK);
    if (!l) return;
    int64_t t1 = etcdlock_lock_fencing_token(l);
    CHECK(t1 > 0);
    CHECK(etcdlock_lock_is_held(l));
    CHECK(etcdlock_lock_lost_reason(l) == 0);
    CHECK(etcdlock_lock_lease_id(l) != 0);
    size_t klen = 0;
    const uint8_t *k = etcdlock_lock_key(l, &klen);
    CHECK(k && klen > strlen(prefix) && memcmp(k, prefix, strlen(prefix)) == 0);
    CHECK(etcdlock_lock_key(l, NULL) == k); /* len is optional */
    /* The key is <name>/<lease id in hex>[-n], and it is the one key under <name>/ in etcd. */
    char want[200];
    int wlen = snprintf(want, sizeof want, "%s/%" PRIx64, name, (uint64_t)etcdlock_lock_lease_id(l));
    CHECK(k && klen >= (size_t)wlen && memcmp(k, want, wlen) == 0 && (klen == (size_t)wlen || k[wlen] == '-'));
    CHECK(count_keys(prefix) == 1);
    if (k) {
        char args[300], *got;
        snprintf(args, sizeof args, "get --keys-only '%.*s'", (int)klen, (const char *)k);
        got = etcdctl(args);
        CHECK(got && strncmp(got, (const char *)k, klen) == 0);
        free(got);
    }

    /* Fenced put: written while held. */
    char data[160];
    snprintf(data, sizeof data, "%s-data", name);
    CHECK_RC(etcdlock_put(g_client, K(data), K("held"), l), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put(g_client, (const uint8_t *)k, klen, K("x"), l), ETCDLOCK_E_INVALID_ARGUMENT);

    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    CHECK(!etcdlock_lock_is_held(l));
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_E_NOT_HELD);
    CHECK_RC(etcdlock_put(g_client, K(data), K("late"), l), ETCDLOCK_E_NOT_HELD);
    CHECK(count_keys(prefix) == 0);
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb_unused, NULL), ETCDLOCK_E_NOT_HELD);
    etcdlock_lock_free(l);

    /* The next holder's token is larger. */
    etcdlock_lock *l2 = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &l2), ETCDLOCK_OK);
    CHECK(etcdlock_lock_fencing_token(l2) > t1);
    /* Freed while held: released before free returns. */
    etcdlock_lock_free(l2);
    CHECK(count_keys(prefix) == 0);
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(g_client, K(data), &b), ETCDLOCK_OK);
    CHECK(b && etcdlock_buf_len(b) == 4 && memcmp(etcdlock_buf_data(b), "held", 4) == 0);
    etcdlock_buf_free(b);
    CHECK_RC(etcdlock_delete(g_client, K(data)), ETCDLOCK_OK);
}

/* covers: ERR-BADNAME-001 (empty, ending in '/'; a C name is NUL-terminated, so it cannot contain NUL) */
/* covers: ERR-BADTTL-001 (locks; leases in test_lease), ERR-NULL-001 (lock functions) */
static void test_lock_bad_args(void) {
    char n[128], slash[140], under[150];
    unique(n, sizeof n, "badargs");
    snprintf(slash, sizeof slash, "%s/", n);
    snprintf(under, sizeof under, "%s/x/", n);
    etcdlock_lock *l = (etcdlock_lock *)0x1;
    CHECK_RC(etcdlock_lock_acquire(NULL, n, 10, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, NULL, 10, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, n, 10, 0, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, n, 0, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, n, -3, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, n, INT64_MIN, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, n, 10, -2, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, "", 10, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, "/", 10, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, slash, 10, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, under, 10, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, n, 9000000001LL, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_acquire(g_client, n, INT64_MAX, 0, NULL, &l), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(l == (etcdlock_lock *)0x1);
    CHECK(count_keys(n) == 0); /* nothing was sent */
    CHECK(etcdlock_lock_fencing_token(NULL) == 0);
    CHECK(!etcdlock_lock_is_held(NULL));
    CHECK(etcdlock_lock_lost_reason(NULL) == 0);
    CHECK(etcdlock_lock_lease_id(NULL) == 0);
    size_t len = 77;
    CHECK(etcdlock_lock_key(NULL, &len) == NULL && len == 77);
    CHECK_RC(etcdlock_lock_release(NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lock_on_lost(NULL, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_lock_free(NULL);

    char name[128];
    unique(name, sizeof name, "badcb");
    etcdlock_lock *held = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &held), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_on_lost(held, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_lock_free(held);
}

/* Holds `name` from a second client and returns the lock (the queue then has one key). */
static etcdlock_lock *hold(etcdlock_client *c, const char *name) {
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    return l;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The IDs of every lease etcd has (`etcdctl lease list`), sorted, each on its own line and the
 * list starting with a newline: "\nid1\nid2\n" (caller frees), or NULL. */
static char *lease_list(void) {
    char *out = etcdctl("lease list");
    if (!out) return NULL;
    char *ids[512];
    int n = 0;
    size_t total = 2;
    for (char *line = strtok(out, "\n"); line && n < 512; line = strtok(NULL, "\n")) {
        if (strncmp(line, "found ", 6) == 0) continue;
        ids[n++] = line;
        total += strlen(line) + 1;
    }
    qsort(ids, n, sizeof ids[0], cmp_str);
    char *sorted = malloc(total);
    if (sorted) {
        strcpy(sorted, "\n");
        for (int i = 0; i < n; i++) {
            strcat(sorted, ids[i]);
            strcat(sorted, "\n");
        }
    }
    free(out);
    return sorted;
}

/* Whether every lease of `after` is in `before` (both from lease_list). */
static int no_new_lease(const char *before, const char *after) {
    for (const char *p = after + 1; *p;) {
        const char *nl = strchr(p, '\n');
        if (!nl) break;
        char id[64];
        snprintf(id, sizeof id, "\n%.*s\n", (int)(nl - p), p);
        if (!strstr(before, id)) {
            fprintf(stderr, "  new lease %.*s\n", (int)(nl - p), p);
            return 0;
        }
        p = nl + 1;
    }
    return 1;
}

/* Whether etcd has the lease `id` now. */
static int lease_listed(int64_t id) {
    char *list = lease_list(), want[40];
    snprintf(want, sizeof want, "\n%016" PRIx64 "\n", (uint64_t)id); /* etcdctl pads to 16 digits */
    int found = list && strstr(list, want) != NULL;
    free(list);
    return found;
}

/* covers: LOCK-SESSION-001 */
static void test_locks_share_the_clients_lease(void) {
    etcdlock_client *c = connect_client(); /* own client: freed below, which revokes its lease */
    char a[128], b[128], x[128];
    unique(a, sizeof a, "sharea");
    unique(b, sizeof b, "shareb");
    unique(x, sizeof x, "sharex");
    etcdlock_lock *la = NULL, *lb = NULL, *lx = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, a, 10, 0, NULL, &la), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_acquire(c, b, 10, 0, NULL, &lb), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_acquire(c, x, 11, 0, NULL, &lx), ETCDLOCK_OK);
    if (!la || !lb || !lx) return;
    int64_t shared = etcdlock_lock_lease_id(la);
    CHECK(etcdlock_lock_lease_id(lb) == shared);
    CHECK(etcdlock_lock_lease_id(lx) != shared); /* another TTL, another lease */
    etcdlock_lock_free(la);
    etcdlock_lock_free(lb);
    etcdlock_lock_free(lx);
    /* Later cycles reuse it: no grant, no revoke. */
    for (int i = 0; i < 3; i++) {
        etcdlock_lock *l = NULL;
        CHECK_RC(etcdlock_lock_acquire(c, a, 10, 0, NULL, &l), ETCDLOCK_OK);
        CHECK(l && etcdlock_lock_lease_id(l) == shared);
        CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
        etcdlock_lock_free(l);
    }
    CHECK(lease_listed(shared));
    etcdlock_client_free(c);
    CHECK(!lease_listed(shared));
}

/* covers: LOCK-TRY-001 */
/* covers: LOCK-TIMEOUT-001 (no lease left: no new lease in etcd's list; the client's locks of one TTL
 * share one lease, which the holder here keeps in use) */
static void test_try_once_and_timeout_cleanup(void) {
    etcdlock_client *other = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "try");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *holder = hold(other, name);

    etcdlock_lock *l = (etcdlock_lock *)0x1;
    double t0 = now_ms();
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &l), ETCDLOCK_E_WOULD_BLOCK);
    CHECK(now_ms() - t0 < 2000); /* at once: does not wait for the holder */
    CHECK(l == (etcdlock_lock *)0x1);
    CHECK(count_keys(prefix) == 1);

    char *leases_before = lease_list();
    CHECK(leases_before != NULL && leases_before[1] != 0); /* the holder's and the client's own */
    t0 = now_ms();
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 300, NULL, &l), ETCDLOCK_E_LOCK_TIMEOUT);
    double took = now_ms() - t0;
    CHECK(took >= 290 && took < 3000);
    CHECK(l == (etcdlock_lock *)0x1);
    CHECK(count_keys(prefix) == 1); /* the waiter's queue key is gone */
    char *leases_after = lease_list();
    CHECK(leases_before && leases_after && no_new_lease(leases_before, leases_after)); /* no lease left */
    free(leases_before);
    free(leases_after);

    /* After the holder releases, a try-once succeeds. */
    CHECK_RC(etcdlock_lock_release(holder), ETCDLOCK_OK);
    etcdlock_lock_free(holder);
    l = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client_free(other);
}

struct cancel_arg {
    etcdlock_cancel *cancel;
    long after_ms;
};

static void *trigger_later(void *p) {
    struct cancel_arg *a = p;
    sleep_ms(a->after_ms);
    etcdlock_cancel_trigger(a->cancel);
    return NULL;
}

/* covers: LOCK-CANCEL-001, ERR-NULL-001 (cancel token functions) */
static void test_cancel_cleanup(void) {
    etcdlock_client *other = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "cancel");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *holder = hold(other, name);

    etcdlock_cancel *c = etcdlock_cancel_new();
    CHECK(c != NULL);
    CHECK(!etcdlock_cancel_is_triggered(c));
    struct cancel_arg a = {c, 300};
    pthread_t t;
    pthread_create(&t, NULL, trigger_later, &a);
    etcdlock_lock *l = (etcdlock_lock *)0x1;
    double t0 = now_ms();
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, ETCDLOCK_WAIT_FOREVER, c, &l), ETCDLOCK_E_CANCELLED);
    double took = now_ms() - t0;
    pthread_join(t, NULL);
    CHECK(took >= 250 && took < 3000);
    CHECK(l == (etcdlock_lock *)0x1);
    CHECK(etcdlock_cancel_is_triggered(c));
    CHECK(count_keys(prefix) == 1); /* only the holder's key */

    /* An already triggered token fails at once, even with the lock free. */
    CHECK_RC(etcdlock_lock_release(holder), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, ETCDLOCK_WAIT_FOREVER, c, &l), ETCDLOCK_E_CANCELLED);
    CHECK(count_keys(prefix) == 0);
    etcdlock_cancel_trigger(c); /* idempotent */
    etcdlock_cancel_free(c);

    /* A token not triggered does nothing. */
    etcdlock_cancel *idle = etcdlock_cancel_new();
    l = NULL;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 1000, idle, &l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    etcdlock_cancel_free(idle);

    etcdlock_cancel_trigger(NULL);
    etcdlock_cancel_free(NULL);
    CHECK(!etcdlock_cancel_is_triggered(NULL));
    etcdlock_lock_free(holder);
    etcdlock_client_free(other);
}

/* State shared with lost callbacks. */
struct lost_state {
    pthread_mutex_t mu;
    atomic_int calls;
    atomic_int reason;
    atomic_int started;
    atomic_int finished;
    atomic_int nested_status; /* status of a blocking call made inside the callback */
    long sleep_ms;
    etcdlock_client *client;
};

static void lost_cb(void *user_data, int reason) {
    struct lost_state *s = user_data;
    atomic_store(&s->started, 1);
    if (s->client) {
        etcdlock_buf *b = NULL;
        atomic_store(&s->nested_status, etcdlock_get(s->client, K("ctest/any"), &b));
        etcdlock_buf_free(b);
    }
    if (s->sleep_ms) sleep_ms(s->sleep_ms);
    atomic_store(&s->reason, reason);
    atomic_fetch_add(&s->calls, 1);
    atomic_store(&s->finished, 1);
}

static int wait_for(atomic_int *flag, long timeout_ms) {
    double end = now_ms() + timeout_ms;
    while (!atomic_load(flag) && now_ms() < end) sleep_ms(10);
    return atomic_load(flag);
}

static void revoke_external(int64_t lease) {
    char args[64];
    snprintf(args, sizeof args, "lease revoke %" PRIx64, (uint64_t)lease);
    free(etcdctl(args));
}

/* covers: RT-WRONGCTX-001 (a blocking call inside a lost callback: ETCDLOCK_E_WRONG_THREAD) */
/* covers: LOCK-RELEASE-001 (release after loss: NOT_HELD) */
static void test_lost_after_external_revoke(void) {
    etcdlock_client *c = connect_client(); /* own client: its shared lease gets revoked */
    char name[128], prefix[140];
    unique(name, sizeof name, "lost");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    if (!l) return;
    struct lost_state s = {.client = c};
    atomic_store(&s.nested_status, -1);
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb, &s), ETCDLOCK_OK);
    revoke_external(etcdlock_lock_lease_id(l));
    CHECK(wait_for(&s.finished, 10000));
    CHECK(atomic_load(&s.calls) == 1);
    int r = atomic_load(&s.reason);
    CHECK(r == ETCDLOCK_LOST_KEY_DELETED || r == ETCDLOCK_LOST_EXPIRED);
    /* A blocking call from the callback's (library) thread refuses instead of deadlocking. */
    CHECK_RC(atomic_load(&s.nested_status), ETCDLOCK_E_WRONG_THREAD);
    CHECK(!etcdlock_lock_is_held(l));
    CHECK(etcdlock_lock_lost_reason(l) != 0);
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_E_NOT_HELD);
    etcdlock_lock_free(l);
    CHECK(count_keys(prefix) == 0);

    /* The client replaces its revoked lease: the next acquire works. */
    l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 2000, NULL, &l), ETCDLOCK_OK);
    CHECK(etcdlock_lock_is_held(l));
    etcdlock_lock_free(l);
    sleep_ms(200);
    CHECK(atomic_load(&s.calls) == 1); /* fired once */
    etcdlock_client_free(c);
}

/* covers: RT-CALLBACK-001 (lock and lease callbacks) */
static void test_no_callback_after_free(void) {
    etcdlock_client *c = connect_client();
    char name[128];
    unique(name, sizeof name, "nocb");

    /* 1. Freed before the loss: never called. */
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    struct lost_state s1 = {0};
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb, &s1), ETCDLOCK_OK);
    int64_t lease = etcdlock_lock_lease_id(l);
    etcdlock_lock_free(l);
    revoke_external(lease);
    sleep_ms(1500);
    CHECK(atomic_load(&s1.calls) == 0);

    /* 2. Freed while the callback runs on a library thread: free waits for it. */
    l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 2000, NULL, &l), ETCDLOCK_OK);
    if (!l) return;
    struct lost_state s2 = {.sleep_ms = 400};
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb, &s2), ETCDLOCK_OK);
    revoke_external(etcdlock_lock_lease_id(l));
    CHECK(wait_for(&s2.started, 10000));
    etcdlock_lock_free(l);
    CHECK(atomic_load(&s2.finished) == 1); /* returned only after the callback did */

    /* 3. Released: the callback is disarmed (a loss after release is not reported). */
    l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 2000, NULL, &l), ETCDLOCK_OK);
    struct lost_state s3 = {0};
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb, &s3), ETCDLOCK_OK);
    lease = etcdlock_lock_lease_id(l);
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    revoke_external(lease);
    sleep_ms(1500);
    CHECK(atomic_load(&s3.calls) == 0);
    etcdlock_lock_free(l);

    /* 4. A lease freed before its loss: never called (the revoke done by free is not reported). */
    etcdlock_lease *ls = NULL;
    CHECK_RC(etcdlock_lease_grant(c, 10, &ls), ETCDLOCK_OK);
    struct lost_state s4 = {0};
    CHECK_RC(etcdlock_lease_on_lost(ls, lost_cb, &s4), ETCDLOCK_OK);
    etcdlock_lease_free(ls);
    sleep_ms(1500);
    CHECK(atomic_load(&s4.calls) == 0);

    /* 5. A lease freed while its callback runs: free waits for it; nothing runs afterwards. */
    ls = NULL;
    CHECK_RC(etcdlock_lease_grant(c, 10, &ls), ETCDLOCK_OK);
    if (ls) {
        struct lost_state s5 = {.sleep_ms = 400};
        CHECK_RC(etcdlock_lease_on_lost(ls, lost_cb, &s5), ETCDLOCK_OK);
        revoke_external(etcdlock_lease_id(ls));
        CHECK(wait_for(&s5.started, 10000));
        etcdlock_lease_free(ls);
        CHECK(atomic_load(&s5.finished) == 1); /* returned only after the callback did */
        sleep_ms(500);
        CHECK(atomic_load(&s5.calls) == 1);
    }
    etcdlock_client_free(c);
}

/* A callback that frees its own lock (from the library thread: no deadlock, no blocking). */
struct self_free {
    etcdlock_lock *lock;
    atomic_int done;
};

static void free_self_cb(void *user_data, int reason) {
    struct self_free *s = user_data;
    (void)reason;
    etcdlock_lock_free(s->lock);
    atomic_store(&s->done, 1);
}

static void test_callback_frees_own_lock(void) {
    etcdlock_client *c = connect_client();
    char name[128];
    unique(name, sizeof name, "selffree");
    struct self_free s = {0};
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &s.lock), ETCDLOCK_OK);
    if (!s.lock) return;
    CHECK_RC(etcdlock_lock_on_lost(s.lock, free_self_cb, &s), ETCDLOCK_OK);
    revoke_external(etcdlock_lock_lease_id(s.lock));
    CHECK(wait_for(&s.done, 10000));
    etcdlock_client_free(c);
}

/* covers: LOCK-LOST-002 */
/* covers: CONN-CLOSED-001 (handles that outlive their freed client: CLOSED; see also test_shutdown) */
static void test_client_free_closes(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140];
    unique(name, sizeof name, "close");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    etcdlock_lease *lease = NULL;
    CHECK_RC(etcdlock_lease_grant(c, 10, &lease), ETCDLOCK_OK);
    etcdlock_watch *w = NULL;
    CHECK_RC(etcdlock_watch_open(c, K(prefix), true, 0, &w), ETCDLOCK_OK);
    struct lost_state s = {0};
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb, &s), ETCDLOCK_OK);
    struct lost_state ls = {0};
    CHECK_RC(etcdlock_lease_on_lost(lease, lost_cb, &ls), ETCDLOCK_OK);
    CHECK(count_keys(prefix) == 1);
    etcdlock_client_free(c); /* revokes the leases: the lock key is gone */
    CHECK(count_keys(prefix) == 0);
    CHECK(wait_for(&s.finished, 5000));
    CHECK(atomic_load(&s.reason) == ETCDLOCK_LOST_CLOSED);
    CHECK(atomic_load(&s.calls) == 1);
    CHECK(etcdlock_lock_lost_reason(l) == ETCDLOCK_LOST_CLOSED);
    CHECK(!etcdlock_lock_is_held(l));
    CHECK(wait_for(&ls.finished, 5000));
    CHECK(atomic_load(&ls.reason) == ETCDLOCK_LOST_CLOSED);
    CHECK(!etcdlock_lease_is_alive(lease));
    CHECK(etcdlock_lock_release(l) != ETCDLOCK_OK);
    CHECK_RC(etcdlock_lease_revoke(lease), ETCDLOCK_E_CLOSED);
    etcdlock_event *e = (etcdlock_event *)0x1;
    CHECK_RC(etcdlock_watch_next(w, 2000, &e), ETCDLOCK_E_CLOSED);
    CHECK(e == (etcdlock_event *)0x1);
    etcdlock_watch_free(w);
    etcdlock_lock_free(l);
    etcdlock_lease_free(lease);
}

/* covers: LEASE-REVOKE-001, LEASE-LOST-001 */
/* covers: ERR-BADTTL-001 (leases), ERR-NULL-001 (lease functions, put_with_lease) */
static void test_lease(void) {
    char key[128];
    unique(key, sizeof key, "leasekey");
    etcdlock_lease *l = NULL;
    CHECK_RC(etcdlock_lease_grant(g_client, 10, &l), ETCDLOCK_OK);
    if (!l) return;
    CHECK(etcdlock_lease_id(l) != 0);
    CHECK(etcdlock_lease_ttl(l) >= 10);
    CHECK(etcdlock_lease_is_alive(l));
    CHECK(etcdlock_lease_remaining_ms(l) > 5000 && etcdlock_lease_remaining_ms(l) <= 10000);
    CHECK(etcdlock_lease_lost_reason(l) == 0);
    struct lost_state s = {0};
    CHECK_RC(etcdlock_lease_on_lost(l, lost_cb, &s), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put_with_lease(g_client, K(key), K("up"), l), ETCDLOCK_OK);
    CHECK(count_keys(key) == 1);
    CHECK_RC(etcdlock_lease_revoke(l), ETCDLOCK_OK);
    CHECK(count_keys(key) == 0);
    CHECK(!etcdlock_lease_is_alive(l));
    CHECK(etcdlock_lease_remaining_ms(l) == 0);
    CHECK(etcdlock_lease_lost_reason(l) == ETCDLOCK_LOST_REVOKED);
    CHECK(wait_for(&s.finished, 5000));
    CHECK(atomic_load(&s.reason) == ETCDLOCK_LOST_REVOKED);
    CHECK_RC(etcdlock_lease_revoke(l), ETCDLOCK_OK); /* idempotent */
    CHECK_RC(etcdlock_put_with_lease(g_client, K(key), K("late"), l), ETCDLOCK_E_LOCK_LOST);
    etcdlock_lease_free(l);

    /* Freed: revoked before free returns (its key is gone). */
    l = NULL;
    CHECK_RC(etcdlock_lease_grant(g_client, 10, &l), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put_with_lease(g_client, K(key), K("up"), l), ETCDLOCK_OK);
    etcdlock_lease_free(l);
    CHECK(count_keys(key) == 0);

    /* External revoke: lost, callback with EXPIRED (the server says the lease is gone). */
    l = NULL;
    CHECK_RC(etcdlock_lease_grant(g_client, 5, &l), ETCDLOCK_OK);
    struct lost_state s2 = {0};
    CHECK_RC(etcdlock_lease_on_lost(l, lost_cb, &s2), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put_with_lease(g_client, K(key), K("up"), l), ETCDLOCK_OK);
    revoke_external(etcdlock_lease_id(l));
    CHECK(wait_for(&s2.finished, 10000));
    CHECK(atomic_load(&s2.reason) == ETCDLOCK_LOST_EXPIRED);
    CHECK(count_keys(key) == 0);
    /* Fired once; never alive again (the keepalive does not bring it back). */
    for (int i = 0; i < 6; i++) {
        CHECK(!etcdlock_lease_is_alive(l));
        CHECK(etcdlock_lease_remaining_ms(l) == 0);
        sleep_ms(300);
    }
    CHECK(atomic_load(&s2.calls) == 1);
    CHECK(etcdlock_lease_lost_reason(l) == ETCDLOCK_LOST_EXPIRED);
    CHECK_RC(etcdlock_put_with_lease(g_client, K(key), K("late"), l), ETCDLOCK_E_LOCK_LOST);
    CHECK(count_keys(key) == 0);
    etcdlock_lease_free(l);

    /* Bad arguments. */
    etcdlock_lease *keep = (etcdlock_lease *)0x1;
    CHECK_RC(etcdlock_lease_grant(NULL, 10, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lease_grant(g_client, 10, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lease_grant(g_client, 0, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lease_grant(g_client, -1, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lease_grant(g_client, INT64_MIN, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lease_grant(g_client, 9000000001LL, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lease_grant(g_client, INT64_MAX, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(keep == (etcdlock_lease *)0x1);
    CHECK(etcdlock_lease_id(NULL) == 0);
    CHECK(etcdlock_lease_ttl(NULL) == 0);
    CHECK(!etcdlock_lease_is_alive(NULL));
    CHECK(etcdlock_lease_remaining_ms(NULL) == 0);
    CHECK(etcdlock_lease_lost_reason(NULL) == 0);
    CHECK_RC(etcdlock_lease_on_lost(NULL, lost_cb, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_lease_revoke(NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put_with_lease(NULL, K(key), K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put_with_lease(g_client, K(key), K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put_with_lease(g_client, NULL, 4, K("v"), NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_lease *cbless = NULL;
    CHECK_RC(etcdlock_lease_grant(g_client, 10, &cbless), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lease_on_lost(cbless, NULL, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put_with_lease(NULL, K(key), K("v"), cbless), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put_with_lease(g_client, NULL, 4, K("v"), cbless), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put_with_lease(g_client, NULL, 0, K("v"), cbless), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_put_with_lease(g_client, K(key), NULL, 2, cbless), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(count_keys(key) == 0); /* nothing was written */
    etcdlock_lease_free(cbless);
    etcdlock_lease_free(NULL);
}

/* covers: WATCH-COMPACT-001 (C carries the compact revision in the etcdlock_last_error message) */
/* covers: ERR-NULL-001 (watch and event functions) */
static void test_watch(void) {
    char prefix[128], key[160];
    unique(prefix, sizeof prefix, "watch");
    snprintf(key, sizeof key, "%s/a", prefix);
    etcdlock_watch *w = NULL;
    CHECK_RC(etcdlock_watch_open(g_client, K(prefix), true, 0, &w), ETCDLOCK_OK);
    if (!w) return;
    etcdlock_event *e = (etcdlock_event *)0x1;
    CHECK_RC(etcdlock_watch_next(w, 0, &e), ETCDLOCK_E_TIMEOUT);
    double t0 = now_ms();
    CHECK_RC(etcdlock_watch_next(w, 200, &e), ETCDLOCK_E_TIMEOUT);
    CHECK(now_ms() - t0 >= 190);
    CHECK(e == (etcdlock_event *)0x1);

    CHECK_RC(etcdlock_put(g_client, K(key), K("one"), NULL), ETCDLOCK_OK);
    CHECK_RC(etcdlock_delete(g_client, K(key)), ETCDLOCK_OK);
    e = NULL;
    CHECK_RC(etcdlock_watch_next(w, 5000, &e), ETCDLOCK_OK);
    int64_t rev = 0;
    if (e) {
        size_t kl = 0, vl = 0;
        const uint8_t *k = etcdlock_event_key(e, &kl);
        const uint8_t *v = etcdlock_event_value(e, &vl);
        CHECK(etcdlock_event_type(e) == ETCDLOCK_EVENT_PUT);
        CHECK(kl == strlen(key) && memcmp(k, key, kl) == 0);
        CHECK(vl == 3 && memcmp(v, "one", 3) == 0);
        CHECK(etcdlock_event_key(e, NULL) == k);
        rev = etcdlock_event_revision(e);
        CHECK(rev > 0);
        etcdlock_event_free(e);
    }
    e = NULL;
    CHECK_RC(etcdlock_watch_next(w, ETCDLOCK_WAIT_FOREVER, &e), ETCDLOCK_OK);
    if (e) {
        size_t vl = 99;
        CHECK(etcdlock_event_type(e) == ETCDLOCK_EVENT_DELETE);
        etcdlock_event_value(e, &vl);
        CHECK(vl == 0);
        CHECK(etcdlock_event_revision(e) == rev + 1);
        etcdlock_event_free(e);
    }
    etcdlock_watch_free(w);

    /* From a past revision: replays history. */
    w = NULL;
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, rev, &w), ETCDLOCK_OK);
    e = NULL;
    CHECK_RC(etcdlock_watch_next(w, 5000, &e), ETCDLOCK_OK);
    CHECK(e && etcdlock_event_revision(e) == rev && etcdlock_event_type(e) == ETCDLOCK_EVENT_PUT);
    etcdlock_event_free(e);
    etcdlock_watch_free(w);

    /* Compacted history. */
    CHECK_RC(etcdlock_put(g_client, K(key), K("two"), NULL), ETCDLOCK_OK);
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(g_client, K(key), &b), ETCDLOCK_OK);
    int64_t now_rev = etcdlock_buf_mod_revision(b);
    etcdlock_buf_free(b);
    char args[64];
    snprintf(args, sizeof args, "compact %" PRId64, now_rev);
    free(etcdctl(args));
    w = NULL;
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, rev, &w), ETCDLOCK_OK);
    e = (etcdlock_event *)0x1;
    CHECK_RC(etcdlock_watch_next(w, 5000, &e), ETCDLOCK_E_COMPACTED);
    /* The error names the compact revision: history starts at now_rev. */
    char msg[512], want[64];
    etcdlock_last_error(msg, sizeof msg);
    int wl = snprintf(want, sizeof want, "revision %" PRId64, now_rev);
    const char *at = strstr(msg, want);
    if (!at || (at[wl] >= '0' && at[wl] <= '9')) fprintf(stderr, "  compacted message: %s (want \"%s\")\n", msg, want);
    CHECK(at != NULL && !(at[wl] >= '0' && at[wl] <= '9'));
    CHECK_RC(etcdlock_watch_next(w, 100, &e), ETCDLOCK_E_CLOSED); /* ended */
    CHECK_RC(etcdlock_watch_next(w, 0, &e), ETCDLOCK_E_CLOSED);
    CHECK(e == (etcdlock_event *)0x1);
    etcdlock_watch_free(w);
    CHECK_RC(etcdlock_delete(g_client, K(key)), ETCDLOCK_OK);

    /* Bad arguments. */
    etcdlock_watch *keep = (etcdlock_watch *)0x1;
    CHECK_RC(etcdlock_watch_open(NULL, K(key), false, 0, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_watch_open(g_client, NULL, 3, false, 0, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_watch_open(g_client, NULL, 0, false, 0, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, -1, &keep), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, 0, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(keep == (etcdlock_watch *)0x1);
    e = (etcdlock_event *)0x1;
    CHECK_RC(etcdlock_watch_next(NULL, 0, &e), ETCDLOCK_E_INVALID_ARGUMENT);
    w = NULL;
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, 0, &w), ETCDLOCK_OK);
    CHECK_RC(etcdlock_watch_next(w, 0, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_watch_next(w, -7, &e), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(e == (etcdlock_event *)0x1);
    etcdlock_watch_free(w);
    etcdlock_watch_free(NULL);
    size_t len = 5;
    CHECK(etcdlock_event_type(NULL) == 0);
    CHECK(etcdlock_event_key(NULL, &len) == NULL && len == 5);
    CHECK(etcdlock_event_value(NULL, &len) == NULL && len == 5);
    CHECK(etcdlock_event_revision(NULL) == 0);
    etcdlock_event_free(NULL);
}

/* covers: LEASE-TTL-001 */
static void test_lease_min_ttl(void) {
    etcdlock_lease *l = NULL;
    CHECK_RC(etcdlock_lease_grant(g_client, 1, &l), ETCDLOCK_OK);
    if (!l) return;
    /* etcd raises a TTL below its minimum, ceil(1.5 * election timeout) = 2 s with the test
     * server's default 1 s election timeout; the granted TTL is what is reported. */
    if (etcdlock_lease_ttl(l) != 2) fprintf(stderr, "  granted TTL %" PRId64 ", want 2\n", etcdlock_lease_ttl(l));
    CHECK(etcdlock_lease_ttl(l) == 2);
    CHECK(etcdlock_lease_remaining_ms(l) > 0 && etcdlock_lease_remaining_ms(l) <= 2000);
    char args[64];
    snprintf(args, sizeof args, "lease timetolive %" PRIx64, (uint64_t)etcdlock_lease_id(l));
    char *out = etcdctl(args);
    CHECK(out && strstr(out, "granted with TTL(2s)") != NULL);
    free(out);
    etcdlock_lease_free(l);
}

/* Copies a lock's key into `buf` as a NUL-terminated string; returns its length. */
static size_t key_of(const etcdlock_lock *l, char *buf, size_t cap) {
    size_t len = 0;
    const uint8_t *k = etcdlock_lock_key(l, &len);
    if (!k || len >= cap) {
        buf[0] = 0;
        return 0;
    }
    memcpy(buf, k, len);
    buf[len] = 0;
    return len;
}

/* Whether etcd has exactly `key` (via etcdctl). */
static int key_exists(const char *key) {
    char args[400];
    snprintf(args, sizeof args, "get --keys-only '%s'", key);
    char *out = etcdctl(args);
    int yes = out && strncmp(out, key, strlen(key)) == 0 && (out[strlen(key)] == '\n' || out[strlen(key)] == 0);
    free(out);
    return yes;
}

/* Deletes `key` with etcdctl (an operator's `etcdctl del`); returns how many keys it deleted. */
static int del_external(const char *key) {
    char args[400];
    snprintf(args, sizeof args, "del '%s'", key);
    char *out = etcdctl(args);
    int n = out ? atoi(out) : -1;
    free(out);
    return n;
}

/* covers: LOCK-LOST-001 */
static void test_lock_lost_key_deleted(void) {
    etcdlock_client *c = connect_client();
    char name[128], prefix[140], key[300];
    unique(name, sizeof name, "keydel");
    snprintf(prefix, sizeof prefix, "%s/", name);
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    if (!l) {
        etcdlock_client_free(c);
        return;
    }
    struct lost_state s = {0};
    CHECK_RC(etcdlock_lock_on_lost(l, lost_cb, &s), ETCDLOCK_OK);
    CHECK(key_of(l, key, sizeof key) > 0);
    CHECK(etcdlock_lock_is_held(l));
    CHECK(del_external(key) == 1);
    CHECK(wait_for(&s.finished, 5000));
    if (atomic_load(&s.reason) != ETCDLOCK_LOST_KEY_DELETED) fprintf(stderr, "  lost reason %d\n", atomic_load(&s.reason));
    CHECK(atomic_load(&s.reason) == ETCDLOCK_LOST_KEY_DELETED);
    CHECK(!etcdlock_lock_is_held(l));
    CHECK(etcdlock_lock_lost_reason(l) == ETCDLOCK_LOST_KEY_DELETED);
    sleep_ms(1000);
    CHECK(atomic_load(&s.calls) == 1); /* once */
    CHECK(!etcdlock_lock_is_held(l));
    CHECK(count_keys(prefix) == 0);
    etcdlock_lock_free(l);
    etcdlock_client_free(c);
}

/* covers: LOCK-FENCED-001 */
/* covers: LOCK-RELEASE-001 (release of a lost lock: NOT_HELD, the new holder's key untouched) */
static void test_fenced_stale_holder(void) {
    etcdlock_client *a = connect_client();
    char name[128], prefix[140], data[160], stale_key[300], fresh_key[300];
    unique(name, sizeof name, "fenced");
    snprintf(prefix, sizeof prefix, "%s/", name);
    snprintf(data, sizeof data, "%s-data", name);
    etcdlock_lock *stale = NULL, *fresh = NULL;
    CHECK_RC(etcdlock_lock_acquire(a, name, 10, 0, NULL, &stale), ETCDLOCK_OK);
    if (!stale) {
        etcdlock_client_free(a);
        return;
    }
    key_of(stale, stale_key, sizeof stale_key);
    /* An operator deletes the holder's key; another client takes the lock. */
    CHECK(del_external(stale_key) == 1);
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 5000, NULL, &fresh), ETCDLOCK_OK);
    if (!fresh) {
        etcdlock_lock_free(stale);
        etcdlock_client_free(a);
        return;
    }
    key_of(fresh, fresh_key, sizeof fresh_key);
    CHECK(strcmp(stale_key, fresh_key) != 0);
    CHECK(etcdlock_lock_fencing_token(fresh) > etcdlock_lock_fencing_token(stale));

    /* The stale holder's guarded write is refused and writes nothing. */
    CHECK_RC(etcdlock_put(a, K(data), K("stale"), stale), ETCDLOCK_E_NOT_HELD);
    etcdlock_buf *b = (etcdlock_buf *)0x1;
    CHECK_RC(etcdlock_get(g_client, K(data), &b), ETCDLOCK_OK);
    CHECK(b == NULL);
    if (b && b != (etcdlock_buf *)0x1) etcdlock_buf_free(b);

    /* Its release is refused and does not delete the new holder's key; nor does its free. */
    CHECK_RC(etcdlock_lock_release(stale), ETCDLOCK_E_NOT_HELD);
    CHECK(count_keys(prefix) == 1);
    CHECK(key_exists(fresh_key));
    etcdlock_lock_free(stale);
    sleep_ms(300);
    CHECK(count_keys(prefix) == 1);
    CHECK(key_exists(fresh_key));
    CHECK(etcdlock_lock_is_held(fresh));

    /* The new holder still writes and releases. */
    CHECK_RC(etcdlock_put(g_client, K(data), K("fresh"), fresh), ETCDLOCK_OK);
    b = NULL;
    CHECK_RC(etcdlock_get(g_client, K(data), &b), ETCDLOCK_OK);
    CHECK(b && etcdlock_buf_len(b) == 5 && memcmp(etcdlock_buf_data(b), "fresh", 5) == 0);
    etcdlock_buf_free(b);
    CHECK_RC(etcdlock_lock_release(fresh), ETCDLOCK_OK);
    CHECK(count_keys(prefix) == 0);
    etcdlock_lock_free(fresh);
    CHECK_RC(etcdlock_delete(g_client, K(data)), ETCDLOCK_OK);
    etcdlock_client_free(a);
}

/* Takes the next event of `w` and checks it; returns its revision (0 if there was none). */
static int64_t expect_event(etcdlock_watch *w, int type, const char *key, const char *value, int64_t after_rev, int line) {
    etcdlock_event *e = NULL;
    int rc = etcdlock_watch_next(w, 5000, &e);
    if (rc != ETCDLOCK_OK || !e) {
        fprintf(stderr, "  line %d: no event (%s), want %s %s\n", line, etcdlock_status_str(rc),
                type == ETCDLOCK_EVENT_PUT ? "PUT" : "DELETE", key);
        g_check_failures++;
        return 0;
    }
    size_t kl = 0, vl = 0;
    const uint8_t *k = etcdlock_event_key(e, &kl);
    const uint8_t *v = etcdlock_event_value(e, &vl);
    int64_t rev = etcdlock_event_revision(e);
    int ok = etcdlock_event_type(e) == type && kl == strlen(key) && memcmp(k, key, kl) == 0 &&
             vl == strlen(value) && (vl == 0 || memcmp(v, value, vl) == 0) && rev > after_rev;
    if (!ok) {
        fprintf(stderr, "  line %d: got type %d key %.*s value %.*s rev %" PRId64 "; want %d %s %s after rev %" PRId64 "\n",
                line, etcdlock_event_type(e), (int)kl, (const char *)k, (int)vl, (const char *)v, rev, type, key, value,
                after_rev);
        g_check_failures++;
    }
    etcdlock_event_free(e);
    return rev;
}
#define EXPECT_EVENT(w, type, key, value, after) expect_event(w, type, key, value, after, __LINE__)

/* The revision of `key`'s last change, or 0. */
static int64_t mod_rev(const char *key) {
    etcdlock_buf *b = NULL;
    if (etcdlock_get(g_client, K(key), &b) != ETCDLOCK_OK || !b) return 0;
    int64_t r = etcdlock_buf_mod_revision(b);
    etcdlock_buf_free(b);
    return r;
}

/* covers: WATCH-BASIC-001 */
static void test_watch_key_and_prefix(void) {
    char base[128], dir[140], key[160], other[160];
    unique(base, sizeof base, "wbasic");
    snprintf(dir, sizeof dir, "%s/", base);
    snprintf(key, sizeof key, "%s/a", base);
    snprintf(other, sizeof other, "%s/b", base);
    etcdlock_watch *wk = NULL, *wp = NULL;
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, 0, &wk), ETCDLOCK_OK);
    CHECK_RC(etcdlock_watch_open(g_client, K(dir), true, 0, &wp), ETCDLOCK_OK);
    if (!wk || !wp) {
        etcdlock_watch_free(wk);
        etcdlock_watch_free(wp);
        return;
    }
    CHECK_RC(etcdlock_put(g_client, K(key), K("one"), NULL), ETCDLOCK_OK);
    int64_t r1 = mod_rev(key);
    CHECK_RC(etcdlock_put(g_client, K(key), K("two"), NULL), ETCDLOCK_OK);
    int64_t r2 = mod_rev(key);
    CHECK_RC(etcdlock_put(g_client, K(other), K("x"), NULL), ETCDLOCK_OK);
    int64_t r3 = mod_rev(other);
    CHECK_RC(etcdlock_delete(g_client, K(key)), ETCDLOCK_OK);
    CHECK(r1 > 0 && r2 > r1 && r3 > r2);

    /* The key's watch: put, put, delete, in order, with their revisions; not the other key. */
    CHECK(EXPECT_EVENT(wk, ETCDLOCK_EVENT_PUT, key, "one", 0) == r1);
    CHECK(EXPECT_EVENT(wk, ETCDLOCK_EVENT_PUT, key, "two", r1) == r2);
    EXPECT_EVENT(wk, ETCDLOCK_EVENT_DELETE, key, "", r3);
    etcdlock_event *e = (etcdlock_event *)0x1;
    CHECK_RC(etcdlock_watch_next(wk, 300, &e), ETCDLOCK_E_TIMEOUT);

    /* The prefix watch: every key under it, in revision order. */
    CHECK(EXPECT_EVENT(wp, ETCDLOCK_EVENT_PUT, key, "one", 0) == r1);
    CHECK(EXPECT_EVENT(wp, ETCDLOCK_EVENT_PUT, key, "two", r1) == r2);
    CHECK(EXPECT_EVENT(wp, ETCDLOCK_EVENT_PUT, other, "x", r2) == r3);
    EXPECT_EVENT(wp, ETCDLOCK_EVENT_DELETE, key, "", r3);
    CHECK_RC(etcdlock_watch_next(wp, 300, &e), ETCDLOCK_E_TIMEOUT);
    CHECK(e == (etcdlock_event *)0x1);
    etcdlock_watch_free(wk);
    etcdlock_watch_free(wp);
    CHECK_RC(etcdlock_delete(g_client, K(other)), ETCDLOCK_OK);
}

/* covers: WATCH-START-001 */
static void test_watch_start_revision(void) {
    char key[128];
    unique(key, sizeof key, "wstart");
    CHECK_RC(etcdlock_put(g_client, K(key), K("v1"), NULL), ETCDLOCK_OK);
    int64_t r1 = mod_rev(key);
    CHECK_RC(etcdlock_put(g_client, K(key), K("v2"), NULL), ETCDLOCK_OK);
    int64_t r2 = mod_rev(key);
    CHECK_RC(etcdlock_delete(g_client, K(key)), ETCDLOCK_OK);
    CHECK(r1 > 0 && r2 > r1);

    /* From r1: the whole history from there, in order, then live changes, no gap. */
    etcdlock_watch *w = NULL;
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, r1, &w), ETCDLOCK_OK);
    if (!w) return;
    CHECK(EXPECT_EVENT(w, ETCDLOCK_EVENT_PUT, key, "v1", 0) == r1);
    CHECK(EXPECT_EVENT(w, ETCDLOCK_EVENT_PUT, key, "v2", r1) == r2);
    int64_t rd = EXPECT_EVENT(w, ETCDLOCK_EVENT_DELETE, key, "", r2);
    etcdlock_event *e = (etcdlock_event *)0x1;
    CHECK_RC(etcdlock_watch_next(w, 200, &e), ETCDLOCK_E_TIMEOUT);
    CHECK_RC(etcdlock_put(g_client, K(key), K("v3"), NULL), ETCDLOCK_OK);
    int64_t r4 = mod_rev(key);
    CHECK(EXPECT_EVENT(w, ETCDLOCK_EVENT_PUT, key, "v3", rd) == r4);
    etcdlock_watch_free(w);

    /* From r2: starts exactly there (r1 is not replayed). */
    w = NULL;
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, r2, &w), ETCDLOCK_OK);
    if (!w) return;
    CHECK(EXPECT_EVENT(w, ETCDLOCK_EVENT_PUT, key, "v2", 0) == r2);
    CHECK(EXPECT_EVENT(w, ETCDLOCK_EVENT_DELETE, key, "", r2) == rd);
    CHECK(EXPECT_EVENT(w, ETCDLOCK_EVENT_PUT, key, "v3", rd) == r4);
    CHECK_RC(etcdlock_watch_next(w, 200, &e), ETCDLOCK_E_TIMEOUT);
    CHECK(e == (etcdlock_event *)0x1);
    etcdlock_watch_free(w);
    CHECK_RC(etcdlock_delete(g_client, K(key)), ETCDLOCK_OK);
}

/* Threads of this process; `*rt` gets how many are the library's (named etcdlock-rt-N). */
static int count_threads(int *rt) {
    *rt = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int all = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.') continue;
        all++;
        char path[300], comm[64] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", ent->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(comm, sizeof comm, f) && strncmp(comm, "etcdlock-rt", 11) == 0) (*rt)++;
            fclose(f);
        }
    }
    closedir(d);
    return all;
}

/* covers: RT-ONE-001 */
static void test_one_runtime(void) {
    enum { N = 12 };
    int rt0 = 0, all0 = count_threads(&rt0); /* g_client is connected: the runtime runs */
    CHECK(rt0 > 0);
    etcdlock_client *cs[N];
    for (int i = 0; i < N; i++) {
        cs[i] = connect_client();
        etcdlock_buf *b = NULL;
        if (cs[i]) CHECK_RC(etcdlock_get(cs[i], K("ctest/one-runtime"), &b), ETCDLOCK_OK);
        etcdlock_buf_free(b);
    }
    int rt1 = 0, all1 = count_threads(&rt1);
    if (rt1 > rt0 || all1 > all0)
        fprintf(stderr, "  library threads %d -> %d, all threads %d -> %d with %d more clients\n", rt0, rt1, all0, all1, N);
    CHECK(rt1 <= rt0);
    CHECK(all1 <= all0);
    for (int i = 0; i < N; i++) etcdlock_client_free(cs[i]);
}

/* Many threads share one client. */
struct shared_arg {
    int id;
    atomic_int *failures;
};

static void *kv_worker(void *p) {
    struct shared_arg *a = p;
    char key[128];
    for (int i = 0; i < 20; i++) {
        snprintf(key, sizeof key, "ctest/%d/shared/%d/%d", (int)getpid(), a->id, i);
        etcdlock_buf *b = NULL;
        if (etcdlock_put(g_client, K(key), K("v"), NULL) != ETCDLOCK_OK ||
            etcdlock_get(g_client, K(key), &b) != ETCDLOCK_OK || !b ||
            etcdlock_delete(g_client, K(key)) != ETCDLOCK_OK)
            atomic_fetch_add(a->failures, 1);
        etcdlock_buf_free(b);
    }
    return NULL;
}

static void test_shared_client_threads(void) {
    atomic_int failures = 0;
    pthread_t t[8];
    struct shared_arg a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = (struct shared_arg){i, &failures};
        pthread_create(&t[i], NULL, kv_worker, &a[i]);
    }
    for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
    CHECK(atomic_load(&failures) == 0);
}

/* covers: CONN-CLOSED-001 (C closes with etcdlock_shutdown, which leaves the client allocated: every
 * call on it then fails with CLOSED; closing again, by a second shutdown or by etcdlock_client_free,
 * is a no-op. etcdlock_client_free itself cannot be called twice: the handle is gone.) */
static void test_shutdown(void) {
    etcdlock_lock *l = NULL;
    char name[128], key[160];
    unique(name, sizeof name, "shutdown");
    snprintf(key, sizeof key, "%s-key", name);
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    etcdlock_lease *lease = NULL;
    CHECK_RC(etcdlock_lease_grant(g_client, 10, &lease), ETCDLOCK_OK);
    etcdlock_watch *w = NULL;
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, 0, &w), ETCDLOCK_OK);
    CHECK_RC(etcdlock_shutdown(-5), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    /* Handles that survive shutdown report CLOSED, every call; outputs untouched. */
    etcdlock_buf *b = (etcdlock_buf *)0x1;
    CHECK_RC(etcdlock_get(g_client, K(name), &b), ETCDLOCK_E_CLOSED);
    CHECK(b == (etcdlock_buf *)0x1);
    CHECK_RC(etcdlock_put(g_client, K(key), K("v"), NULL), ETCDLOCK_E_CLOSED);
    CHECK_RC(etcdlock_put(g_client, K(key), K("v"), l), ETCDLOCK_E_CLOSED);
    CHECK_RC(etcdlock_put_with_lease(g_client, K(key), K("v"), lease), ETCDLOCK_E_CLOSED);
    CHECK_RC(etcdlock_delete(g_client, K(key)), ETCDLOCK_E_CLOSED);
    etcdlock_lease *lease2 = (etcdlock_lease *)0x1;
    CHECK_RC(etcdlock_lease_grant(g_client, 10, &lease2), ETCDLOCK_E_CLOSED);
    CHECK(lease2 == (etcdlock_lease *)0x1);
    etcdlock_lock *l2 = (etcdlock_lock *)0x1;
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, 0, NULL, &l2), ETCDLOCK_E_CLOSED);
    CHECK_RC(etcdlock_lock_acquire(g_client, name, 10, ETCDLOCK_WAIT_FOREVER, NULL, &l2), ETCDLOCK_E_CLOSED);
    CHECK(l2 == (etcdlock_lock *)0x1);
    etcdlock_watch *w2 = (etcdlock_watch *)0x1;
    CHECK_RC(etcdlock_watch_open(g_client, K(key), false, 0, &w2), ETCDLOCK_E_CLOSED);
    CHECK(w2 == (etcdlock_watch *)0x1);
    etcdlock_event *e = (etcdlock_event *)0x1;
    CHECK_RC(etcdlock_watch_next(w, 1000, &e), ETCDLOCK_E_CLOSED);
    CHECK(e == (etcdlock_event *)0x1);
    CHECK_RC(etcdlock_lease_revoke(lease), ETCDLOCK_E_CLOSED);
    CHECK(!etcdlock_lease_is_alive(lease));
    CHECK(!etcdlock_lock_is_held(l));
    CHECK(etcdlock_lock_release(l) != ETCDLOCK_OK);
    CHECK(etcdlock_lock_lost_reason(l) == ETCDLOCK_LOST_CLOSED);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK); /* closing again: no-op */
    CHECK_RC(etcdlock_get(g_client, K(name), &b), ETCDLOCK_E_CLOSED);
    etcdlock_watch_free(w);
    etcdlock_lease_free(lease);
    etcdlock_lock_free(l);
    etcdlock_client_free(g_client); /* already closed: frees only */
    g_client = NULL;
    CHECK_RC(etcdlock_shutdown(1000), ETCDLOCK_OK); /* nothing running: no-op */
    /* The library starts afresh. */
    char prefix[140];
    snprintf(prefix, sizeof prefix, "%s/", name);
    CHECK(count_keys(prefix) == 0);
    etcdlock_client *c = connect_client();
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    etcdlock_client_free(c);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
}

struct waiter {
    etcdlock_client *client;
    const char *name;
    etcdlock_lock *lock;
    int rc;
    atomic_int done;
};

static void *acquire_and_wait(void *p) {
    struct waiter *w = p;
    w->rc = etcdlock_lock_acquire(w->client, w->name, 10, ETCDLOCK_WAIT_FOREVER, NULL, &w->lock);
    atomic_store(&w->done, 1);
    return NULL;
}

/* covers: CONN-CLOSE-WAITER-001 (closed with etcdlock_shutdown: the C API forbids
 * etcdlock_client_free while another thread is inside a call on the client) */
static void test_close_fails_waiting_acquire(void) {
    char name[128], prefix[140], holder_key[200], args[400];
    unique(name, sizeof name, "closewait");
    snprintf(prefix, sizeof prefix, "%s/", name);
    /* The holder is outside this process (a lease and a queue key made with etcdctl), so the
     * close below cannot remove it: only the waiter's key may go. */
    char *out = etcdctl("lease grant 60");
    char lease_hex[40] = {0};
    CHECK(out && sscanf(out, "lease %39s granted", lease_hex) == 1);
    free(out);
    snprintf(holder_key, sizeof holder_key, "%s/%s", name, lease_hex);
    snprintf(args, sizeof args, "put --lease=%s '%s' ''", lease_hex, holder_key);
    free(etcdctl(args));
    CHECK(count_keys(prefix) == 1);

    etcdlock_client *c = connect_client();
    if (!c) return;
    /* The holder counts (its name is the lease ID as etcdctl prints it, zero-padded): a try
     * fails, so the waiter below really waits. */
    etcdlock_lock *tmp = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 10, 0, NULL, &tmp), ETCDLOCK_E_WOULD_BLOCK);
    struct waiter w = {c, name, (etcdlock_lock *)0x1, -1, 0};
    pthread_t t;
    pthread_create(&t, NULL, acquire_and_wait, &w);
    double end = now_ms() + 10000;
    while (count_keys(prefix) < 2 && now_ms() < end) sleep_ms(50);
    CHECK(count_keys(prefix) == 2); /* the waiter is queued */
    sleep_ms(200);
    CHECK(!atomic_load(&w.done));

    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK); /* closes every client, c included */
    int returned = wait_for(&w.done, 5000);
    CHECK(returned);
    if (!returned) {
        pthread_detach(t);
        return;
    }
    pthread_join(t, NULL);
    CHECK_RC(w.rc, ETCDLOCK_E_CLOSED);
    CHECK(w.lock == (etcdlock_lock *)0x1);
    /* The waiter's queue key is gone; the holder's is untouched. */
    CHECK(count_keys(prefix) == 1);
    CHECK(key_exists(holder_key));
    etcdlock_client_free(c);
    /* Freeing a client that survived shutdown revokes its shared lease, which restarts the
     * runtime for a background revoke: stop it again so that no library thread outlives main. */
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    snprintf(args, sizeof args, "lease revoke %s", lease_hex);
    free(etcdctl(args));
    CHECK(count_keys(prefix) == 0);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_status_and_errors);
    RUN(test_client_options_and_new);
    g_client = connect_client();
    if (!g_client) {
        printf("FAIL - connect to %s\n", endpoints());
        return 1;
    }
    RUN(test_connect_unreachable);
    RUN(test_kv);
    RUN(test_lock_basic);
    RUN(test_lock_bad_args);
    RUN(test_locks_share_the_clients_lease);
    RUN(test_try_once_and_timeout_cleanup);
    RUN(test_cancel_cleanup);
    RUN(test_lost_after_external_revoke);
    RUN(test_no_callback_after_free);
    RUN(test_callback_frees_own_lock);
    RUN(test_client_free_closes);
    RUN(test_lease);
    RUN(test_lease_min_ttl);
    RUN(test_lock_lost_key_deleted);
    RUN(test_fenced_stale_holder);
    RUN(test_watch);
    RUN(test_watch_key_and_prefix);
    RUN(test_watch_start_revision);
    RUN(test_one_runtime);
    RUN(test_shared_client_threads);
    RUN(test_shutdown);
    RUN(test_close_fails_waiting_acquire);
    return summary("test_api");
}
