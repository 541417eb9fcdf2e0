/* Prefix caches through the C API against a real etcd: the copy at its revision is etcd's, a
 * write is read back after etcdlock_cache_wait_for its revision, the events are etcd's history
 * with previous values, a cut-off cache resyncs after a compaction (deletes, puts, RESYNCED),
 * close from another thread, a closed client, bad arguments. (The loading, following and
 * resyncing are the core's: core/tests/integration/cache.rs.) */
#include "check.h"
#include "cache_helpers.h"
#include "cutproxy.h"

#include <pthread.h>

/* covers: CACHE-READ-001 (loaded at one revision: the copy, its gets and its length are etcd's
 * `get --prefix --rev=R`; a key outside the prefix is not in it) */
static void test_cache_load(void) {
    etcdlock_client *c = connect_client();
    char base[128], prefix[160], key[200];
    unique(base, sizeof base, "cache-load");
    snprintf(prefix, sizeof prefix, "%s/", base);
    for (int i = 0; i < 25; i++) {
        snprintf(key, sizeof key, "%sk%02d", prefix, i);
        put(c, key, i % 2 ? "odd" : "even");
    }
    snprintf(key, sizeof key, "%sk03", prefix);
    put(c, key, "again"); /* version 2 */
    snprintf(key, sizeof key, "%s-outside", base);
    put(c, key, "x");
    etcdlock_cache *cache = NULL;
    CHECK_RC(etcdlock_cache_open(c, prefix, &cache), ETCDLOCK_OK);
    CHECK(etcdlock_cache_len(cache) == 25);
    check_copy_is_etcds(cache, prefix);
    etcdlock_kv *kv = NULL;
    snprintf(key, sizeof key, "%sk03", prefix);
    CHECK_RC(etcdlock_cache_get(cache, (const uint8_t *)key, strlen(key), &kv), ETCDLOCK_OK);
    CHECK(kv && kv->value_len == 5 && memcmp(kv->value, "again", 5) == 0 && kv->version == 2 && kv->lease == 0);
    CHECK(kv && kv->key_len == strlen(key) && memcmp(kv->key, key, kv->key_len) == 0);
    CHECK(kv && kv->create_revision > 0 && kv->mod_revision > kv->create_revision);
    CHECK(kv && kv->mod_revision <= etcdlock_cache_revision(cache));
    etcdlock_kv_free(kv);
    kv = (etcdlock_kv *)&kv; /* written NULL: the copy has no such key */
    snprintf(key, sizeof key, "%s-outside", base);
    CHECK_RC(etcdlock_cache_get(cache, (const uint8_t *)key, strlen(key), &kv), ETCDLOCK_OK);
    CHECK(kv == NULL);
    etcdlock_cache_free(cache);
    etcdlock_client_free(c);
}

/* covers: CACHE-READ-001 (read-your-writes with etcdlock_cache_wait_for; events in order with
 * their revisions and previous values, a delete, none for a key outside; wait_for timing out) */
static void test_cache_wait_and_events(void) {
    etcdlock_client *c = connect_client();
    char base[128], prefix[160], a[200], outside[200];
    unique(base, sizeof base, "cache-events");
    snprintf(prefix, sizeof prefix, "%s/", base);
    snprintf(a, sizeof a, "%sa", prefix);
    snprintf(outside, sizeof outside, "%s-outside", base);
    etcdlock_cache *cache = NULL;
    etcdlock_cache_stream *s = NULL;
    CHECK_RC(etcdlock_cache_open(c, prefix, &cache), ETCDLOCK_OK);
    CHECK_RC(etcdlock_cache_events(cache, &s), ETCDLOCK_OK);
    CHECK(etcdlock_cache_len(cache) == 0);
    etcdlock_cache_event *ev = NULL;
    CHECK_RC(etcdlock_cache_stream_next(s, 0, &ev), ETCDLOCK_E_TIMEOUT);

    int64_t r1 = put(c, a, "1");
    CHECK_RC(etcdlock_cache_wait_for(cache, r1, 5000), ETCDLOCK_OK);
    CHECK(etcdlock_cache_revision(cache) >= r1);
    etcdlock_kv *kv = NULL;
    CHECK_RC(etcdlock_cache_get(cache, (const uint8_t *)a, strlen(a), &kv), ETCDLOCK_OK);
    CHECK(kv && kv->value_len == 1 && kv->value[0] == '1' && kv->mod_revision == r1);
    etcdlock_kv_free(kv);
    int64_t r2 = put(c, a, "2");
    del(c, a);
    put(c, outside, "x");

    ev = expect_event(s, ETCDLOCK_CACHE_PUT, a, "1");
    CHECK(ev && ev->revision == r1 && !ev->has_prev && ev->prev_value_len == 0);
    etcdlock_cache_event_free(ev);
    ev = expect_event(s, ETCDLOCK_CACHE_PUT, a, "2");
    CHECK(ev && ev->revision == r2 && prev_is(ev, "1"));
    etcdlock_cache_event_free(ev);
    ev = expect_event(s, ETCDLOCK_CACHE_DELETE, a, "");
    int64_t r3 = ev ? ev->revision : 0;
    CHECK(r3 > r2 && prev_is(ev, "2"));
    etcdlock_cache_event_free(ev);
    ev = NULL;
    CHECK_RC(etcdlock_cache_stream_next(s, 300, &ev), ETCDLOCK_E_TIMEOUT); /* none for the key outside */
    CHECK(ev == NULL);

    /* The delete is in the copy once its event is out. */
    CHECK_RC(etcdlock_cache_wait_for(cache, r3, 0), ETCDLOCK_OK);
    kv = (etcdlock_kv *)&kv;
    CHECK_RC(etcdlock_cache_get(cache, (const uint8_t *)a, strlen(a), &kv), ETCDLOCK_OK);
    CHECK(kv == NULL);
    double t0 = now_ms();
    CHECK_RC(etcdlock_cache_wait_for(cache, r3 + 1000, 200), ETCDLOCK_E_TIMEOUT);
    CHECK(now_ms() - t0 >= 190 && now_ms() - t0 < 3000);
    CHECK_RC(etcdlock_cache_wait_for(cache, 1, ETCDLOCK_WAIT_FOREVER), ETCDLOCK_OK);
    check_copy_is_etcds(cache, prefix);
    etcdlock_cache_stream_free(s);
    etcdlock_cache_free(cache);
    etcdlock_client_free(c);
}

/* covers: CACHE-RESYNC-001 (cut off by tests/cutproxy.h while keys are deleted, re-created,
 * changed and created and the history compacted: the differences as events, then RESYNCED; the
 * copy is etcd's; later writes arrive) */
static void test_cache_resync(void) {
    const char *colon = strrchr(endpoints(), ':');
    struct cutproxy px;
    CHECK(colon && cutproxy_start(&px, atoi(colon + 1)) == 0);
    if (!colon) return;
    char ep[64], base[128], prefix[160], k[4][200];
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d", px.port);
    unique(base, sizeof base, "cache-resync");
    snprintf(prefix, sizeof prefix, "%s/", base);
    for (int i = 0; i < 4; i++) snprintf(k[i], sizeof k[i], "%s%c", prefix, 'a' + i);
    etcdlock_client *direct = connect_client(), *cut = NULL;
    CHECK_RC(etcdlock_client_new(ep, NULL, &cut), ETCDLOCK_OK);
    for (int i = 0; i < 3; i++) put(direct, k[i], "1");
    etcdlock_cache *cache = NULL;
    etcdlock_cache_stream *s = NULL;
    CHECK_RC(etcdlock_cache_open(cut, prefix, &cache), ETCDLOCK_OK);
    CHECK_RC(etcdlock_cache_events(cache, &s), ETCDLOCK_OK);
    CHECK(etcdlock_cache_len(cache) == 3);

    cutproxy_cut(&px); /* the cache hears nothing from here */
    del(direct, k[0]);
    put(direct, k[0], "2");
    put(direct, k[1], "2");
    del(direct, k[2]);
    int64_t head = put(direct, k[3], "1");
    CHECK(ctl("compact %" PRId64, head));
    cutproxy_restore(&px);

    CHECK_RC(etcdlock_cache_wait_for(cache, head, 30000), ETCDLOCK_OK);
    etcdlock_cache_event *ev = expect_event(s, ETCDLOCK_CACHE_DELETE, k[0], "");
    CHECK(prev_is(ev, "1") && ev->revision >= head);
    etcdlock_cache_event_free(ev);
    ev = expect_event(s, ETCDLOCK_CACHE_PUT, k[0], "2"); /* created again: no previous value */
    CHECK(ev && !ev->has_prev);
    etcdlock_cache_event_free(ev);
    ev = expect_event(s, ETCDLOCK_CACHE_PUT, k[1], "2");
    CHECK(prev_is(ev, "1"));
    etcdlock_cache_event_free(ev);
    ev = expect_event(s, ETCDLOCK_CACHE_DELETE, k[2], "");
    CHECK(prev_is(ev, "1"));
    etcdlock_cache_event_free(ev);
    ev = expect_event(s, ETCDLOCK_CACHE_PUT, k[3], "1");
    CHECK(ev && !ev->has_prev);
    etcdlock_cache_event_free(ev);
    ev = expect_event(s, ETCDLOCK_CACHE_RESYNCED, "", "");
    CHECK(ev && !ev->has_prev && ev->revision >= head && ev->revision == etcdlock_cache_revision(cache));
    etcdlock_cache_event_free(ev);
    check_copy_is_etcds(cache, prefix);

    /* And it follows on from there. */
    char e[200];
    snprintf(e, sizeof e, "%se", prefix);
    int64_t rev = put(direct, e, "1");
    CHECK_RC(etcdlock_cache_wait_for(cache, rev, 10000), ETCDLOCK_OK);
    ev = expect_event(s, ETCDLOCK_CACHE_PUT, e, "1");
    CHECK(ev && ev->revision == rev);
    etcdlock_cache_event_free(ev);
    etcdlock_cache_stream_free(s);
    etcdlock_cache_free(cache);
    etcdlock_client_free(cut);
    etcdlock_client_free(direct);
    cutproxy_stop(&px);
}

struct waiter {
    etcdlock_cache *cache;
    etcdlock_cache_stream *stream;
    int64_t revision;
    int rc;
};

static void *wait_for_blocking(void *arg) {
    struct waiter *w = arg;
    w->rc = etcdlock_cache_wait_for(w->cache, w->revision, ETCDLOCK_WAIT_FOREVER);
    return NULL;
}

static void *next_blocking(void *arg) {
    struct waiter *w = arg;
    etcdlock_cache_event *ev = NULL;
    w->rc = etcdlock_cache_stream_next(w->stream, ETCDLOCK_WAIT_FOREVER, &ev);
    etcdlock_cache_event_free(ev);
    return NULL;
}

/* covers: CACHE-CLOSE-001 (a close from another thread wakes a waiting wait_for and a waiting
 * read of events with ETCDLOCK_E_CLOSED; every later call is CLOSED; a stream's own close) */
static void test_cache_close(void) {
    etcdlock_client *c = connect_client();
    char prefix[160];
    unique(prefix, sizeof prefix, "cache-close");
    strcat(prefix, "/");
    etcdlock_cache *cache = NULL;
    etcdlock_cache_stream *s = NULL, *s2 = NULL;
    CHECK_RC(etcdlock_cache_open(c, prefix, &cache), ETCDLOCK_OK);
    CHECK_RC(etcdlock_cache_events(cache, &s), ETCDLOCK_OK);
    CHECK_RC(etcdlock_cache_events(cache, &s2), ETCDLOCK_OK);
    int64_t at = etcdlock_cache_revision(cache);
    CHECK(at > 0);

    /* A stream closed while read on another thread. */
    struct waiter w2 = {cache, s2, 0, -1};
    pthread_t t2;
    pthread_create(&t2, NULL, next_blocking, &w2);
    sleep_ms(200);
    etcdlock_cache_stream_close(s2);
    pthread_join(t2, NULL);
    CHECK(w2.rc == ETCDLOCK_E_CLOSED);
    etcdlock_cache_event *ev = NULL;
    CHECK_RC(etcdlock_cache_stream_next(s2, 0, &ev), ETCDLOCK_E_CLOSED);
    etcdlock_cache_stream_close(s2); /* idempotent */
    etcdlock_cache_stream_free(s2);

    /* The cache closed while waited on. */
    struct waiter w = {cache, NULL, at + 1000, -1}, r = {cache, s, 0, -1};
    pthread_t tw, tr;
    pthread_create(&tw, NULL, wait_for_blocking, &w);
    pthread_create(&tr, NULL, next_blocking, &r);
    sleep_ms(200);
    double t0 = now_ms();
    etcdlock_cache_close(cache);
    pthread_join(tw, NULL);
    pthread_join(tr, NULL);
    CHECK(now_ms() - t0 < 2000);
    CHECK(w.rc == ETCDLOCK_E_CLOSED);
    CHECK(r.rc == ETCDLOCK_E_CLOSED);

    etcdlock_kv *kv = (etcdlock_kv *)&kv;
    etcdlock_kv_set *set = (etcdlock_kv_set *)&set;
    CHECK_RC(etcdlock_cache_get(cache, (const uint8_t *)"k", 1, &kv), ETCDLOCK_E_CLOSED);
    CHECK(kv == (etcdlock_kv *)&kv); /* untouched */
    CHECK_RC(etcdlock_cache_snapshot(cache, &set), ETCDLOCK_E_CLOSED);
    CHECK(set == (etcdlock_kv_set *)&set);
    CHECK_RC(etcdlock_cache_wait_for(cache, 1, 0), ETCDLOCK_E_CLOSED);
    etcdlock_cache_stream *s3 = NULL;
    CHECK_RC(etcdlock_cache_events(cache, &s3), ETCDLOCK_E_CLOSED);
    CHECK(s3 == NULL);
    CHECK(etcdlock_cache_revision(cache) == 0 && etcdlock_cache_len(cache) == 0);
    etcdlock_cache_close(cache); /* idempotent */
    etcdlock_cache_stream_free(s);
    etcdlock_cache_free(cache);
    etcdlock_client_free(c);
}

/* covers: CACHE-CLOSE-001 (a cache that outlives its freed client: a waiting wait_for and a
 * waiting read of events end with ETCDLOCK_E_CLOSED; events received before are read first;
 * every call is CLOSED) */
static void test_cache_closed_client(void) {
    etcdlock_client *c = connect_client(), *writer = connect_client();
    char prefix[160], key[200];
    unique(prefix, sizeof prefix, "cache-closed");
    strcat(prefix, "/");
    snprintf(key, sizeof key, "%sk", prefix);
    etcdlock_cache *cache = NULL;
    etcdlock_cache_stream *s = NULL;
    CHECK_RC(etcdlock_cache_open(c, prefix, &cache), ETCDLOCK_OK);
    CHECK_RC(etcdlock_cache_events(cache, &s), ETCDLOCK_OK);
    int64_t rev = put(writer, key, "v");
    CHECK_RC(etcdlock_cache_wait_for(cache, rev, 5000), ETCDLOCK_OK);
    etcdlock_cache_stream *quiet = NULL; /* made after the put: nothing to read */
    CHECK_RC(etcdlock_cache_events(cache, &quiet), ETCDLOCK_OK);

    struct waiter w = {cache, NULL, rev + 1000, -1}, r = {cache, quiet, 0, -1};
    pthread_t tw, tr;
    pthread_create(&tw, NULL, wait_for_blocking, &w);
    pthread_create(&tr, NULL, next_blocking, &r);
    sleep_ms(200);
    double t0 = now_ms();
    etcdlock_client_free(c); /* closes it: the cache no longer follows etcd */
    pthread_join(tw, NULL);
    pthread_join(tr, NULL);
    CHECK(now_ms() - t0 < 7000); /* the free revokes nothing here; the waits end within ~50 ms of it */
    CHECK(w.rc == ETCDLOCK_E_CLOSED);
    CHECK(r.rc == ETCDLOCK_E_CLOSED);
    etcdlock_cache_stream_free(quiet);

    etcdlock_cache_event *ev = expect_event(s, ETCDLOCK_CACHE_PUT, key, "v"); /* received before */
    etcdlock_cache_event_free(ev);
    ev = NULL;
    CHECK_RC(etcdlock_cache_stream_next(s, 1000, &ev), ETCDLOCK_E_CLOSED);
    CHECK(ev == NULL);
    etcdlock_kv *kv = NULL;
    etcdlock_kv_set *set = NULL;
    etcdlock_cache_stream *s2 = NULL;
    CHECK_RC(etcdlock_cache_get(cache, (const uint8_t *)key, strlen(key), &kv), ETCDLOCK_E_CLOSED);
    CHECK_RC(etcdlock_cache_snapshot(cache, &set), ETCDLOCK_E_CLOSED);
    CHECK_RC(etcdlock_cache_wait_for(cache, rev, 0), ETCDLOCK_E_CLOSED);
    CHECK_RC(etcdlock_cache_events(cache, &s2), ETCDLOCK_E_CLOSED);
    CHECK(kv == NULL && set == NULL && s2 == NULL);
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "client") != NULL);
    etcdlock_cache_stream_free(s);
    etcdlock_cache_free(cache);
    etcdlock_client_free(writer);
}

/* covers: CACHE-CLOSE-001 (a client closed by etcdlock_shutdown, its handle still allocated:
 * etcdlock_cache_open on it is ETCDLOCK_E_CLOSED, and so are its cache's calls). Shuts the library
 * down: last. */
static void test_cache_shutdown(void) {
    etcdlock_client *c = connect_client();
    char prefix[160];
    unique(prefix, sizeof prefix, "cache-shutdown");
    etcdlock_cache *cache = NULL, *after = NULL;
    CHECK_RC(etcdlock_cache_open(c, prefix, &cache), ETCDLOCK_OK);
    CHECK_RC(etcdlock_shutdown(5000), ETCDLOCK_OK);
    CHECK_RC(etcdlock_cache_open(c, prefix, &after), ETCDLOCK_E_CLOSED);
    CHECK(after == NULL);
    CHECK_RC(etcdlock_cache_wait_for(cache, 1, 0), ETCDLOCK_E_CLOSED);
    etcdlock_kv_set *set = NULL;
    CHECK_RC(etcdlock_cache_snapshot(cache, &set), ETCDLOCK_E_CLOSED);
    etcdlock_cache_free(cache);
    etcdlock_client_free(c);
}

/* covers: CACHE-CLOSE-001 (NULL handles and outputs, a NULL prefix, a NULL key with a length,
 * a bad timeout: ETCDLOCK_E_INVALID_ARGUMENT, outputs untouched; NULL getters and frees) */
static void test_cache_bad_arguments(void) {
    etcdlock_client *c = connect_client();
    char prefix[160];
    unique(prefix, sizeof prefix, "cache-args");
    etcdlock_cache *cache = (etcdlock_cache *)&cache;
    CHECK_RC(etcdlock_cache_open(NULL, prefix, &cache), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_cache_open(c, NULL, &cache), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(cache == (etcdlock_cache *)&cache);
    CHECK_RC(etcdlock_cache_open(c, prefix, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_cache_open(c, prefix, &cache), ETCDLOCK_OK);

    etcdlock_kv *kv = (etcdlock_kv *)&kv;
    CHECK_RC(etcdlock_cache_get(NULL, (const uint8_t *)"k", 1, &kv), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_cache_get(cache, NULL, 1, &kv), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(kv == (etcdlock_kv *)&kv);
    CHECK_RC(etcdlock_cache_get(cache, (const uint8_t *)"k", 1, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_cache_get(cache, NULL, 0, &kv), ETCDLOCK_OK); /* the empty key: not in the copy */
    CHECK(kv == NULL);
    etcdlock_kv_set *set = (etcdlock_kv_set *)&set;
    CHECK_RC(etcdlock_cache_snapshot(NULL, &set), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(set == (etcdlock_kv_set *)&set);
    CHECK_RC(etcdlock_cache_snapshot(cache, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_cache_wait_for(NULL, 1, 0), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_cache_wait_for(cache, 1, -2), ETCDLOCK_E_INVALID_ARGUMENT);
    etcdlock_cache_stream *s = (etcdlock_cache_stream *)&s;
    CHECK_RC(etcdlock_cache_events(NULL, &s), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(s == (etcdlock_cache_stream *)&s);
    CHECK_RC(etcdlock_cache_events(cache, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_cache_events(cache, &s), ETCDLOCK_OK);
    etcdlock_cache_event *ev = (etcdlock_cache_event *)&ev;
    CHECK_RC(etcdlock_cache_stream_next(NULL, 0, &ev), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_cache_stream_next(s, -2, &ev), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(ev == (etcdlock_cache_event *)&ev);
    CHECK_RC(etcdlock_cache_stream_next(s, 0, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK(etcdlock_cache_revision(NULL) == 0 && etcdlock_cache_len(NULL) == 0);
    etcdlock_cache_close(NULL);
    etcdlock_cache_free(NULL);
    etcdlock_cache_stream_close(NULL);
    etcdlock_cache_stream_free(NULL);
    etcdlock_cache_event_free(NULL);
    etcdlock_kv_free(NULL);
    etcdlock_kv_set_free(NULL);
    etcdlock_cache_stream_free(s);
    etcdlock_cache_free(cache);
    etcdlock_client_free(c);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_cache_load);
    RUN(test_cache_wait_and_events);
    RUN(test_cache_resync);
    RUN(test_cache_close);
    RUN(test_cache_closed_client);
    RUN(test_cache_bad_arguments);
    RUN(test_cache_shutdown); /* last: shuts the library down (nothing left for valgrind) */
    return summary("test_cache");
}
