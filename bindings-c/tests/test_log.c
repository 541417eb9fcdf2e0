/* The log callback (etcdlock_set_log_callback): off by default, bad levels refused, the WARN
 * event of a lost lock with its name, token and reason, and no call after it is turned off. */
#include "check.h"
#include <pthread.h>
#include <stdatomic.h>

struct seen {
    pthread_mutex_t mu;
    int calls;
    int lost_warns; /* "lock lost" WARN events for `name` with the right token and reason */
    int acquired_debugs;
    char name[128];
    char token[32];
    int in_callback_rc;
};

static const char *field(const etcdlock_log_record *r, const char *key) {
    for (size_t i = 0; i < r->n_fields; i++)
        if (strcmp(r->fields[i].key, key) == 0) return r->fields[i].value;
    return NULL;
}

static void on_log(const etcdlock_log_record *r, void *user_data) {
    struct seen *s = user_data;
    pthread_mutex_lock(&s->mu);
    s->calls++;
    const char *lock = field(r, "lock");
    if (lock && strcmp(lock, s->name) == 0) {
        const char *token = field(r, "token");
        if (r->level == ETCDLOCK_LOG_WARN && strcmp(r->area, "lock") == 0 &&
            strncmp(r->message, "lock lost", 9) == 0 && token && strcmp(token, s->token) == 0) {
            const char *reason = field(r, "reason");
            if (reason && strcmp(reason, "key_deleted") == 0 && field(r, "held_ms")) s->lost_warns++;
        }
        if (r->level == ETCDLOCK_LOG_DEBUG && strcmp(r->message, "lock acquired") == 0) s->acquired_debugs++;
    }
    /* Changing the callback from inside it is refused, not a deadlock. */
    s->in_callback_rc = etcdlock_set_log_callback(ETCDLOCK_LOG_OFF, NULL, NULL);
    pthread_mutex_unlock(&s->mu);
}

static int lost_warns(struct seen *s) {
    pthread_mutex_lock(&s->mu);
    int n = s->lost_warns;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static void test_bad_level_is_refused(void) {
    CHECK_RC(etcdlock_set_log_callback(6, on_log, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    CHECK_RC(etcdlock_set_log_callback(-1, on_log, NULL), ETCDLOCK_E_INVALID_ARGUMENT);
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    CHECK(strstr(msg, "log level") != NULL);
    CHECK_RC(etcdlock_set_log_callback(ETCDLOCK_LOG_OFF, NULL, NULL), ETCDLOCK_OK);
}

/* covers: OBS-EVENT-001 */
static void test_lost_lock_is_a_warn_with_name_token_and_reason(void) {
    static struct seen s = {.mu = PTHREAD_MUTEX_INITIALIZER};
    etcdlock_client *c = connect_client();
    unique(s.name, sizeof s.name, "loglost");

    /* Off by default: an acquisition before the callback is set reaches nobody. */
    etcdlock_lock *before = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, s.name, 10, 5000, NULL, &before), ETCDLOCK_OK);
    if (before) CHECK_RC(etcdlock_lock_release(before), ETCDLOCK_OK);
    etcdlock_lock_free(before);

    CHECK_RC(etcdlock_set_log_callback(ETCDLOCK_LOG_DEBUG, on_log, &s), ETCDLOCK_OK);
    etcdlock_lock *l = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, s.name, 10, 5000, NULL, &l), ETCDLOCK_OK);
    if (!l) {
        etcdlock_set_log_callback(ETCDLOCK_LOG_OFF, NULL, NULL);
        etcdlock_client_free(c);
        return;
    }
    pthread_mutex_lock(&s.mu);
    snprintf(s.token, sizeof s.token, "%" PRId64, etcdlock_lock_fencing_token(l));
    CHECK(s.acquired_debugs == 1);
    pthread_mutex_unlock(&s.mu);

    /* An operator deletes the holder's key. */
    size_t len = 0;
    const uint8_t *k = etcdlock_lock_key(l, &len);
    char args[400];
    snprintf(args, sizeof args, "del '%.*s'", (int)len, (const char *)k);
    free(etcdctl(args));
    for (int i = 0; i < 100 && lost_warns(&s) == 0; i++) sleep_ms(50);
    CHECK(lost_warns(&s) == 1);
    CHECK(!etcdlock_lock_is_held(l));
    pthread_mutex_lock(&s.mu);
    CHECK(s.in_callback_rc == ETCDLOCK_E_WRONG_THREAD);
    pthread_mutex_unlock(&s.mu);

    /* Turned off: no more calls, and `s` could be freed now. */
    CHECK_RC(etcdlock_set_log_callback(ETCDLOCK_LOG_OFF, NULL, NULL), ETCDLOCK_OK);
    pthread_mutex_lock(&s.mu);
    int calls = s.calls;
    pthread_mutex_unlock(&s.mu);
    etcdlock_lock_free(l);
    etcdlock_lock *again = NULL;
    CHECK_RC(etcdlock_lock_acquire(c, s.name, 10, 5000, NULL, &again), ETCDLOCK_OK);
    if (again) CHECK_RC(etcdlock_lock_release(again), ETCDLOCK_OK);
    etcdlock_lock_free(again);
    pthread_mutex_lock(&s.mu);
    CHECK(s.calls == calls);
    pthread_mutex_unlock(&s.mu);
    etcdlock_client_free(c);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    RUN(test_bad_level_is_refused);
    RUN(test_lost_lock_is_a_warn_with_name_token_and_reason);
    etcdlock_shutdown(2000);
    return summary("test_log");
}
