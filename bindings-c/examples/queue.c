/* queue.c: a task queue (put with priorities, claim, a fenced result write, ack, nack with a
 * delay) and a once-per-period job.
 *
 *   cc queue.c $(pkg-config --cflags --libs etcdlock) -o queue
 *   ETCDLOCK_ENDPOINTS=http://127.0.0.1:2379 ./queue
 */
#include <etcdlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what, int rc) {
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    fprintf(stderr, "%s: %s (%s)\n", what, etcdlock_status_str(rc), msg);
    return 1;
}

/* The work: resizes "an image" (here: upper-cases the payload into a result). Fails once for
 * "img-3", to show a nack. */
static int work(const etcdlock_task *task, char *result, size_t len) {
    size_t n = 0;
    const uint8_t *payload = etcdlock_task_payload(task, &n);
    if (strcmp(etcdlock_task_id(task), "img-3") == 0 && etcdlock_task_attempts(task) == 1) return 0;
    snprintf(result, len, "resized %.*s", (int)n, (const char *)payload);
    return 1;
}

int main(void) {
    const char *endpoints = getenv("ETCDLOCK_ENDPOINTS");
    if (!endpoints) endpoints = "http://127.0.0.1:2379";
    etcdlock_client *client = NULL;
    int rc = etcdlock_client_new(endpoints, NULL, &client);
    if (rc != ETCDLOCK_OK) return fail("connect", rc);
    char name[64];
    snprintf(name, sizeof name, "examples/resize-%d", (int)getpid());

    /* Claims live on leases of 10 s kept alive while a task is held; 5 deliveries at most. */
    etcdlock_queue *q = NULL;
    rc = etcdlock_queue_open(client, name, 10, 5, &q);
    if (rc != ETCDLOCK_OK) return fail("queue", rc);

    /* The producer: ids make a put idempotent; higher priority first. */
    const char *ids[] = {"img-1", "img-2", "img-3"};
    const int32_t priorities[] = {0, 0, 5};
    for (int i = 0; i < 3; i++) {
        rc = etcdlock_queue_put(q, (const uint8_t *)ids[i], strlen(ids[i]), ids[i], priorities[i], 0, NULL);
        if (rc != ETCDLOCK_OK) return fail("put", rc);
    }

    /* The worker: until nothing is pending or delayed. */
    for (;;) {
        etcdlock_queue_counts *counts = NULL;
        rc = etcdlock_queue_stats(q, &counts);
        if (rc != ETCDLOCK_OK) return fail("stats", rc);
        int more = counts->pending + counts->delayed > 0;
        etcdlock_queue_counts_free(counts);
        if (!more) break;
        etcdlock_task *task = NULL;
        rc = etcdlock_queue_claim(q, 10000, NULL, (const uint8_t *)"example", 7, &task);
        if (rc != ETCDLOCK_OK) return fail("claim", rc); /* ETCDLOCK_E_LOCK_TIMEOUT: none in 10 s */
        char result[128], key[128];
        if (work(task, result, sizeof result)) {
            /* The result is written only while the claim holds, then the item is acked. */
            snprintf(key, sizeof key, "%s-results/%s", name, etcdlock_task_id(task));
            rc = etcdlock_task_put(task, (const uint8_t *)key, strlen(key), (const uint8_t *)result, strlen(result));
            if (rc == ETCDLOCK_OK) rc = etcdlock_task_ack(task, NULL);
            printf("%s (attempt %u): %s\n", etcdlock_task_id(task), etcdlock_task_attempts(task),
                   rc == ETCDLOCK_OK ? result : etcdlock_status_str(rc));
            etcdlock_delete(client, (const uint8_t *)key, strlen(key));
        } else {
            printf("%s (attempt %u): failed, again in a second or so\n", etcdlock_task_id(task), etcdlock_task_attempts(task));
            etcdlock_task_nack(task, 1000);
        }
        etcdlock_task_free(task); /* one neither acked nor nacked would be given back */
    }
    etcdlock_queue_counts *counts = NULL;
    if (etcdlock_queue_stats(q, &counts) == ETCDLOCK_OK) {
        printf("pending %llu, claimed %llu, dead %llu\n", (unsigned long long)counts->pending,
               (unsigned long long)counts->claimed, (unsigned long long)counts->dead);
        etcdlock_queue_counts_free(counts);
    }
    etcdlock_queue_free(q);

    /* A job run at most once an hour however many hosts trigger it: NULL when not ours. */
    snprintf(name, sizeof name, "examples/report-%d", (int)getpid());
    for (int trigger = 1; trigger <= 2; trigger++) {
        etcdlock_once_slot *slot = NULL;
        rc = etcdlock_once(client, name, 3600 * 1000, 10, 0 /* now */, 3, &slot);
        if (rc != ETCDLOCK_OK) return fail("once", rc);
        if (!slot) {
            printf("trigger %d: this hour's report is done or running elsewhere\n", trigger);
            continue;
        }
        printf("trigger %d: running this hour's report (slot %lld)\n", trigger, (long long)etcdlock_once_index(slot));
        rc = etcdlock_once_done(slot); /* or etcdlock_once_release(slot) if it failed */
        if (rc != ETCDLOCK_OK) fail("done", rc);
        etcdlock_once_free(slot);
    }
    etcdlock_client_free(client);
    etcdlock_shutdown(5000);
    printf("done\n");
    return 0;
}
