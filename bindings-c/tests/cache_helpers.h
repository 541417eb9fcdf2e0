/* Helpers of tests/test_cache.c: writes that return their revision, the copy compared with
 * etcdctl's view of a prefix, and reading an expected event. */
#ifndef ETCDLOCK_TEST_CACHE_HELPERS_H
#define ETCDLOCK_TEST_CACHE_HELPERS_H

#include "check.h"

static inline int64_t put(etcdlock_client *c, const char *key, const char *value) {
    CHECK_RC(etcdlock_put(c, (const uint8_t *)key, strlen(key), (const uint8_t *)value, strlen(value), NULL), ETCDLOCK_OK);
    etcdlock_buf *b = NULL;
    CHECK_RC(etcdlock_get(c, (const uint8_t *)key, strlen(key), &b), ETCDLOCK_OK);
    int64_t rev = etcdlock_buf_mod_revision(b); /* nobody else writes the test's keys */
    etcdlock_buf_free(b);
    return rev;
}

static inline void del(etcdlock_client *c, const char *key) {
    CHECK_RC(etcdlock_delete(c, (const uint8_t *)key, strlen(key)), ETCDLOCK_OK);
}

/* The copy as etcdctl prints a prefix ("key\nvalue\n" per key). Caller frees. */
static inline char *snapshot_text(etcdlock_cache *cache, int64_t *revision) {
    etcdlock_kv_set *set = NULL;
    CHECK_RC(etcdlock_cache_snapshot(cache, &set), ETCDLOCK_OK);
    if (!set) return strdup("");
    size_t cap = 1, len = 0;
    for (size_t i = 0; i < set->n_kvs; i++) cap += set->kvs[i].key_len + set->kvs[i].value_len + 2;
    char *out = malloc(cap);
    for (size_t i = 0; i < set->n_kvs; i++)
        len += (size_t)sprintf(out + len, "%.*s\n%.*s\n", (int)set->kvs[i].key_len, (const char *)set->kvs[i].key,
                               (int)set->kvs[i].value_len, (const char *)set->kvs[i].value);
    out[len] = 0;
    *revision = set->revision;
    etcdlock_kv_set_free(set);
    return out;
}

/* Checks that the copy is etcd's `get --prefix --rev=R` at the copy's revision R. */
static inline void check_copy_is_etcds(etcdlock_cache *cache, const char *prefix) {
    int64_t at = 0;
    char *mine = snapshot_text(cache, &at), args[512];
    snprintf(args, sizeof args, "get --prefix '%s' --rev=%" PRId64, prefix, at);
    char *etcds = etcdctl(args);
    CHECK(etcds && strcmp(mine, etcds) == 0);
    if (etcds && strcmp(mine, etcds) != 0) fprintf(stderr, "  copy at %" PRId64 ":\n%s  etcd:\n%s", at, mine, etcds);
    free(mine);
    free(etcds);
}

/* Reads the next event (10 s at most); checks its kind, key and (non-NULL) value. */
static inline etcdlock_cache_event *expect_event(etcdlock_cache_stream *s, int kind, const char *key, const char *value) {
    etcdlock_cache_event *ev = NULL;
    CHECK_RC(etcdlock_cache_stream_next(s, 10000, &ev), ETCDLOCK_OK);
    if (!ev) return NULL;
    CHECK(ev->kind == kind);
    CHECK(ev->key_len == strlen(key) && memcmp(ev->key, key, ev->key_len) == 0);
    if (value) CHECK(ev->value_len == strlen(value) && memcmp(ev->value, value, ev->value_len) == 0);
    if (ev->kind != kind || ev->key_len != strlen(key) || memcmp(ev->key, key, ev->key_len) != 0)
        fprintf(stderr, "  got kind %d key %.*s, want kind %d key %s\n", ev->kind, (int)ev->key_len, (const char *)ev->key, kind, key);
    return ev;
}

static inline int prev_is(const etcdlock_cache_event *ev, const char *prev) {
    return ev && ev->has_prev && ev->prev_value_len == strlen(prev) && memcmp(ev->prev_value, prev, ev->prev_value_len) == 0;
}

#endif
