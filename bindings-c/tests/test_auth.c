/* A least-privilege user and token refresh against real etcd members with auth enabled (test.sh
 * starts two plain members; this program enables auth on them with etcdctl: root, and a user
 * `app` with readwrite on `app/` only): the user/password fields of etcdlock_client_options.
 * Env: ETCDLOCK_AUTH_ENDPOINT (a member), ETCDLOCK_AUTH_TTL_ENDPOINT (one started with
 * `--auth-token-ttl 2`), ETCDLOCK_ETCDCTL.
 * Scenario IDs of tests/conformance/scenarios.md are named in `covers:` comments. */
#include "check.h"
#include <pthread.h>

#define K(s) (const uint8_t *)(s), strlen(s)

static const char *g_auth, *g_ttl;

static const char *need(const char *var) {
    const char *v = getenv(var);
    if (!v || !*v) {
        printf("FAIL - %s is not set (run through bindings-c/test.sh)\n", var);
        exit(1);
    }
    return v;
}

/* etcdctl as root against `eps`; returns whether it succeeded (output in *out if asked). */
static int root_ctl(const char *eps, const char *args, char **out) {
    char all[600];
    snprintf(all, sizeof all, "--user root:rootpw %s", args);
    const char *bin = getenv("ETCDLOCK_ETCDCTL");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ETCDCTL_API=3 %s --endpoints=%s %s 2>&1", bin ? bin : "etcdctl", eps, all);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = 0;
    int ok = pclose(p) == 0;
    if (!ok) fprintf(stderr, "  etcdctl %s failed: %s\n", args, buf);
    if (out) *out = strdup(buf);
    return ok;
}

/* Enables auth on `eps`: root, and `app` with readwrite on `app/` only. */
static void setup_auth(const char *eps) {
    static const char *steps[] = {
        "user add root:rootpw",
        "user grant-role root root",
        "role add app",
        "role grant-permission app --prefix=true readwrite app/",
        "user add app:apppw",
        "user grant-role app app",
        "auth enable",
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (!root_ctl(eps, steps[i], NULL)) {
            printf("FAIL - setting up auth on %s: %s\n", eps, steps[i]);
            exit(1);
        }
    }
}

static etcdlock_client_options app_opts(const char *password) {
    etcdlock_client_options o;
    etcdlock_client_options_init(&o);
    o.user = "app";
    o.password = password;
    o.connect_timeout_ms = 3000;
    return o;
}

static etcdlock_client *connect_app(const char *eps) {
    etcdlock_client_options o = app_opts("apppw");
    etcdlock_client *c = NULL;
    CHECK_RC(etcdlock_client_new(eps, &o, &c), ETCDLOCK_OK);
    return c;
}

/* The value of `key` is `want`. */
static void check_value(etcdlock_client *c, const char *key, const char *want) {
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(c, K(key), &b), ETCDLOCK_OK);
    CHECK(b && etcdlock_buf_len(b) == strlen(want) && memcmp(etcdlock_buf_data(b), want, strlen(want)) == 0);
    etcdlock_buf_free(b);
}

/* Reads events of `w` (up to 20, 5 s each) until one for `key`; whether it came. */
static int sees(etcdlock_watch *w, const char *key) {
    for (int i = 0; i < 20 && w; i++) {
        etcdlock_event *e = NULL;
        int rc = etcdlock_watch_next(w, 5000, &e);
        if (rc != ETCDLOCK_OK) {
            fprintf(stderr, "  watch_next: %s\n", etcdlock_status_str(rc));
            return 0;
        }
        size_t len = 0;
        const uint8_t *k = etcdlock_event_key(e, &len);
        int match = len == strlen(key) && memcmp(k, key, len) == 0;
        etcdlock_event_free(e);
        if (match) return 1;
    }
    return 0;
}

/* covers: AUTH-PREFIX-001 */
static void test_user_granted_one_prefix(void) {
    etcdlock_client *c = connect_app(g_auth);
    if (!c) return;
    etcdlock_watch *w = NULL;
    CHECK_RC(etcdlock_watch_open(c, K("app/"), true, 0, &w), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put(c, K("app/k"), K("v"), NULL), ETCDLOCK_OK);
    check_value(c, "app/k", "v");
    etcdlock_lease *lease = NULL;
    CHECK_RC(etcdlock_lease_grant(c, 5, &lease), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put_with_lease(c, K("app/leased"), K("l"), lease), ETCDLOCK_OK);
    check_value(c, "app/leased", "l");
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, "app/lock", 5, 5000, NULL, &l), ETCDLOCK_OK);
    CHECK(l && etcdlock_lock_is_held(l) && etcdlock_lock_fencing_token(l) > 0);
    CHECK_RC(etcdlock_put(c, K("app/data"), K("1"), l), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    CHECK(sees(w, "app/k"));

    /* Outside the prefix: ETCDLOCK_E_AUTH at once, nothing written, outputs untouched. */
    double start = now_ms();
    etcdlock_buf *b = (etcdlock_buf *)0x1;
    CHECK_RC(etcdlock_get(c, K("other"), &b), ETCDLOCK_E_AUTH);
    CHECK(b == (etcdlock_buf *)0x1);
    CHECK_RC(etcdlock_put(c, K("other"), K("x"), NULL), ETCDLOCK_E_AUTH);
    etcdlock_lock *denied = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, "other", 5, 5000, NULL, &denied), ETCDLOCK_E_AUTH);
    CHECK(denied == NULL);
    etcdlock_watch *wdenied = NULL;
    CHECK_RC(etcdlock_watch_open(c, K("other"), false, 0, &wdenied), ETCDLOCK_E_AUTH);
    CHECK(wdenied == NULL);
    double ms = now_ms() - start;
    if (ms >= 3000) fprintf(stderr, "  outside calls took %.0f ms\n", ms);
    CHECK(ms < 3000);
    char *keys = NULL;
    CHECK(root_ctl(g_auth, "get --prefix --keys-only other", &keys));
    CHECK(keys && keys[0] == 0);
    free(keys);

    /* The watch inside goes on. */
    CHECK_RC(etcdlock_put(c, K("app/k2"), K("v2"), NULL), ETCDLOCK_OK);
    CHECK(sees(w, "app/k2"));
    etcdlock_watch_free(w);
    CHECK_RC(etcdlock_lease_revoke(lease), ETCDLOCK_OK);
    etcdlock_lease_free(lease);
    b = (etcdlock_buf *)0x1;
    CHECK_RC(etcdlock_get(c, K("app/leased"), &b), ETCDLOCK_OK);
    CHECK(b == NULL);
    etcdlock_client_free(c);
}

struct waiter {
    etcdlock_client *client;
    int rc;
    etcdlock_lock *lock;
    volatile int done;
};

static void *wait_for_lock(void *arg) {
    struct waiter *w = arg;
    w->rc = etcdlock_lock_acquire(w->client, "app/held", 5, 20000, NULL, &w->lock);
    __atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* covers: AUTH-REFRESH-001 (a request after idling past the token, a lock held past it while another waits) */
static void test_refresh_after_idle_and_lock_held_past_the_token(void) {
    etcdlock_client *a = connect_app(g_ttl), *bc = connect_app(g_ttl);
    if (!a || !bc) {
        etcdlock_client_free(a);
        etcdlock_client_free(bc);
        return;
    }
    sleep_ms(4000); /* the token lives 2 s */
    CHECK_RC(etcdlock_put(a, K("app/after-idle"), K("1"), NULL), ETCDLOCK_OK);
    check_value(a, "app/after-idle", "1");

    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(a, "app/held", 5, 5000, NULL, &l), ETCDLOCK_OK);
    struct waiter w = {bc, -1, NULL, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, wait_for_lock, &w) == 0);
    sleep_ms(4000); /* only keepalives go meanwhile */
    CHECK(l && etcdlock_lock_is_held(l));
    CHECK(!__atomic_load_n(&w.done, __ATOMIC_SEQ_CST));
    CHECK_RC(etcdlock_put(a, K("app/fenced"), K("x"), l), ETCDLOCK_OK);
    int64_t first = etcdlock_lock_fencing_token(l);
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    pthread_join(t, NULL); /* bounded: the waiter's timeout is 20 s */
    CHECK_RC(w.rc, ETCDLOCK_OK);
    CHECK(w.lock && etcdlock_lock_is_held(w.lock) && etcdlock_lock_fencing_token(w.lock) > first);
    CHECK_RC(etcdlock_lock_release(w.lock), ETCDLOCK_OK);
    etcdlock_lock_free(w.lock);
    char *keys = NULL;
    CHECK(root_ctl(g_ttl, "get --prefix --keys-only app/held", &keys));
    CHECK(keys && keys[0] == 0);
    free(keys);
    etcdlock_client_free(a);
    etcdlock_client_free(bc);
}

/* covers: AUTH-REFRESH-001 (a new watch on a stream idle past the token; a wrong password) */
static void test_watch_after_idle_and_wrong_password(void) {
    etcdlock_client *c = connect_app(g_ttl);
    if (!c) return;
    etcdlock_watch *before = NULL, *after = NULL;
    CHECK_RC(etcdlock_watch_open(c, K("app/w1"), false, 0, &before), ETCDLOCK_OK);
    sleep_ms(4000);
    CHECK_RC(etcdlock_watch_open(c, K("app/w2"), false, 0, &after), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put(c, K("app/w1"), K("a"), NULL), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put(c, K("app/w2"), K("b"), NULL), ETCDLOCK_OK);
    CHECK(sees(before, "app/w1"));
    CHECK(sees(after, "app/w2"));
    etcdlock_watch_free(before);
    etcdlock_watch_free(after);
    etcdlock_client_free(c);

    etcdlock_client_options o = app_opts("nope-secret");
    etcdlock_client *bad = (etcdlock_client *)0x1;
    double start = now_ms();
    CHECK_RC(etcdlock_client_new(g_ttl, &o, &bad), ETCDLOCK_E_AUTH);
    CHECK(now_ms() - start < 2000);
    CHECK(bad == (etcdlock_client *)0x1);
    char msg[1024];
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "nope-secret") == NULL);
}

/* covers: AUTH-REFRESH-002
 * g_auth's member issues JWTs (bindings-c/test.sh), which a role change makes old. */
static void test_token_made_old_by_a_role_change(void) {
    etcdlock_client *c = connect_app(g_auth);
    if (!c) return;
    /* A watch stream and a keepalive stream opened with the token of the current auth revision. */
    etcdlock_watch *before = NULL, *after = NULL;
    CHECK_RC(etcdlock_watch_open(c, K("app/w1"), false, 0, &before), ETCDLOCK_OK);
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, "app/held", 3, 5000, NULL, &l), ETCDLOCK_OK);
    /* Any change to users or roles makes every token issued before it old. */
    CHECK(root_ctl(g_auth, "role grant-permission app read elsewhere", NULL));
    CHECK_RC(etcdlock_put(c, K("app/after"), K("1"), NULL), ETCDLOCK_OK);
    check_value(c, "app/after", "1");
    /* A new watch on the open watch stream: etcd checks the stream's (old) token. */
    CHECK_RC(etcdlock_watch_open(c, K("app/w2"), false, 0, &after), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put(c, K("app/w1"), K("a"), NULL), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put(c, K("app/w2"), K("b"), NULL), ETCDLOCK_OK);
    CHECK(sees(before, "app/w1"));
    CHECK(sees(after, "app/w2"));
    sleep_ms(7000); /* held past its TTL twice over: only keepalives go meanwhile */
    CHECK(l && etcdlock_lock_is_held(l));
    CHECK_RC(etcdlock_put(c, K("app/fenced"), K("x"), l), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    etcdlock_lock_free(l);
    CHECK_RC(etcdlock_put(c, K("app/w1"), K("c"), NULL), ETCDLOCK_OK);
    CHECK(sees(before, "app/w1"));
    etcdlock_watch_free(before);
    etcdlock_watch_free(after);
    char *keys = NULL;
    CHECK(root_ctl(g_auth, "get --prefix --keys-only app/held", &keys));
    CHECK(keys && keys[0] == 0);
    free(keys);
    etcdlock_client_free(c);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_auth = need("ETCDLOCK_AUTH_ENDPOINT");
    g_ttl = need("ETCDLOCK_AUTH_TTL_ENDPOINT");
    setup_auth(g_auth);
    setup_auth(g_ttl);
    RUN(test_user_granted_one_prefix);
    RUN(test_refresh_after_idle_and_lock_held_past_the_token);
    RUN(test_watch_after_idle_and_wrong_password);
    RUN(test_token_made_old_by_a_role_change);
    return summary("test_auth");
}
