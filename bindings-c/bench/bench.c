/* The Rust benchmark's lock workloads (bench/src/workloads.rs) through the C API:
 *   lock uncontended; lock many (64 tasks) = 64 acquire/release chains in flight on one
 *   client, each on its own name, driven by the `_async` calls' callbacks (C's tasks);
 *   lock many (64 threads) = the same with 64 threads in the blocking calls;
 *   lock contended (4 / 16 clients) = N clients, one thread each, one name;
 *   queue (4 / 16 workers) = bench/src/queue.rs's: one producer (the main thread) and N worker
 *   threads, each a client of its own, on a queue of its own: tasks acked per second;
 *   semaphore contended (16 clients, 4 permits) / pool contended (16 clients, 4 slots) =
 *   bench/src/recipes.rs's: N clients, one thread each, cycling acquire/release on one
 *   semaphore of P permits, or on one slot of one pool of S slots (etcdlock_pool_acquire).
 * Each workload runs --rounds times (interleaved, as the Rust bench does) for --seconds; one
 * JSON line per workload, from its median round, in the Rust bench's format with "lang":"c".
 *
 *   bench --endpoints http://127.0.0.1:2379 [--seconds 1] [--rounds 5]
 *   bench --endpoints URL --serve   (one workload per stdin line, `SECONDS WORKLOAD NAME`, one
 *                                    JSON line back for each, until stdin closes; bench/run.py)
 */
#define _GNU_SOURCE
#include <etcdlock.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char *g_endpoints = "http://127.0.0.1:2379";

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* This process's user and system CPU seconds so far (every thread, the library's runtime's too). */
static double process_cpu(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* Microseconds of CPU per cycle since cpu0, NAN without cycles. */
static double cpu_per_cycle(double cpu0, double cycles) {
    return cycles > 0 ? (process_cpu() - cpu0) * 1e6 / cycles : NAN;
}

static void die(const char *what, int rc) {
    char msg[512];
    etcdlock_last_error(msg, sizeof msg);
    fprintf(stderr, "bench: %s: %s (%s)\n", what, etcdlock_status_str(rc), msg);
    exit(1);
}

static etcdlock_client *connect_client(void) {
    etcdlock_client *c = NULL;
    int rc = etcdlock_client_new(g_endpoints, NULL, &c);
    if (rc != ETCDLOCK_OK) die("connect", rc);
    return c;
}

static void unique(char *buf, size_t len, const char *tag) {
    static int seq;
    snprintf(buf, len, "bench/c-%s-%d-%d-%ld", tag, (int)getpid(), seq++, (long)(now_s() * 1e6) % 1000000);
}

/* One lock/unlock cycle; returns the acquire-return and release-start times. */
static void cycle(etcdlock_client *c, const char *name, double *acquired, double *releasing) {
    etcdlock_lock *l = NULL;
    int rc = etcdlock_lock_acquire(c, name, 30, ETCDLOCK_WAIT_FOREVER, NULL, &l);
    if (rc != ETCDLOCK_OK) die("lock", rc);
    if (acquired) *acquired = now_s();
    if (releasing) *releasing = now_s();
    rc = etcdlock_lock_release(l);
    if (rc != ETCDLOCK_OK) die("release", rc);
    etcdlock_lock_free(l);
}

struct report {
    char name[64];
    double cycles_per_sec, p50_ms, p99_ms, jain, cpu_us; /* NAN: not measured; cpu_us: per cycle */
};

/* ---- lock uncontended / lock many (64 threads): N threads on one client, each its own name ---- */

struct many_arg {
    etcdlock_client *client;
    char name[128];
    long n;
    pthread_barrier_t *ready;
};

static double g_many_deadline;

static void *many_worker(void *p) {
    struct many_arg *a = p;
    cycle(a->client, a->name, NULL, NULL); /* the client's lease is granted before timing */
    pthread_barrier_wait(a->ready); /* the main thread sets the deadline, then passes too */
    pthread_barrier_wait(a->ready);
    while (now_s() < g_many_deadline) {
        cycle(a->client, a->name, NULL, NULL);
        a->n++;
    }
    return NULL;
}

static struct report lock_many(int tasks, double seconds) {
    etcdlock_client *c = connect_client();
    struct many_arg *args = calloc(tasks, sizeof *args);
    pthread_t *t = calloc(tasks, sizeof *t);
    pthread_barrier_t ready;
    pthread_barrier_init(&ready, NULL, tasks + 1);
    char prefix[96];
    unique(prefix, sizeof prefix, "lock");
    for (int i = 0; i < tasks; i++) {
        args[i].client = c;
        snprintf(args[i].name, sizeof args[i].name, "%s/%d", prefix, i);
        args[i].ready = &ready;
    }
    for (int i = 0; i < tasks; i++) pthread_create(&t[i], NULL, many_worker, &args[i]);
    /* Wait for every thread's warm-up cycle, then time; the barrier publishes the deadline. */
    pthread_barrier_wait(&ready);
    double cpu0 = process_cpu();
    g_many_deadline = now_s() + seconds;
    pthread_barrier_wait(&ready);
    long total = 0;
    for (int i = 0; i < tasks; i++) {
        pthread_join(t[i], NULL);
        total += args[i].n;
    }
    double cpu_us = cpu_per_cycle(cpu0, total);
    pthread_barrier_destroy(&ready);
    free(args);
    free(t);
    etcdlock_client_free(c);
    struct report r = {.cycles_per_sec = total / seconds, .p50_ms = NAN, .p99_ms = NAN, .jain = NAN, .cpu_us = cpu_us};
    if (tasks == 1)
        snprintf(r.name, sizeof r.name, "lock uncontended");
    else
        snprintf(r.name, sizeof r.name, "lock many (%d threads)", tasks);
    return r;
}

/* ---- lock many (64 tasks): chains of async calls, each its own name ---- */

struct chain {
    etcdlock_client *client;
    char name[128];
    long n;
    double deadline;
    pthread_mutex_t *mu;
    pthread_cond_t *done;
    int *running;
};

static void chain_locked(void *user, int status, etcdlock_lock *lock);

static void chain_next(struct chain *ch) {
    int rc = now_s() < ch->deadline ? etcdlock_lock_acquire_async(ch->client, ch->name, 30, ETCDLOCK_WAIT_FOREVER, NULL, chain_locked, ch)
                                    : -1;
    if (rc == ETCDLOCK_OK) return;
    if (rc > 0) die("lock_async", rc);
    pthread_mutex_lock(ch->mu);
    if (--*ch->running == 0) pthread_cond_signal(ch->done);
    pthread_mutex_unlock(ch->mu);
}

static void chain_released(void *user, int status) {
    struct chain *ch = user;
    if (status != ETCDLOCK_OK) die("release_async", status);
    ch->n++;
    chain_next(ch);
}

static void chain_locked(void *user, int status, etcdlock_lock *lock) {
    if (status != ETCDLOCK_OK) die("lock_async", status);
    int rc = etcdlock_lock_release_async(lock, chain_released, user);
    if (rc != ETCDLOCK_OK) die("release_async", rc);
    etcdlock_lock_free(lock); /* the release goes on without the handle */
}

static struct report lock_many_async(int tasks, double seconds) {
    etcdlock_client *c = connect_client();
    struct chain *chains = calloc(tasks, sizeof *chains);
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t done = PTHREAD_COND_INITIALIZER;
    int running = tasks;
    char prefix[96];
    unique(prefix, sizeof prefix, "async");
    for (int i = 0; i < tasks; i++) {
        snprintf(chains[i].name, sizeof chains[i].name, "%s/%d", prefix, i);
        cycle(c, chains[i].name, NULL, NULL); /* the client's lease is granted before timing */
    }
    double cpu0 = process_cpu();
    double deadline = now_s() + seconds;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < tasks; i++) {
        chains[i] = (struct chain){.client = c, .deadline = deadline, .mu = &mu, .done = &done, .running = &running};
        snprintf(chains[i].name, sizeof chains[i].name, "%s/%d", prefix, i);
        chain_next(&chains[i]);
    }
    while (running > 0) pthread_cond_wait(&done, &mu);
    pthread_mutex_unlock(&mu);
    long total = 0;
    for (int i = 0; i < tasks; i++) total += chains[i].n;
    double cpu_us = cpu_per_cycle(cpu0, total);
    free(chains);
    etcdlock_client_free(c);
    struct report r = {.cycles_per_sec = total / seconds, .p50_ms = NAN, .p99_ms = NAN, .jain = NAN, .cpu_us = cpu_us};
    snprintf(r.name, sizeof r.name, "lock many (%d tasks)", tasks);
    return r;
}

/* ---- lock contended: N clients, one name ---- */

struct span {
    double acquired, releasing;
};

struct contended_arg {
    etcdlock_client *client;
    const char *name;
    double deadline;
    long n;
    struct span *spans;
    size_t cap;
};

static void *contended_worker(void *p) {
    struct contended_arg *a = p;
    while (now_s() < a->deadline) {
        struct span s;
        cycle(a->client, a->name, &s.acquired, &s.releasing);
        if ((size_t)a->n < a->cap) a->spans[a->n] = s;
        a->n++;
    }
    return NULL;
}

static int by_acquired(const void *x, const void *y) {
    const struct span *a = x, *b = y;
    return (a->acquired > b->acquired) - (a->acquired < b->acquired);
}

static int by_value(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static struct report contended(int clients, double seconds) {
    char name[96];
    unique(name, sizeof name, "contended");
    struct contended_arg *args = calloc(clients, sizeof *args);
    pthread_t *t = calloc(clients, sizeof *t);
    size_t cap = 200000;
    for (int i = 0; i < clients; i++) {
        args[i].client = connect_client(); /* one connection per contender */
        args[i].name = name;
        args[i].cap = cap;
        args[i].spans = calloc(cap, sizeof(struct span));
    }
    double cpu0 = process_cpu();
    double start = now_s();
    for (int i = 0; i < clients; i++) {
        args[i].deadline = start + seconds;
        pthread_create(&t[i], NULL, contended_worker, &args[i]);
    }
    for (int i = 0; i < clients; i++) pthread_join(t[i], NULL);
    double elapsed = now_s() - start;
    double cpu_used = process_cpu() - cpu0;

    size_t total = 0;
    double sum = 0, sq = 0;
    for (int i = 0; i < clients; i++) {
        total += (size_t)args[i].n < cap ? (size_t)args[i].n : cap;
        sum += args[i].n;
        sq += (double)args[i].n * args[i].n;
    }
    struct span *all = calloc(total ? total : 1, sizeof *all);
    size_t k = 0;
    for (int i = 0; i < clients; i++)
        for (long j = 0; j < args[i].n && (size_t)j < cap; j++) all[k++] = args[i].spans[j];
    qsort(all, k, sizeof *all, by_acquired);
    /* Handoff: the next holder's acquire return minus the previous holder's release start. */
    double *h = calloc(k ? k : 1, sizeof *h);
    size_t nh = 0;
    for (size_t i = 1; i < k; i++) {
        double d = all[i].acquired - all[i - 1].releasing;
        h[nh++] = d > 0 ? d : 0;
    }
    qsort(h, nh, sizeof *h, by_value);
    struct report r = {.cycles_per_sec = sum / elapsed, .p50_ms = NAN, .p99_ms = NAN, .cpu_us = sum > 0 ? cpu_used * 1e6 / sum : NAN};
    if (nh) {
        r.p50_ms = h[(size_t)lround((nh - 1) * 0.5)] * 1e3;
        r.p99_ms = h[(size_t)lround((nh - 1) * 0.99)] * 1e3;
    }
    r.jain = sq > 0 ? sum * sum / (clients * sq) : NAN;
    snprintf(r.name, sizeof r.name, "lock contended (%d clients)", clients);
    for (int i = 0; i < clients; i++) {
        etcdlock_client_free(args[i].client);
        free(args[i].spans);
    }
    free(all);
    free(h);
    free(args);
    free(t);
    return r;
}

/* ---- queue (N workers): one producer, N workers, each a client of its own ---- */

/* bench/src/queue.rs's: the producer stays at most this many items per worker ahead of the acks. */
enum { BACKLOG_PER_WORKER = 2 };
static const char PAYLOAD[] = "task-0123456789";

/* The producer's free slots: taken by each put, given back by each ack. */
struct backlog {
    pthread_mutex_t mu;
    pthread_cond_t freed;
    int free;
};

struct queue_arg {
    etcdlock_client *client;
    const char *name;
    double deadline;
    long acked;
    struct backlog *backlog;
};

static void *queue_worker(void *p) {
    struct queue_arg *a = p;
    etcdlock_queue *q = NULL;
    int rc = etcdlock_queue_open(a->client, a->name, 10, 5, &q);
    if (rc != ETCDLOCK_OK) die("queue_open", rc);
    for (;;) {
        double left = a->deadline - now_s();
        if (left <= 0) break;
        etcdlock_task *t = NULL;
        rc = etcdlock_queue_claim(q, (int64_t)ceil(left * 1e3), NULL, NULL, 0, &t);
        if (rc == ETCDLOCK_E_LOCK_TIMEOUT) break;
        if (rc != ETCDLOCK_OK) die("claim", rc);
        rc = etcdlock_task_ack(t, NULL);
        if (rc != ETCDLOCK_OK) die("ack", rc);
        etcdlock_task_free(t);
        pthread_mutex_lock(&a->backlog->mu);
        a->backlog->free++;
        pthread_cond_signal(&a->backlog->freed);
        pthread_mutex_unlock(&a->backlog->mu);
        if (now_s() <= a->deadline) a->acked++;
    }
    etcdlock_queue_free(q);
    return NULL;
}

/* Waits for a free slot until `deadline` (CLOCK_MONOTONIC seconds); 1 if one was taken. */
static int take_slot(struct backlog *b, double deadline) {
    struct timespec until = {.tv_sec = (time_t)deadline, .tv_nsec = (long)((deadline - floor(deadline)) * 1e9)};
    pthread_mutex_lock(&b->mu);
    int rc = 0;
    while (b->free == 0 && rc == 0) rc = pthread_cond_timedwait(&b->freed, &b->mu, &until);
    int took = b->free > 0 && now_s() < deadline;
    if (took) b->free--;
    pthread_mutex_unlock(&b->mu);
    return took;
}

static struct report queue_window(int workers, double seconds) {
    char name[96];
    unique(name, sizeof name, "queue");
    etcdlock_client *producer = connect_client();
    struct queue_arg *args = calloc(workers, sizeof *args);
    pthread_t *t = calloc(workers, sizeof *t);
    struct backlog backlog = {.free = BACKLOG_PER_WORKER * workers};
    pthread_mutex_init(&backlog.mu, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* now_s()'s clock */
    pthread_cond_init(&backlog.freed, &attr);
    pthread_condattr_destroy(&attr);
    for (int i = 0; i < workers; i++) {
        args[i].client = connect_client();
        args[i].name = name;
        args[i].backlog = &backlog;
    }
    etcdlock_queue *q = NULL;
    int rc = etcdlock_queue_open(producer, name, 10, 5, &q);
    if (rc != ETCDLOCK_OK) die("queue_open", rc);
    double cpu0 = process_cpu();
    double deadline = now_s() + seconds;
    for (int i = 0; i < workers; i++) {
        args[i].deadline = deadline;
        pthread_create(&t[i], NULL, queue_worker, &args[i]);
    }
    while (take_slot(&backlog, deadline)) {
        rc = etcdlock_queue_put(q, (const uint8_t *)PAYLOAD, sizeof PAYLOAD - 1, NULL, 0, 0, NULL);
        if (rc != ETCDLOCK_OK) die("put", rc);
    }
    long acked = 0;
    for (int i = 0; i < workers; i++) {
        pthread_join(t[i], NULL);
        acked += args[i].acked;
    }
    double cpu_us = cpu_per_cycle(cpu0, acked);
    for (;;) { /* what is left, so that the next window's etcd holds nothing of this one's */
        etcdlock_task *task = NULL;
        rc = etcdlock_queue_claim(q, 0, NULL, NULL, 0, &task);
        if (rc == ETCDLOCK_E_WOULD_BLOCK) break;
        if (rc != ETCDLOCK_OK) die("claim", rc);
        rc = etcdlock_task_ack(task, NULL);
        if (rc != ETCDLOCK_OK) die("ack", rc);
        etcdlock_task_free(task);
    }
    etcdlock_queue_free(q);
    for (int i = 0; i < workers; i++) etcdlock_client_free(args[i].client);
    etcdlock_client_free(producer);
    pthread_cond_destroy(&backlog.freed);
    pthread_mutex_destroy(&backlog.mu);
    free(args);
    free(t);
    struct report r = {.cycles_per_sec = acked / seconds, .p50_ms = NAN, .p99_ms = NAN, .jain = NAN, .cpu_us = cpu_us};
    snprintf(r.name, sizeof r.name, "queue (%d workers)", workers);
    return r;
}

/* ---- semaphore / pool contended: N clients, one semaphore of P permits or one pool of S slots ---- */

struct recipe_arg {
    etcdlock_client *client;
    const char *name;
    int pool; /* 1: one slot of a pool of `size` slots; 0: one of `size` permits */
    int size;
    double deadline;
    long n;
};

static void *recipe_worker(void *p) {
    struct recipe_arg *a = p;
    etcdlock_pool *pool = NULL;
    if (a->pool) {
        int rc = etcdlock_pool_open(a->client, a->name, NULL, (size_t)a->size, 30, 0, &pool);
        if (rc != ETCDLOCK_OK) die("pool_open", rc);
    }
    while (now_s() < a->deadline) {
        if (a->pool) {
            etcdlock_pool_held *held = NULL;
            int rc = etcdlock_pool_acquire(pool, 1, NULL, ETCDLOCK_WAIT_FOREVER, NULL, &held);
            if (rc != ETCDLOCK_OK) die("pool_acquire", rc);
            rc = etcdlock_pool_held_release(held);
            if (rc != ETCDLOCK_OK) die("pool_held_release", rc);
            etcdlock_pool_held_free(held);
        } else {
            etcdlock_lock *l = NULL;
            int rc = etcdlock_semaphore_acquire(a->client, a->name, (uint32_t)a->size, 30, ETCDLOCK_WAIT_FOREVER, NULL, &l);
            if (rc != ETCDLOCK_OK) die("semaphore_acquire", rc);
            rc = etcdlock_lock_release(l);
            if (rc != ETCDLOCK_OK) die("release", rc);
            etcdlock_lock_free(l);
        }
        a->n++;
    }
    etcdlock_pool_free(pool);
    return NULL;
}

static struct report recipe_contended(int pool, int clients, int size, double seconds) {
    char name[96];
    unique(name, sizeof name, pool ? "pool" : "sem");
    struct recipe_arg *args = calloc(clients, sizeof *args);
    pthread_t *t = calloc(clients, sizeof *t);
    for (int i = 0; i < clients; i++) {
        args[i].client = connect_client(); /* one connection per contender */
        args[i].name = name;
        args[i].pool = pool;
        args[i].size = size;
    }
    double cpu0 = process_cpu();
    double start = now_s();
    for (int i = 0; i < clients; i++) {
        args[i].deadline = start + seconds;
        pthread_create(&t[i], NULL, recipe_worker, &args[i]);
    }
    for (int i = 0; i < clients; i++) pthread_join(t[i], NULL);
    double elapsed = now_s() - start;
    double sum = 0, sq = 0;
    for (int i = 0; i < clients; i++) {
        sum += args[i].n;
        sq += (double)args[i].n * args[i].n;
    }
    struct report r = {.cycles_per_sec = sum / elapsed, .p50_ms = NAN, .p99_ms = NAN, .cpu_us = cpu_per_cycle(cpu0, sum)};
    r.jain = sq > 0 ? sum * sum / (clients * sq) : NAN;
    if (pool)
        snprintf(r.name, sizeof r.name, "pool contended (%d clients, %d slots)", clients, size);
    else
        snprintf(r.name, sizeof r.name, "semaphore contended (%d clients, %d permits)", clients, size);
    for (int i = 0; i < clients; i++) etcdlock_client_free(args[i].client);
    free(args);
    free(t);
    return r;
}

static int by_cycles(const void *x, const void *y) {
    const struct report *a = x, *b = y;
    return (a->cycles_per_sec > b->cycles_per_sec) - (a->cycles_per_sec < b->cycles_per_sec);
}

static void print_ms(double v) {
    if (isnan(v))
        printf("null");
    else
        printf("%.4f", v);
}

static void print_json(const struct report *m) {
    printf("{\"lang\":\"c\",\"workload\":\"%s\",\"cycles_per_sec\":%.1f,\"handoff_p50_ms\":", m->name, m->cycles_per_sec);
    print_ms(m->p50_ms);
    printf(",\"handoff_p99_ms\":");
    print_ms(m->p99_ms);
    printf(",\"jain\":");
    if (isnan(m->jain))
        printf("null");
    else
        printf("%.4f", m->jain);
    printf(",\"cpu_us_per_cycle\":");
    if (isnan(m->cpu_us))
        printf("null");
    else
        printf("%.1f", m->cpu_us);
    printf("}\n");
    fflush(stdout);
}

static int serve(void) {
    char line[256], name[128];
    double seconds;
    while (fgets(line, sizeof line, stdin) && sscanf(line, "%lf %127[^\n]", &seconds, name) == 2) {
        struct report r;
        if (!strcmp(name, "lock uncontended"))
            r = lock_many(1, seconds);
        else if (!strcmp(name, "lock many (64 tasks)"))
            r = lock_many_async(64, seconds);
        else if (!strcmp(name, "lock many (64 threads)"))
            r = lock_many(64, seconds);
        else if (!strcmp(name, "lock contended (4 clients)"))
            r = contended(4, seconds);
        else if (!strcmp(name, "lock contended (16 clients)"))
            r = contended(16, seconds);
        else if (!strcmp(name, "queue (4 workers)"))
            r = queue_window(4, seconds);
        else if (!strcmp(name, "queue (16 workers)"))
            r = queue_window(16, seconds);
        else if (!strcmp(name, "semaphore contended (16 clients, 4 permits)"))
            r = recipe_contended(0, 16, 4, seconds);
        else if (!strcmp(name, "pool contended (16 clients, 4 slots)"))
            r = recipe_contended(1, 16, 4, seconds);
        else {
            fprintf(stderr, "bench: unknown workload %s\n", name);
            return 2;
        }
        print_json(&r);
    }
    etcdlock_shutdown(5000);
    return 0;
}

int main(int argc, char **argv) {
    double seconds = 1.0;
    int rounds = 5, serving = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--endpoints") && i + 1 < argc)
            g_endpoints = argv[++i];
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--serve"))
            serving = 1;
        else {
            fprintf(stderr, "usage: bench [--endpoints URL[,URL]] [--seconds S] [--rounds R] [--serve]\n");
            return 2;
        }
    }
    if (seconds <= 0 || rounds <= 0 || rounds > 1000) {
        fprintf(stderr, "bench: --seconds must be > 0 and --rounds in 1..1000\n");
        return 2;
    }
    if (serving) return serve();
    lock_many(1, 0.5); /* warm the server and the library up */
    enum { W = 9 };
    struct report *res[W];
    for (int w = 0; w < W; w++) res[w] = calloc(rounds, sizeof(struct report));
    for (int r = 0; r < rounds; r++) {
        res[0][r] = lock_many(1, seconds);
        res[1][r] = lock_many_async(64, seconds);
        res[2][r] = lock_many(64, seconds);
        res[3][r] = contended(4, seconds);
        res[4][r] = contended(16, seconds);
        res[5][r] = queue_window(4, seconds);
        res[6][r] = queue_window(16, seconds);
        res[7][r] = recipe_contended(0, 16, 4, seconds);
        res[8][r] = recipe_contended(1, 16, 4, seconds);
    }
    for (int w = 0; w < W; w++) {
        qsort(res[w], rounds, sizeof(struct report), by_cycles);
        struct report *m = &res[w][rounds / 2];
        print_json(m);
        free(res[w]);
    }
    etcdlock_shutdown(5000);
    return 0;
}
