/* A tiny test harness for the C suite: named tests, non-fatal checks, "ok - name" /
 * "FAIL - name" lines that test.sh counts, and helpers to reach the test etcd. */
#ifndef ETCDLOCK_TEST_CHECK_H
#define ETCDLOCK_TEST_CHECK_H

#define _GNU_SOURCE
#include "etcdlock.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_check_failures;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            g_check_failures++;                                                        \
        }                                                                              \
    } while (0)

/* Checks a status; on mismatch prints both names and the last error message. */
#define CHECK_RC(expr, want)                                                           \
    do {                                                                               \
        int rc_ = (expr);                                                              \
        if (rc_ != (want)) {                                                           \
            char msg_[512];                                                            \
            etcdlock_last_error(msg_, sizeof msg_);                                    \
            fprintf(stderr, "  %s:%d: %s -> %s, want %s (last error: %s)\n", __FILE__, \
                    __LINE__, #expr, etcdlock_status_str(rc_), etcdlock_status_str(want), \
                    msg_);                                                             \
            g_check_failures++;                                                        \
        }                                                                              \
    } while (0)

#define RUN(fn)                                                        \
    do {                                                               \
        int before_ = g_check_failures;                                \
        fn();                                                          \
        printf("%s - %s\n", g_check_failures == before_ ? "ok" : "FAIL", #fn); \
        fflush(stdout);                                                \
    } while (0)

static inline double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline const char *endpoints(void) {
    const char *e = getenv("ETCDLOCK_ENDPOINTS");
    return e ? e : "http://127.0.0.1:2379";
}

/* A client of the test etcd with the default options (a failure is a failed check). */
static inline etcdlock_client *connect_client(void) {
    etcdlock_client *c = NULL;
    CHECK_RC(etcdlock_client_new(endpoints(), NULL, &c), ETCDLOCK_OK);
    return c;
}

/* Runs `etcdctl ARGS` against the member(s) at `eps` (plain http); returns its stdout and
 * stderr (caller frees) or NULL. */
static inline char *etcdctl_at(const char *eps, const char *args) {
    const char *bin = getenv("ETCDLOCK_ETCDCTL");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ETCDCTL_API=3 %s --endpoints=%s %s 2>&1", bin ? bin : "etcdctl", eps, args);
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    size_t n;
    while (out && (n = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 2) {
            char *bigger = realloc(out, cap * 2);
            if (!bigger) break;
            out = bigger;
            cap *= 2;
        }
    }
    if (out) out[len] = 0;
    if (pclose(p) != 0) {
        fprintf(stderr, "  etcdctl %s failed: %s\n", args, out ? out : "");
    }
    return out;
}

/* Runs `etcdctl ARGS` against the test etcd. */
static inline char *etcdctl(const char *args) {
    return etcdctl_at(endpoints(), args);
}

/* Runs etcdctl with printf-style arguments; returns whether it printed something. */
static inline int ctl(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int ctl(const char *fmt, ...) {
    char args[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *out = etcdctl(args);
    int ok = out && out[0];
    free(out);
    return ok;
}

/* Number of keys under `prefix` in etcd (via etcdctl), or -1. */
static inline int count_keys(const char *prefix) {
    char args[512];
    snprintf(args, sizeof args, "get --prefix --keys-only '%s'", prefix);
    char *out = etcdctl(args);
    if (!out) return -1;
    int n = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) n++;
    free(out);
    return n;
}

/* Waits (bounded: ~5 s) until `prefix` holds `n` keys; returns the last count. */
static inline int wait_keys(const char *prefix, int n) {
    int have = -1;
    for (int i = 0; i < 100 && (have = count_keys(prefix)) != n; i++) sleep_ms(50);
    return have;
}

/* A name unique to this process and call. */
static inline void unique(char *buf, size_t len, const char *tag) {
    static int seq;
    snprintf(buf, len, "ctest/%d-%ld/%s-%d", (int)getpid(), (long)time(NULL), tag, seq++);
}

static inline int summary(const char *program) {
    printf("# %s: %s\n", program, g_check_failures ? "failures above" : "all checks passed");
    return g_check_failures ? 1 : 0;
}

#endif
