/* basic.c: take a lock, write under it (fenced), read back, release.
 *
 *   cc basic.c $(pkg-config --cflags --libs etcdlock) -o basic
 *   ETCDLOCK_ENDPOINTS=http://127.0.0.1:2379 ./basic
 */
#include <etcdlock.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, int rc) {
    char msg[256];
    etcdlock_last_error(msg, sizeof msg);
    fprintf(stderr, "%s: %s (%s)\n", what, etcdlock_status_str(rc), msg);
    return 1;
}

int main(void) {
    const char *endpoints = getenv("ETCDLOCK_ENDPOINTS");
    if (!endpoints) endpoints = "http://127.0.0.1:2379";

    etcdlock_client *client = NULL;
    int rc = etcdlock_client_new(endpoints, NULL, &client);
    if (rc != ETCDLOCK_OK) return fail("connect", rc);

    /* Wait at most 5 s for the lock; the holder's lease has a 10 s TTL, kept alive. */
    etcdlock_lock *lock = NULL;
    rc = etcdlock_lock_acquire(client, "examples/basic", 10, 5000, NULL, &lock);
    if (rc != ETCDLOCK_OK) {
        etcdlock_client_free(client);
        return fail("lock", rc);
    }
    printf("locked examples/basic, fencing token %lld\n", (long long)etcdlock_lock_fencing_token(lock));

    /* Written only while the lock is still held (etcd checks, atomically with the write). */
    const char key[] = "examples/basic-state", value[] = "hello from C";
    rc = etcdlock_put(client, (const uint8_t *)key, sizeof key - 1, (const uint8_t *)value, sizeof value - 1, lock);
    if (rc != ETCDLOCK_OK) fail("fenced put", rc);

    etcdlock_buf *buf = NULL;
    rc = etcdlock_get(client, (const uint8_t *)key, sizeof key - 1, &buf);
    if (rc == ETCDLOCK_OK && buf)
        printf("read back: %.*s\n", (int)etcdlock_buf_len(buf), (const char *)etcdlock_buf_data(buf));
    etcdlock_buf_free(buf);

    rc = etcdlock_lock_release(lock);
    if (rc != ETCDLOCK_OK) fail("release", rc);
    etcdlock_lock_free(lock);
    etcdlock_client_free(client);
    etcdlock_shutdown(5000); /* optional: stops the library's threads before exit */
    printf("done\n");
    return 0;
}
