/* The C demo worker: acquire -> guarded increment -> work -> release, reported as JSON lines.
 * Environment: ETCDLOCK_ENDPOINTS, DEMO_LOCK, DEMO_COUNTER, DEMO_TTL, DEMO_WORK_MS,
 * DEMO_UNTIL_NS (a CLOCK_MONOTONIC deadline); with https:// endpoints (demo.sh --tls) also
 * DEMO_TLS_CA, DEMO_TLS_CERT, DEMO_TLS_KEY (PEM file paths: the CA and the client certificate).
 * DEMO_BREAK=stale is for the soak's positive control only (tests/history/soak.py): the worker
 * then also writes the counter without the lock after each release, which the history checker
 * must catch.
 * DEMO_MODE=election or DEMO_MODE=semaphore runs the demo's second phase instead (demo/coordination.py):
 * campaign in DEMO_ELECTION proposing DEMO_LABEL and, while leading, proclaim and make fenced writes
 * to DEMO_TERM_KEY every DEMO_WRITE_MS; or loop acquire -> hold DEMO_HOLD_MS -> release on the
 * semaphore DEMO_SEMAPHORE with DEMO_PERMITS permits. Both stop at DEMO_UNTIL_NS.
 * DEMO_MODE=tasks runs the demo's third phase (demo/tasks.py): loop claim from the queue DEMO_QUEUE
 * (DEMO_CLAIM_MS at most) -> work DEMO_WORK_MS -> ack with the result DEMO_RESULTS<id> =
 * "<token>:DEMO_LABEL" in the ack's own transaction (etcdlock_task_ack_with), until DEMO_UNTIL_NS has
 * passed and the queue is empty.
 * With DEMO_SERVICE set, the mutex worker registers itself there as DEMO_LABEL while it runs. */
#include <etcdlock.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const char *env(const char *name) {
    const char *v = getenv(name);
    if (!v) {
        fprintf(stderr, "%s is not set\n", name);
        exit(2);
    }
    return v;
}

static const char *reason_name(int reason) {
    switch (reason) {
    case ETCDLOCK_LOST_EXPIRED: return "expired";
    case ETCDLOCK_LOST_REVOKED: return "revoked";
    case ETCDLOCK_LOST_KEY_DELETED: return "key_deleted";
    default: return "closed";
    }
}

/* Runs on a library thread: stdout is line-buffered per printf call under glibc's lock. */
static void on_lost(void *user_data, int reason) {
    printf("{\"t\":%llu,\"ev\":\"lost\",\"token\":%lld,\"reason\":\"%s\"}\n", (unsigned long long)mono_ns(),
           (long long)(intptr_t)user_data, reason_name(reason));
    fflush(stdout);
}

/* The counter's value, 0 when it is missing or unreadable. */
static long read_counter(etcdlock_client *client, const char *counter) {
    long current = 0;
    etcdlock_buf *buf = NULL;
    if (etcdlock_get(client, (const uint8_t *)counter, strlen(counter), &buf) == ETCDLOCK_OK && buf) {
        char text[32] = {0};
        size_t n = etcdlock_buf_len(buf) < sizeof text - 1 ? etcdlock_buf_len(buf) : sizeof text - 1;
        memcpy(text, etcdlock_buf_data(buf), n);
        current = atol(text);
        etcdlock_buf_free(buf);
    }
    return current;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Milliseconds left before until, 0 once it passed. */
static int64_t left_ms(uint64_t until) {
    uint64_t now = mono_ns();
    if (now >= until) return 0;
    int64_t ms = (int64_t)((until - now) / 1000000u);
    return ms > 0 ? ms : 1;
}

static void election(etcdlock_client *client, int64_t ttl, uint64_t until) {
    const char *name = env("DEMO_ELECTION"), *term_key = env("DEMO_TERM_KEY"), *label = env("DEMO_LABEL");
    long every = atol(env("DEMO_WRITE_MS"));
    printf("{\"t\":%llu,\"ev\":\"ready\"}\n", (unsigned long long)mono_ns());
    while (left_ms(until) > 0) {
        printf("{\"t\":%llu,\"ev\":\"campaigning\"}\n", (unsigned long long)mono_ns());
        etcdlock_lock *leadership = NULL;
        int rc = etcdlock_election_campaign(client, name, ttl, left_ms(until), NULL, (const uint8_t *)label, strlen(label),
                                            &leadership);
        if (rc != ETCDLOCK_OK) { /* ETCDLOCK_E_LOCK_TIMEOUT at the deadline */
            printf("{\"t\":%llu,\"ev\":\"campaign_ended\",\"error\":\"%s\"}\n", (unsigned long long)mono_ns(),
                   etcdlock_status_str(rc));
            if (left_ms(until) > 0) sleep_ms(200);
            continue;
        }
        int64_t token = etcdlock_lock_fencing_token(leadership);
        size_t key_len = 0;
        const uint8_t *key = etcdlock_lock_key(leadership, &key_len);
        printf("{\"t\":%llu,\"ev\":\"leading\",\"token\":%lld,\"key\":\"%.*s\"}\n", (unsigned long long)mono_ns(),
               (long long)token, (int)key_len, (const char *)key);
        etcdlock_lock_on_lost(leadership, on_lost, (void *)(intptr_t)token);
        char text[128];
        int text_len = snprintf(text, sizeof text, "%s leads", label);
        int64_t rev = 0;
        rc = etcdlock_election_proclaim(leadership, (const uint8_t *)text, (size_t)text_len, &rev);
        if (rc == ETCDLOCK_OK)
            printf("{\"t\":%llu,\"ev\":\"proclaimed\",\"token\":%lld,\"rev\":%lld}\n", (unsigned long long)mono_ns(),
                   (long long)token, (long long)rev);
        else
            printf("{\"t\":%llu,\"ev\":\"proclaim_refused\",\"token\":%lld,\"error\":\"%s\"}\n",
                   (unsigned long long)mono_ns(), (long long)token, etcdlock_status_str(rc));
        for (long seq = 1; left_ms(until) > 0 && etcdlock_lock_is_held(leadership); seq++) {
            text_len = snprintf(text, sizeof text, "%s token %lld write %ld", label, (long long)token, seq);
            rc = etcdlock_put(client, (const uint8_t *)term_key, strlen(term_key), (const uint8_t *)text, (size_t)text_len,
                              leadership);
            if (rc == ETCDLOCK_OK)
                printf("{\"t\":%llu,\"ev\":\"term_write\",\"token\":%lld,\"seq\":%ld}\n", (unsigned long long)mono_ns(),
                       (long long)token, seq);
            else
                printf("{\"t\":%llu,\"ev\":\"term_refused\",\"token\":%lld,\"seq\":%ld,\"error\":\"%s\"}\n",
                       (unsigned long long)mono_ns(), (long long)token, seq, etcdlock_status_str(rc));
            sleep_ms(every);
        }
        rc = etcdlock_election_resign(leadership);
        if (rc == ETCDLOCK_OK)
            printf("{\"t\":%llu,\"ev\":\"resigned\",\"token\":%lld}\n", (unsigned long long)mono_ns(), (long long)token);
        else
            printf("{\"t\":%llu,\"ev\":\"resign_failed\",\"token\":%lld,\"error\":\"%s\"}\n", (unsigned long long)mono_ns(),
                   (long long)token, etcdlock_status_str(rc));
        etcdlock_lock_free(leadership);
    }
}

static void semaphore(etcdlock_client *client, int64_t ttl, uint64_t until) {
    const char *name = env("DEMO_SEMAPHORE");
    uint32_t permits = (uint32_t)atol(env("DEMO_PERMITS"));
    long hold = atol(env("DEMO_HOLD_MS"));
    printf("{\"t\":%llu,\"ev\":\"ready\"}\n", (unsigned long long)mono_ns());
    while (left_ms(until) > 0) {
        printf("{\"t\":%llu,\"ev\":\"waiting\"}\n", (unsigned long long)mono_ns());
        etcdlock_lock *permit = NULL;
        int rc = etcdlock_semaphore_acquire(client, name, permits, ttl, left_ms(until), NULL, &permit);
        if (rc != ETCDLOCK_OK) {
            printf("{\"t\":%llu,\"ev\":\"error\",\"error\":\"%s\"}\n", (unsigned long long)mono_ns(), etcdlock_status_str(rc));
            if (left_ms(until) > 0) sleep_ms(200);
            continue;
        }
        int64_t token = etcdlock_lock_fencing_token(permit);
        size_t key_len = 0;
        const uint8_t *key = etcdlock_lock_key(permit, &key_len);
        printf("{\"t\":%llu,\"ev\":\"acquired\",\"token\":%lld,\"key\":\"%.*s\"}\n", (unsigned long long)mono_ns(),
               (long long)token, (int)key_len, (const char *)key);
        sleep_ms(hold);
        printf("{\"t\":%llu,\"ev\":\"releasing\",\"token\":%lld}\n", (unsigned long long)mono_ns(), (long long)token);
        rc = etcdlock_lock_release(permit);
        if (rc == ETCDLOCK_OK)
            printf("{\"t\":%llu,\"ev\":\"released\",\"token\":%lld}\n", (unsigned long long)mono_ns(), (long long)token);
        else
            printf("{\"t\":%llu,\"ev\":\"release_failed\",\"token\":%lld,\"error\":\"%s\"}\n", (unsigned long long)mono_ns(),
                   (long long)token, etcdlock_status_str(rc));
        etcdlock_lock_free(permit);
    }
}

/* Whether the queue has nothing pending, delayed or claimed (an unreadable one is not empty). */
static int queue_empty(etcdlock_queue *q) {
    etcdlock_queue_counts *counts = NULL;
    if (etcdlock_queue_stats(q, &counts) != ETCDLOCK_OK) return 0;
    int empty = counts->pending + counts->delayed + counts->claimed == 0;
    etcdlock_queue_counts_free(counts);
    return empty;
}

/* The third phase's worker: claim -> work -> ack with the result, reported as JSON lines. */
static void tasks(etcdlock_client *client, int64_t ttl, uint64_t until) {
    const char *label = env("DEMO_LABEL"), *results = env("DEMO_RESULTS");
    long work = atol(env("DEMO_WORK_MS")), wait = atol(env("DEMO_CLAIM_MS"));
    etcdlock_queue *q = NULL;
    if (etcdlock_queue_open(client, env("DEMO_QUEUE"), ttl, (uint32_t)atol(env("DEMO_MAX_ATTEMPTS")), &q) != ETCDLOCK_OK) {
        printf("{\"t\":%llu,\"ev\":\"error\",\"error\":\"queue_open\"}\n", (unsigned long long)mono_ns());
        return;
    }
    printf("{\"t\":%llu,\"ev\":\"ready\"}\n", (unsigned long long)mono_ns());
    for (;;) {
        etcdlock_task *task = NULL;
        int rc = etcdlock_queue_claim(q, wait, NULL, (const uint8_t *)label, strlen(label), &task);
        if (rc == ETCDLOCK_E_LOCK_TIMEOUT) {
            if (left_ms(until) == 0 && queue_empty(q)) break;
            continue;
        }
        if (rc != ETCDLOCK_OK) {
            printf("{\"t\":%llu,\"ev\":\"error\",\"error\":\"claim %s\"}\n", (unsigned long long)mono_ns(), etcdlock_status_str(rc));
            sleep_ms(200);
            continue;
        }
        const char *id = etcdlock_task_id(task); /* ids are the demo's own: no quoting needed */
        long long token = (long long)etcdlock_task_fencing_token(task);
        printf("{\"t\":%llu,\"ev\":\"claimed\",\"id\":\"%s\",\"token\":%lld,\"attempts\":%u}\n",
               (unsigned long long)mono_ns(), id, token, etcdlock_task_attempts(task));
        sleep_ms(work);
        char key[512], value[128];
        int key_len = snprintf(key, sizeof key, "%s%s", results, id);
        int value_len = snprintf(value, sizeof value, "%lld:%s", token, label);
        /* The result and the ack in one transaction, only while the claim holds. */
        etcdlock_op result = {ETCDLOCK_OP_PUT, (const uint8_t *)key, (size_t)key_len, (const uint8_t *)value, (size_t)value_len};
        int64_t rev = 0;
        rc = etcdlock_task_ack_with(task, &result, 1, &rev);
        if (rc == ETCDLOCK_OK)
            printf("{\"t\":%llu,\"ev\":\"acked\",\"id\":\"%s\",\"token\":%lld,\"rev\":%lld}\n",
                   (unsigned long long)mono_ns(), id, token, (long long)rev);
        else if (rc == ETCDLOCK_E_NOT_HELD) /* the claim was lost: nothing written */
            printf("{\"t\":%llu,\"ev\":\"refused\",\"id\":\"%s\",\"token\":%lld,\"stage\":\"ack\",\"error\":\"%s\"}\n",
                   (unsigned long long)mono_ns(), id, token, etcdlock_status_str(rc));
        else /* a timeout: the ack may or may not have been committed */
            printf("{\"t\":%llu,\"ev\":\"ack_unknown\",\"id\":\"%s\",\"token\":%lld,\"error\":\"%s\"}\n",
                   (unsigned long long)mono_ns(), id, token, etcdlock_status_str(rc));
        etcdlock_task_free(task);
    }
    etcdlock_queue_free(q);
}

/* Reports the registration's events until it is closed. */
static void *follow_registration(void *reg) {
    etcdlock_registration_event e;
    for (;;) {
        int rc = etcdlock_registration_next_event(reg, 1000, &e);
        if (rc == ETCDLOCK_E_TIMEOUT) continue;
        if (rc != ETCDLOCK_OK) return NULL; /* closed, or taken over before */
        if (e.kind == ETCDLOCK_REGISTRATION_RESTORED)
            printf("{\"t\":%llu,\"ev\":\"registered_again\",\"lease\":%lld}\n", (unsigned long long)mono_ns(), (long long)e.lease);
        else
            printf("{\"t\":%llu,\"ev\":\"unregistered\",\"reason\":\"%s\"}\n", (unsigned long long)mono_ns(),
                   e.kind == ETCDLOCK_REGISTRATION_TAKEN_OVER ? "taken_over" : reason_name(e.reason));
    }
}

/* Registers this worker in DEMO_SERVICE (if set) as DEMO_LABEL; a thread reports its events. */
static etcdlock_registration *register_self(etcdlock_client *client, int64_t ttl, pthread_t *follower) {
    const char *service = getenv("DEMO_SERVICE");
    if (!service) return NULL;
    char who[32];
    int len = snprintf(who, sizeof who, "c pid %d", (int)getpid());
    etcdlock_registration *reg = NULL;
    int rc = etcdlock_register(client, service, env("DEMO_LABEL"), (const uint8_t *)who, (size_t)len, ttl, 0, &reg);
    if (rc != ETCDLOCK_OK) {
        printf("{\"t\":%llu,\"ev\":\"error\",\"error\":\"register: %s\"}\n", (unsigned long long)mono_ns(), etcdlock_status_str(rc));
        return NULL;
    }
    pthread_create(follower, NULL, follow_registration, reg);
    return reg;
}

int main(void) {
    const char *lock_name = env("DEMO_LOCK"), *counter = env("DEMO_COUNTER");
    int64_t ttl = atoll(env("DEMO_TTL"));
    long work_ms = atol(env("DEMO_WORK_MS"));
    uint64_t until = strtoull(env("DEMO_UNTIL_NS"), NULL, 10);
    int stale = getenv("DEMO_BREAK") && strcmp(getenv("DEMO_BREAK"), "stale") == 0;
    etcdlock_client_options opts = ETCDLOCK_CLIENT_OPTIONS_INIT;
    opts.ca_file = getenv("DEMO_TLS_CA"); /* NULL (plain demo): no TLS options */
    opts.cert_file = getenv("DEMO_TLS_CERT");
    opts.key_file = getenv("DEMO_TLS_KEY");
    etcdlock_client *client = NULL;
    if (etcdlock_client_new(env("ETCDLOCK_ENDPOINTS"), &opts, &client) != ETCDLOCK_OK) {
        char msg[256];
        etcdlock_last_error(msg, sizeof msg);
        fprintf(stderr, "connect: %s\n", msg);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = getenv("DEMO_MODE");
    if (mode && (strcmp(mode, "election") == 0 || strcmp(mode, "semaphore") == 0 || strcmp(mode, "tasks") == 0)) {
        (strcmp(mode, "election") == 0 ? election : strcmp(mode, "semaphore") == 0 ? semaphore : tasks)(client, ttl, until);
        etcdlock_client_free(client);
        printf("{\"t\":%llu,\"ev\":\"done\"}\n", (unsigned long long)mono_ns());
        return 0;
    }
    pthread_t follower;
    etcdlock_registration *reg = register_self(client, ttl, &follower);
    printf("{\"t\":%llu,\"ev\":\"ready\"}\n", (unsigned long long)mono_ns());
    while (mono_ns() < until) {
        printf("{\"t\":%llu,\"ev\":\"waiting\"}\n", (unsigned long long)mono_ns());
        etcdlock_lock *lock = NULL;
        char who[32];
        int who_len = snprintf(who, sizeof who, "c pid %d", (int)getpid());
        int rc = etcdlock_lock_acquire_with_value(client, lock_name, ttl, ETCDLOCK_WAIT_FOREVER, NULL, (const uint8_t *)who,
                                                  (size_t)who_len, &lock);
        if (rc != ETCDLOCK_OK) {
            printf("{\"t\":%llu,\"ev\":\"error\",\"error\":\"%s\"}\n", (unsigned long long)mono_ns(), etcdlock_status_str(rc));
            struct timespec pause = {0, 200 * 1000000L};
            nanosleep(&pause, NULL);
            continue;
        }
        int64_t token = etcdlock_lock_fencing_token(lock);
        size_t key_len = 0;
        const uint8_t *key = etcdlock_lock_key(lock, &key_len);
        printf("{\"t\":%llu,\"ev\":\"acquired\",\"token\":%lld,\"key\":\"%.*s\"}\n", (unsigned long long)mono_ns(),
               (long long)token, (int)key_len, (const char *)key);
        etcdlock_lock_on_lost(lock, on_lost, (void *)(intptr_t)token);
        struct timespec hold = {work_ms / 1000, (work_ms % 1000) * 1000000L};
        nanosleep(&hold, NULL);

        long current = read_counter(client, counter);
        char next[32];
        int next_len = snprintf(next, sizeof next, "%ld", current + 1);
        rc = etcdlock_put(client, (const uint8_t *)counter, strlen(counter), (const uint8_t *)next, (size_t)next_len, lock);
        if (rc == ETCDLOCK_OK)
            printf("{\"t\":%llu,\"ev\":\"wrote\",\"token\":%lld,\"value\":%ld}\n", (unsigned long long)mono_ns(), (long long)token, current + 1);
        else
            printf("{\"t\":%llu,\"ev\":\"write_refused\",\"token\":%lld,\"error\":\"%s\"}\n", (unsigned long long)mono_ns(),
                   (long long)token, etcdlock_status_str(rc));
        printf("{\"t\":%llu,\"ev\":\"releasing\",\"token\":%lld}\n", (unsigned long long)mono_ns(), (long long)token);
        rc = etcdlock_lock_release(lock);
        if (rc == ETCDLOCK_OK)
            printf("{\"t\":%llu,\"ev\":\"released\",\"token\":%lld}\n", (unsigned long long)mono_ns(), (long long)token);
        else
            printf("{\"t\":%llu,\"ev\":\"release_failed\",\"token\":%lld,\"error\":\"%s\"}\n", (unsigned long long)mono_ns(),
                   (long long)token, etcdlock_status_str(rc));
        etcdlock_lock_free(lock);
        if (stale) { /* BROKEN on purpose (DEMO_BREAK=stale): a write without the lock */
            current = read_counter(client, counter);
            next_len = snprintf(next, sizeof next, "%ld", current + 1);
            if (etcdlock_put(client, (const uint8_t *)counter, strlen(counter), (const uint8_t *)next, (size_t)next_len, NULL) == ETCDLOCK_OK)
                printf("{\"t\":%llu,\"ev\":\"wrote\",\"token\":%lld,\"value\":%ld}\n", (unsigned long long)mono_ns(), (long long)token, current + 1);
        }
    }
    if (reg) {
        etcdlock_registration_close(reg); /* the follower's wait returns ETCDLOCK_E_CLOSED */
        pthread_join(follower, NULL);
        etcdlock_registration_free(reg);
    }
    char *metrics = NULL;
    if (etcdlock_client_metrics_text(client, &metrics) == ETCDLOCK_OK) {
        /* A JSON string: the text's quotes (labels) and newlines escaped. */
        printf("{\"t\":%llu,\"ev\":\"metrics\",\"text\":\"", (unsigned long long)mono_ns());
        for (const char *p = metrics; *p; p++) {
            if (*p == '\n') fputs("\\n", stdout);
            else if (*p == '"' || *p == '\\') printf("\\%c", *p);
            else putchar(*p);
        }
        puts("\"}");
        etcdlock_string_free(metrics);
    }
    etcdlock_client_free(client);
    printf("{\"t\":%llu,\"ev\":\"done\"}\n", (unsigned long long)mono_ns());
    return 0;
}
