/* async.c: four jobs, each taking its own lock and releasing it three times, all in flight at
 * once on one thread's worth of code: every step starts the next from its callback.
 *
 *   cc async.c $(pkg-config --cflags --libs etcdlock) -lpthread -o async
 *   ETCDLOCK_ENDPOINTS=http://127.0.0.1:2379 ./async
 */
#include <etcdlock.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { JOBS = 4, ROUNDS = 3 };

struct job {
    etcdlock_client *client;
    char name[64];
    int rounds_left;
    long long last_token;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_done = PTHREAD_COND_INITIALIZER;
static int running = JOBS, failures;

static void finish(struct job *job, const char *what, int rc) {
    pthread_mutex_lock(&mu);
    if (rc != ETCDLOCK_OK) {
        char msg[256];
        etcdlock_last_error(msg, sizeof msg); /* valid inside the callback, on its thread */
        fprintf(stderr, "%s %s: %s (%s)\n", job->name, what, etcdlock_status_str(rc), msg);
        failures++;
    }
    if (--running == 0) pthread_cond_signal(&all_done);
    pthread_mutex_unlock(&mu);
}

static void on_locked(void *user_data, int status, etcdlock_lock *lock);

static void on_released(void *user_data, int status) {
    struct job *job = user_data;
    if (status != ETCDLOCK_OK || --job->rounds_left == 0) {
        finish(job, "release", status);
        return;
    }
    int rc = etcdlock_lock_acquire_async(job->client, job->name, 10, 5000, NULL, on_locked, job);
    if (rc != ETCDLOCK_OK) finish(job, "lock", rc);
}

/* Runs on a library thread: no blocking etcdlock calls here (they return
 * ETCDLOCK_E_WRONG_THREAD), only quick work and further `_async` calls. */
static void on_locked(void *user_data, int status, etcdlock_lock *lock) {
    struct job *job = user_data;
    if (status != ETCDLOCK_OK) {
        finish(job, "lock", status);
        return;
    }
    job->last_token = etcdlock_lock_fencing_token(lock);
    int rc = etcdlock_lock_release_async(lock, on_released, job);
    etcdlock_lock_free(lock); /* the release goes on without the handle */
    if (rc != ETCDLOCK_OK) finish(job, "release", rc);
}

int main(void) {
    const char *endpoints = getenv("ETCDLOCK_ENDPOINTS");
    if (!endpoints) endpoints = "http://127.0.0.1:2379";
    etcdlock_client *client = NULL;
    int rc = etcdlock_client_new(endpoints, NULL, &client);
    if (rc != ETCDLOCK_OK) {
        fprintf(stderr, "connect: %s\n", etcdlock_status_str(rc));
        return 1;
    }

    struct job jobs[JOBS];
    pthread_mutex_lock(&mu);
    for (int i = 0; i < JOBS; i++) {
        jobs[i] = (struct job){.client = client, .rounds_left = ROUNDS};
        snprintf(jobs[i].name, sizeof jobs[i].name, "examples/async-%d", i);
        /* Returns at once; on_locked runs once, later, with the outcome. */
        rc = etcdlock_lock_acquire_async(client, jobs[i].name, 10, 5000, NULL, on_locked, &jobs[i]);
        if (rc != ETCDLOCK_OK) {
            fprintf(stderr, "lock: %s\n", etcdlock_status_str(rc));
            failures++;
            running--;
        }
    }
    while (running > 0) pthread_cond_wait(&all_done, &mu);
    pthread_mutex_unlock(&mu);

    for (int i = 0; i < JOBS; i++) printf("%s: %d rounds, last fencing token %lld\n", jobs[i].name, ROUNDS, jobs[i].last_token);
    etcdlock_client_free(client);
    printf(failures ? "failed\n" : "done\n");
    return failures != 0;
}
