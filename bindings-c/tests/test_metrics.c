/* A client's metrics (etcdlock_client_metrics_text): exact after a known sequence, and text
 * that a strict Prometheus reader (tests/prometheus_text.py, run with python3) accepts. */
#include "check.h"

/* The repository's root, from this file's path (test.sh compiles it by its absolute path). */
static void repo_root(char *buf, size_t len) {
    snprintf(buf, len, "%s", __FILE__);
    char *cut = strstr(buf, "/bindings-c/tests/");
    if (cut) *cut = 0;
    else snprintf(buf, len, ".");
}

/* The samples of `text` as "name value" lines from the strict reader, or NULL (and a failed
 * check) when it refuses the text. The caller frees. */
static char *parse_prometheus(const char *text, const char *client) {
    char root[512], file[] = "/tmp/etcdlock-metrics-XXXXXX", cmd[1200];
    repo_root(root, sizeof root);
    int fd = mkstemp(file);
    if (fd < 0) return NULL;
    size_t len = strlen(text);
    CHECK(write(fd, text, len) == (ssize_t)len);
    close(fd);
    /* Every series must carry client="<client>" first (the reader leaves it out of the names). */
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/prometheus_text.py' --lines --client '%s' < '%s'", root, client, file);
    FILE *p = popen(cmd, "r");
    char *out = calloc(1, 65536);
    size_t n = p && out ? fread(out, 1, 65535, p) : 0;
    int rc = p ? pclose(p) : -1;
    unlink(file);
    CHECK(rc == 0);
    if (rc != 0 || n == 0) {
        fprintf(stderr, "  the reader refused the text:\n%s\n", text);
        free(out);
        return NULL;
    }
    return out;
}

/* The value of `sample` in the reader's lines, or -1. */
static double sample(const char *lines, const char *name) {
    size_t len = strlen(name);
    for (const char *l = lines; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, name, len) == 0 && l[len] == ' ') return atof(l + len + 1);
    }
    fprintf(stderr, "  no sample %s\n", name);
    return -1;
}

/* A client named `name` (the client label of its metrics). */
static etcdlock_client *named_client(const char *name) {
    etcdlock_client_options opts = ETCDLOCK_CLIENT_OPTIONS_INIT;
    opts.name = name;
    etcdlock_client *c = NULL;
    CHECK_RC(etcdlock_client_new(endpoints(), &opts, &c), ETCDLOCK_OK);
    return c;
}

/* covers: OBS-METRICS-001 */
static void test_counts_and_histograms_exact_after_a_known_sequence(void) {
    etcdlock_client *a = named_client("a"), *b = named_client("b");
    char name[128];
    unique(name, sizeof name, "metrics");
    etcdlock_lock *l = NULL;
    for (int i = 0; i < 3; i++) {
        CHECK_RC(etcdlock_lock_acquire(a, name, 10, 5000, NULL, &l), ETCDLOCK_OK);
        CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_OK);
        etcdlock_lock_free(l);
    }
    /* One timeout: the other client holds the lock. */
    etcdlock_lock *held = NULL, *none = NULL;
    CHECK_RC(etcdlock_lock_acquire(b, name, 10, 5000, NULL, &held), ETCDLOCK_OK);
    CHECK_RC(etcdlock_lock_acquire(a, name, 10, 200, NULL, &none), ETCDLOCK_E_LOCK_TIMEOUT);
    CHECK_RC(etcdlock_lock_release(held), ETCDLOCK_OK);
    etcdlock_lock_free(held);
    /* One loss: an operator deletes the key; the release after it fails. */
    CHECK_RC(etcdlock_lock_acquire(a, name, 10, 5000, NULL, &l), ETCDLOCK_OK);
    size_t klen = 0;
    const uint8_t *key = etcdlock_lock_key(l, &klen);
    CHECK(ctl("del '%.*s'", (int)klen, (const char *)key));
    for (int i = 0; i < 250 && etcdlock_lock_is_held(l); i++) sleep_ms(20);
    CHECK(!etcdlock_lock_is_held(l));
    CHECK_RC(etcdlock_lock_release(l), ETCDLOCK_E_NOT_HELD);
    etcdlock_lock_free(l);

    char *text = NULL;
    CHECK_RC(etcdlock_client_metrics_text(a, &text), ETCDLOCK_OK);
    char *s = text ? parse_prometheus(text, "a") : NULL;
    if (s) {
        CHECK(sample(s, "etcdlock_lock_acquisitions_total") == 4);
        CHECK(sample(s, "etcdlock_lock_timeouts_total") == 1);
        CHECK(sample(s, "etcdlock_lock_would_block_total") == 0);
        CHECK(sample(s, "etcdlock_lock_acquire_failures_total") == 0);
        CHECK(sample(s, "etcdlock_lock_releases_total") == 3);
        CHECK(sample(s, "etcdlock_lock_release_failures_total") == 1);
        CHECK(sample(s, "etcdlock_lock_losses_total{reason=\"key_deleted\"}") == 1);
        CHECK(sample(s, "etcdlock_lock_losses_total{reason=\"expired\"}") == 0);
        CHECK(sample(s, "etcdlock_lock_wait_seconds_count") == 4);
        CHECK(sample(s, "etcdlock_lock_hold_seconds_count") == 4); /* three releases, one loss */
        CHECK(sample(s, "etcdlock_lock_hold_seconds_bucket{le=\"+Inf\"}") == 4);
        double sum = sample(s, "etcdlock_lock_wait_seconds_sum");
        CHECK(sum > 0 && sum < 10);
    }
    free(s);
    etcdlock_string_free(text);

    text = NULL;
    CHECK_RC(etcdlock_client_metrics_text(b, &text), ETCDLOCK_OK);
    s = text ? parse_prometheus(text, "b") : NULL;
    CHECK(s && sample(s, "etcdlock_lock_acquisitions_total") == 1); /* per client */
    free(s);
    etcdlock_string_free(text);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
}

/* The client label of a text's first sample: the name between `{client="` and `"` (the names
 * here hold no quote), or "" (the caller's buffer). */
static const char *client_of(const char *text, char *buf, size_t len) {
    const char *at = text ? strstr(text, "{client=\"") : NULL;
    const char *end = at ? strchr(at + 9, '"') : NULL;
    snprintf(buf, len, "%.*s", at && end ? (int)(end - at - 9) : 0, at ? at + 9 : "");
    return buf;
}

/* covers: METRICS-LABEL-001 */
static void test_each_client_labels_its_series_with_its_name(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
    etcdlock_client *named = named_client("billing \"eu\"\\1");
    char *ta = NULL, *tb = NULL, *tn = NULL, na[64], nb[64];
    CHECK_RC(etcdlock_client_metrics_text(a, &ta), ETCDLOCK_OK);
    CHECK_RC(etcdlock_client_metrics_text(b, &tb), ETCDLOCK_OK);
    CHECK_RC(etcdlock_client_metrics_text(named, &tn), ETCDLOCK_OK);
    /* Defaults: etcdlock-<n>, distinct; every series of each text carries its own. */
    client_of(ta, na, sizeof na);
    client_of(tb, nb, sizeof nb);
    CHECK(strncmp(na, "etcdlock-", 9) == 0 && strncmp(nb, "etcdlock-", 9) == 0 && strcmp(na, nb) != 0);
    char *s = ta ? parse_prometheus(ta, na) : NULL;
    CHECK(s && sample(s, "etcdlock_lock_acquisitions_total") == 0);
    free(s);
    s = tb ? parse_prometheus(tb, nb) : NULL;
    CHECK(s && sample(s, "etcdlock_leases_alive") == 0);
    free(s);
    /* A given name, escaped as the format says. */
    CHECK(tn && strstr(tn, "etcdlock_leases_alive{client=\"billing \\\"eu\\\"\\\\1\"} 0\n") != NULL);
    etcdlock_string_free(ta);
    etcdlock_string_free(tb);
    etcdlock_string_free(tn);
    /* An empty name, or one not UTF-8: refused, no client made. */
    etcdlock_client_options opts = ETCDLOCK_CLIENT_OPTIONS_INIT;
    etcdlock_client *c = NULL;
    opts.name = "";
    CHECK_RC(etcdlock_client_new(endpoints(), &opts, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    CHECK(c == NULL && strstr(msg, "name") != NULL);
    opts.name = "\xff";
    CHECK_RC(etcdlock_client_new(endpoints(), &opts, &c), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(c == NULL);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
    etcdlock_client_free(named);
}

/* covers: ERR-NULL-001 */
static void test_null_arguments(void) {
    etcdlock_client *c = connect_client();
    char *text = (char *)"untouched";
    CHECK_RC(etcdlock_client_metrics_text(NULL, &text), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(strcmp(text, "untouched") == 0);
    CHECK_RC(etcdlock_client_metrics_text(c, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_string_free(NULL);
    etcdlock_client_free(c);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_counts_and_histograms_exact_after_a_known_sequence);
    RUN(test_each_client_labels_its_series_with_its_name);
    RUN(test_null_arguments);
    etcdlock_shutdown(2000);
    return summary("test_metrics");
}
