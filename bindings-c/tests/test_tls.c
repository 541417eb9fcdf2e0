/* TLS and mTLS against real etcd members serving https (test.sh starts them with
 * `tests/etcd_harness.py start --tls CERT_DIR [--client-cert-auth]`, certificates made with
 * openssl at test time): the TLS fields of etcdlock_client_options.
 * Env: ETCDLOCK_TLS_ENDPOINT / ETCDLOCK_TLS_PLAIN_ENDPOINT (a member serving https with a
 * server certificate; its plain http listener), ETCDLOCK_MTLS_ENDPOINT (one requiring client
 * certificates), ETCDLOCK_OTHER_NAME_ENDPOINT (one whose certificate, signed by the same CA,
 * names only DNS:other.invalid), ETCDLOCK_CERT_DIR (ca, other, server, client, stranger:
 * NAME.pem, NAME.key).
 * Scenario IDs of tests/conformance/scenarios.md are named in `covers:` comments. */
#include "check.h"
#include <errno.h>

#define K(s) (const uint8_t *)(s), strlen(s)

static const char *g_https, *g_plain, *g_mtls, *g_other_name, *g_dir;

static const char *need(const char *var) {
    const char *v = getenv(var);
    if (!v || !*v) {
        printf("FAIL - %s is not set (run through bindings-c/test.sh)\n", var);
        exit(1);
    }
    return v;
}

/* DIR/NAME in one of a few static buffers (enough for one call's arguments). */
static const char *cert(const char *name) {
    static char bufs[6][512];
    static int next;
    char *b = bufs[next++ % 6];
    snprintf(b, sizeof bufs[0], "%s/%s", g_dir, name);
    return b;
}

/* The whole file (caller frees), its length in *len. */
static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *buf = malloc(65536);
    *len = buf ? fread(buf, 1, 65536, f) : 0;
    fclose(f);
    return buf;
}

static char g_msg[1024];
static const char *last_message(void) {
    etcdlock_last_error(g_msg, sizeof g_msg);
    return g_msg;
}

/* Whether the last error message contains `needle` (case-insensitive); says so if not. */
static int says(const char *needle) {
    if (strcasestr(last_message(), needle)) return 1;
    fprintf(stderr, "  message \"%s\" does not name \"%s\"\n", g_msg, needle);
    return 0;
}

static etcdlock_client_options with_ca_file(const char *ca) {
    etcdlock_client_options o;
    etcdlock_client_options_init(&o);
    o.ca_file = ca;
    return o;
}

/* `endpoint` with port `port` taken from another endpoint (e.g. https://localhost:<port>). */
static void with_port(char *out, size_t len, const char *prefix, const char *from) {
    snprintf(out, len, "%s%s", prefix, strrchr(from, ':') + 1);
}

/* put/get; lock, guarded write, release, a guarded write after it refused. */
static void kv_and_lock(etcdlock_client *c, const char *tag) {
    char key[200], name[160];
    unique(name, sizeof name, tag);
    snprintf(key, sizeof key, "%s-k", name);
    CHECK_RC(etcdlock_put(c, K(key), K("v"), NULL), ETCDLOCK_OK);
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(c, K(key), &b), ETCDLOCK_OK);
    CHECK(b && etcdlock_buf_len(b) == 1 && etcdlock_buf_data(b)[0] == 'v');
    etcdlock_buf_free(b);
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, name, 5, 5000, NULL, &l), ETCDLOCK_OK);
    CHECK(l && etcdlock_lock_fencing_token(l) > 0 && etcdlock_lock_is_held(l));
    CHECK_RC(etcdlock_put(c, K(key), K("fenced"), l), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
    CHECK_RC(etcdlock_put(c, K(key), K("stale"), l), ETCDLOCK_E_NOT_HELD);
    etcdlock_lock_free(l);
    CHECK_RC(etcdlock_delete(c, K(key)), ETCDLOCK_OK);
}

/* covers: TLS-CA-001 (CA file, by IP: KV, lock, guarded write, a lease past its TTL, a watch) */
static void test_ca_file_by_ip(void) {
    etcdlock_client_options o = with_ca_file(cert("ca.pem"));
    etcdlock_client *c = NULL;
    CHECK_RC(etcdlock_client_new(g_https, &o, &c), ETCDLOCK_OK);
    if (!c) return;
    kv_and_lock(c, "tls-ip");

    char key[160], args[300];
    unique(key, sizeof key, "tls-seen");
    CHECK_RC(etcdlock_put(c, K(key), K("over tls"), NULL), ETCDLOCK_OK);
    snprintf(args, sizeof args, "get --print-value-only '%s'", key);
    char *seen = etcdctl_at(g_plain, args); /* written over TLS, read over the plain port */
    CHECK(seen && strncmp(seen, "over tls", 8) == 0);
    free(seen);
    CHECK_RC(etcdlock_delete(c, K(key)), ETCDLOCK_OK);

    /* A 2 s lease lives 3 s: its keepalive stream runs over TLS too. */
    etcdlock_lease *lease = NULL;
    CHECK_RC(etcdlock_lease_grant(c, 2, &lease), ETCDLOCK_OK);
    unique(key, sizeof key, "tls-leased");
    CHECK_RC(etcdlock_put_with_lease(c, K(key), K("l"), lease), ETCDLOCK_OK);
    sleep_ms(3000);
    CHECK(etcdlock_lease_is_alive(lease));
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(c, K(key), &b), ETCDLOCK_OK);
    CHECK(b != NULL);
    etcdlock_buf_free(b);
    CHECK_RC(etcdlock_lease_revoke(lease), ETCDLOCK_OK);
    etcdlock_lease_free(lease);
    b = (etcdlock_buf *)0x1;
    CHECK_RC(etcdlock_get(c, K(key), &b), ETCDLOCK_OK);
    CHECK(b == NULL);

    char prefix[140];
    unique(prefix, sizeof prefix - 1, "tls-watch");
    strcat(prefix, "/");
    etcdlock_watch *w = NULL;
    CHECK_RC(etcdlock_watch_open(c, K(prefix), true, 0, &w), ETCDLOCK_OK);
    snprintf(key, sizeof key, "%sa", prefix);
    CHECK_RC(etcdlock_put(c, K(key), K("1"), NULL), ETCDLOCK_OK);
    CHECK_RC(etcdlock_delete(c, K(key)), ETCDLOCK_OK);
    int want[] = {ETCDLOCK_EVENT_PUT, ETCDLOCK_EVENT_DELETE};
    for (int i = 0; i < 2 && w; i++) {
        etcdlock_event *e = NULL;
        CHECK_RC(etcdlock_watch_next(w, 5000, &e), ETCDLOCK_OK);
        size_t len = 0;
        CHECK(e && etcdlock_event_type(e) == want[i]);
        CHECK(e && (etcdlock_event_key(e, &len), len == strlen(key)));
        etcdlock_event_free(e);
    }
    etcdlock_watch_free(w);
    etcdlock_client_free(c);
}

/* covers: TLS-CA-001 (CA as a PEM buffer; https://localhost; by IP with server_name) */
static void test_ca_pem_by_name_and_server_name(void) {
    size_t len = 0;
    uint8_t *pem = slurp(cert("ca.pem"), &len);
    CHECK(pem && len > 0);
    etcdlock_client_options o;
    etcdlock_client_options_init(&o);
    o.ca_pem = pem;
    o.ca_pem_len = len;
    char by_name[128];
    with_port(by_name, sizeof by_name, "https://localhost:", g_https);
    etcdlock_client *c = NULL;
    CHECK_RC(etcdlock_client_new(by_name, &o, &c), ETCDLOCK_OK);
    if (c) kv_and_lock(c, "tls-dns");
    etcdlock_client_free(c);

    o.server_name = "localhost";
    c = NULL;
    CHECK_RC(etcdlock_client_new(g_https, &o, &c), ETCDLOCK_OK);
    if (c) kv_and_lock(c, "tls-sni");
    etcdlock_client_free(c);
    free(pem); /* copied by etcdlock_client_new */
}

/* covers: TLS-MTLS-001 */
static void test_mtls(void) {
    etcdlock_client_options o = with_ca_file(cert("ca.pem"));
    o.cert_file = cert("client.pem");
    o.key_file = cert("client.key");
    etcdlock_client *c = NULL;
    CHECK_RC(etcdlock_client_new(g_mtls, &o, &c), ETCDLOCK_OK);
    if (c) kv_and_lock(c, "mtls-files");
    etcdlock_client_free(c);

    /* The client certificate and key as PEM buffers. */
    size_t cert_len = 0, key_len = 0;
    uint8_t *cert_pem = slurp(cert("client.pem"), &cert_len), *key_pem = slurp(cert("client.key"), &key_len);
    o = with_ca_file(cert("ca.pem"));
    o.cert_pem = cert_pem, o.cert_pem_len = cert_len;
    o.key_pem = key_pem, o.key_pem_len = key_len;
    c = NULL;
    CHECK_RC(etcdlock_client_new(g_mtls, &o, &c), ETCDLOCK_OK);
    if (c) kv_and_lock(c, "mtls-pem");
    etcdlock_client_free(c);
    free(cert_pem);
    free(key_pem);

    /* Without a client certificate, and with one from another CA: refused at once. */
    const char *certs[][2] = {{NULL, NULL}, {"stranger.pem", "stranger.key"}};
    for (int i = 0; i < 2; i++) {
        o = with_ca_file(cert("ca.pem"));
        o.cert_file = certs[i][0] ? cert(certs[i][0]) : NULL;
        o.key_file = certs[i][1] ? cert(certs[i][1]) : NULL;
        c = (etcdlock_client *)0x1;
        double t0 = now_ms();
        CHECK_RC(etcdlock_client_new(g_mtls, &o, &c), ETCDLOCK_E_AUTH);
        CHECK(now_ms() - t0 < 4500);
        CHECK(says("certificate"));
        CHECK(c == (etcdlock_client *)0x1);
    }
}

/* covers: TLS-BADCERT-001 */
static void test_untrusted_certificate_and_wrong_scheme(void) {
    etcdlock_client_options o = with_ca_file(cert("other.pem"));
    etcdlock_client *c = (etcdlock_client *)0x1;
    double t0 = now_ms();
    CHECK_RC(etcdlock_client_new(g_https, &o, &c), ETCDLOCK_E_UNAVAILABLE);
    CHECK(now_ms() - t0 < 4500); /* at once, not after the 5 s connect timeout */
    CHECK(says("certificate"));

    /* http:// against the https port; https:// against the plain port. */
    char http_to_tls[128], https_to_plain[128];
    with_port(http_to_tls, sizeof http_to_tls, "http://127.0.0.1:", g_https);
    with_port(https_to_plain, sizeof https_to_plain, "https://127.0.0.1:", g_plain);
    etcdlock_client_options plain;
    etcdlock_client_options_init(&plain);
    plain.connect_timeout_ms = 2000;
    o = with_ca_file(cert("ca.pem"));
    o.connect_timeout_ms = 2000;
    struct { const char *ep; etcdlock_client_options *o; } cases[] = {{http_to_tls, &plain}, {https_to_plain, &o}};
    for (int i = 0; i < 2; i++) {
        t0 = now_ms();
        CHECK_RC(etcdlock_client_new(cases[i].ep, cases[i].o, &c), ETCDLOCK_E_UNAVAILABLE);
        double took = now_ms() - t0;
        if (took >= 2000 + 1500) fprintf(stderr, "  %s took %.0f ms\n", cases[i].ep, took);
        CHECK(took < 2000 + 1500);
        CHECK(says("tls"));
    }
    CHECK(c == (etcdlock_client *)0x1);
}

/* Expects INVALID_ARGUMENT from connecting to `ep` with `o`, with a message naming `needle`. */
static void invalid(const char *ep, const etcdlock_client_options *o, const char *needle) {
    etcdlock_client *c = (etcdlock_client *)0x1;
    CHECK_RC(etcdlock_client_new(ep, o, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(says(needle));
    CHECK(c == (etcdlock_client *)0x1);
}

/* covers: TLS-ARGS-001 */
static void test_tls_arguments(void) {
    etcdlock_client_options o = with_ca_file("/nonexistent/no-such-ca.pem");
    invalid(g_https, &o, "no-such-ca.pem");
    o.ca_file = "/nonexistent/not-utf8-\xff.pem"; /* a path is bytes: named, not refused as text */
    invalid(g_https, &o, "/nonexistent/not-utf8-");

    char garbage[600];
    snprintf(garbage, sizeof garbage, "/tmp/ctest-garbage-%d.pem", (int)getpid());
    FILE *f = fopen(garbage, "w");
    CHECK(f != NULL);
    if (f) fputs("not a certificate\n", f), fclose(f);
    o = with_ca_file(garbage);
    invalid(g_https, &o, "ctest-garbage-");
    unlink(garbage);

    o = with_ca_file(NULL);
    o.ca_pem = (const uint8_t *)"not a certificate", o.ca_pem_len = 17;
    invalid(g_https, &o, "no CERTIFICATE");
    /* A malformed key never shows up in the message. */
    static const char secret[] = "-----BEGIN PRIVATE KEY-----\nSECRETKEYMATERIAL\n-----END PRIVATE KEY-----\n";
    o = with_ca_file(cert("ca.pem"));
    o.cert_file = cert("client.pem");
    o.key_pem = (const uint8_t *)secret, o.key_pem_len = sizeof secret - 1;
    invalid(g_mtls, &o, "key");
    CHECK(strstr(g_msg, "SECRETKEYMATERIAL") == NULL);

    /* Buffers and fields that cannot go together. */
    o = with_ca_file(cert("ca.pem"));
    o.ca_pem = (const uint8_t *)"x", o.ca_pem_len = 1;
    invalid(g_https, &o, "both set");
    o = with_ca_file(NULL);
    o.ca_pem_len = 5; /* NULL with a length */
    invalid(g_https, &o, "ca_pem is NULL");
    o = with_ca_file(cert("ca.pem"));
    o.cert_file = cert("client.pem"); /* no key */
    invalid(g_mtls, &o, "key");
    o = with_ca_file(cert("ca.pem"));
    o.server_name = "\xff\xfe";
    invalid(g_https, &o, "server_name");
    o.server_name = "not a name!";
    invalid(g_https, &o, "server_name");
    o = with_ca_file("");
    invalid(g_https, &o, "ca_file");

    /* TLS options with http:// endpoints; http:// mixed with https://. */
    o = with_ca_file(cert("ca.pem"));
    invalid(g_plain, &o, "http");
    char mixed[600];
    snprintf(mixed, sizeof mixed, "%s,%s", g_https, g_plain);
    invalid(mixed, NULL, "http");
    invalid(mixed, &o, "http");

    /* A password never shows up in a message either. */
    o = with_ca_file(cert("ca.pem"));
    o.user = "app", o.password = "hunter2-secret";
    o.connect_timeout_ms = 1000;
    etcdlock_client *c = NULL;
    int rc = etcdlock_client_new(g_https, &o, &c); /* etcd without auth: ok or refused */
    if (rc != ETCDLOCK_OK) CHECK(strstr(last_message(), "hunter2") == NULL);
    etcdlock_client_free(c);
    o.user = "\xff";
    invalid(g_https, &o, "opts->user");
    CHECK(strstr(g_msg, "hunter2") == NULL);
}

/* covers: TLS-NAME-001 */
static void test_certificate_for_another_name_needs_server_name(void) {
    etcdlock_client_options o = with_ca_file(cert("ca.pem"));
    etcdlock_client *c = (etcdlock_client *)0x1;
    double start = now_ms();
    CHECK_RC(etcdlock_client_new(g_other_name, &o, &c), ETCDLOCK_E_UNAVAILABLE);
    CHECK(now_ms() - start < 4500);
    CHECK(c == (etcdlock_client *)0x1);
    CHECK(says("server_name"));
    o.server_name = "other.invalid";
    c = NULL;
    CHECK_RC(etcdlock_client_new(g_other_name, &o, &c), ETCDLOCK_OK);
    if (!c) return;
    kv_and_lock(c, "tls-other-name");
    etcdlock_client_free(c);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_https = need("ETCDLOCK_TLS_ENDPOINT");
    g_plain = need("ETCDLOCK_TLS_PLAIN_ENDPOINT");
    g_mtls = need("ETCDLOCK_MTLS_ENDPOINT");
    g_other_name = need("ETCDLOCK_OTHER_NAME_ENDPOINT");
    g_dir = need("ETCDLOCK_CERT_DIR");
    RUN(test_ca_file_by_ip);
    RUN(test_ca_pem_by_name_and_server_name);
    RUN(test_mtls);
    RUN(test_untrusted_certificate_and_wrong_scheme);
    RUN(test_certificate_for_another_name_needs_server_name);
    RUN(test_tls_arguments);
    return summary("test_tls");
}
