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
static char *parse_prometheus(const char *text) {
    char root[512], file[] = "/tmp/etcdlock-metrics-XXXXXX", cmd[1200];
    repo_root(root, sizeof root);
    int fd = mkstemp(file);
    if (fd < 0) return NULL;
    size_t len = strlen(text);
    CHECK(write(fd, text, len) == (ssize_t)len);
    close(fd);
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/prometheus_text.py' --lines < '%s'", root, file);
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

/* covers: OBS-METRICS-001 */
static void test_counts_and_histograms_exact_after_a_known_sequence(void) {
    etcdlock_client *a = connect_client(), *b = connect_client();
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
    char *s = text ? parse_prometheus(text) : NULL;
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
    s = text ? parse_prometheus(text) : NULL;
    CHECK(s && sample(s, "etcdlock_lock_acquisitions_total") == 1); /* per client */
    free(s);
    etcdlock_string_free(text);
    etcdlock_client_free(a);
    etcdlock_client_free(b);
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
    RUN(test_null_arguments);
    etcdlock_shutdown(2000);
    return summary("test_metrics");
}
