/* Helpers of tests/test_lockset.c and tests/test_fence.c: a key's create revision and lease as
 * etcdctl reports them, queue counts, a lock set opened from names, and _async outcomes. */
#ifndef ETCDLOCK_TEST_LOCKSET_HELPERS_H
#define ETCDLOCK_TEST_LOCKSET_HELPERS_H

#include "check.h"
#include <stdatomic.h>

#define K(s) (const uint8_t *)(s), strlen(s)

/* The integer after `"field":` in etcdctl's JSON, or -1. */
static inline int64_t json_int(const char *json, const char *field) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", field);
    const char *at = json ? strstr(json, pat) : NULL;
    return at ? strtoll(at + strlen(pat), NULL, 10) : -1;
}

/* `key`'s create revision and lease as etcdctl reads them (-1 each when it is not there). */
static inline void key_info(const uint8_t *key, size_t len, int64_t *create_revision, int64_t *lease) {
    char args[512];
    snprintf(args, sizeof args, "get '%.*s' -w json", (int)len, (const char *)key);
    char *out = etcdctl(args);
    *create_revision = json_int(out, "create_revision");
    *lease = json_int(out, "lease");
    free(out);
}

/* The keys in the queue of `name` (under `name/`), read by etcdctl. */
static inline int queue_len(const char *name) {
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s/", name);
    return count_keys(prefix);
}

/* A set of exclusive members named `names`, on a TTL of 10 s (NULL on failure, checked). */
static inline etcdlock_lock_set *open_names(etcdlock_client *c, const char *const *names, size_t n) {
    etcdlock_set_member m[ETCDLOCK_MAX_LOCK_SET];
    memset(m, 0, sizeof m);
    for (size_t i = 0; i < n && i < ETCDLOCK_MAX_LOCK_SET; i++) m[i].name = names[i];
    etcdlock_lock_set *set = NULL;
    CHECK_RC(etcdlock_lock_set_open(c, m, n, 10, &set), ETCDLOCK_OK);
    return set;
}

/* The value at `key` as etcdctl prints it, without the newline (caller frees), or NULL. */
static inline char *value_of(const char *key) {
    char args[512];
    snprintf(args, sizeof args, "get '%s' --print-value-only", key);
    char *out = etcdctl(args);
    if (out) out[strcspn(out, "\n")] = 0;
    return out;
}

/* The start of the `n`th dotted field of a fence's string form (`etcdlock-fence.v1.KIND.
 * CLUSTER.TOKEN.NAME`: the token is field 4, the name in hex field 5), or "". */
static inline const char *fence_field(const char *fence, int n) {
    if (!fence) return "";
    const char *p = fence;
    for (int dots = 0; *p && dots < n; p++)
        if (*p == '.') dots++;
    return p;
}

static inline int64_t fence_token(const char *fence) {
    return strtoll(fence_field(fence, 4), NULL, 10);
}

/* Whether a fence's string form names `name` (its last field: the name in hex). */
static inline int fence_names(const char *fence, const char *name) {
    const char *hex = fence_field(fence, 5);
    size_t n = strlen(name);
    if (strlen(hex) != 2 * n) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned b = 0;
        if (sscanf(hex + 2 * i, "%2x", &b) != 1 || (char)b != name[i]) return 0;
    }
    return 1;
}

/* Whether a fence's string form checks (a failed call is a failed check, and false). */
static inline bool holds(etcdlock_client *c, const char *fence) {
    bool h = false;
    CHECK_RC(etcdlock_check_fence(c, fence, &h), ETCDLOCK_OK);
    return h;
}

/* An _async lock set acquire's outcome, and a lost callback's reason. */
struct outcome {
    atomic_int done, status, reason, calls;
    etcdlock_lock_set_held *held;
    etcdlock_lock *lock;
    double at;
};

static inline void on_set(void *user, int status, etcdlock_lock_set_held *held) {
    struct outcome *o = user;
    o->held = held;
    o->at = now_ms();
    atomic_store(&o->status, status);
    atomic_store(&o->done, 1);
}

static inline void on_lock(void *user, int status, etcdlock_lock *lock) {
    struct outcome *o = user;
    o->lock = lock;
    o->at = now_ms();
    atomic_store(&o->status, status);
    atomic_store(&o->done, 1);
}

static inline void on_lost(void *user, int reason) {
    struct outcome *o = user;
    atomic_store(&o->reason, reason);
    atomic_fetch_add(&o->calls, 1);
}

/* Waits (bounded by `ms`) for `*flag` to be non-zero; returns whether it was. */
static inline int wait_flag(atomic_int *flag, int ms) {
    for (int i = 0; i < ms / 10 && !atomic_load(flag); i++) sleep_ms(10);
    return atomic_load(flag);
}

#endif
