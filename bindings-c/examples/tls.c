/* tls.c: connect to an etcd that requires TLS and client certificates (mTLS), take a lock,
 * write under it (fenced), release.
 *
 *   cc tls.c $(pkg-config --cflags --libs etcdlock) -o tls
 *   ETCDLOCK_TLS_ENDPOINTS=https://127.0.0.1:2379 ETCDLOCK_CA_FILE=ca.pem \
 *   ETCDLOCK_CERT_FILE=client.pem ETCDLOCK_KEY_FILE=client.key ./tls
 */
#include <etcdlock.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, int rc) {
    char msg[512];
    etcdlock_last_error(msg, sizeof msg);
    fprintf(stderr, "%s: %s (%s)\n", what, etcdlock_status_str(rc), msg);
    return 1;
}

int main(void) {
    const char *endpoints = getenv("ETCDLOCK_TLS_ENDPOINTS");
    if (!endpoints) endpoints = "https://127.0.0.1:2379";

    /* Always start from the initialiser: it sets opts.struct_size, which lets the library
     * read exactly the fields this program was compiled with. */
    etcdlock_client_options opts = ETCDLOCK_CLIENT_OPTIONS_INIT;
    opts.ca_file = getenv("ETCDLOCK_CA_FILE");     /* NULL: the system's roots */
    opts.cert_file = getenv("ETCDLOCK_CERT_FILE"); /* client certificate and key, for mTLS */
    opts.key_file = getenv("ETCDLOCK_KEY_FILE");
    opts.server_name = getenv("ETCDLOCK_SERVER_NAME"); /* NULL: each endpoint's host */
    /* PEM in memory instead of a file: opts.ca_pem = bytes; opts.ca_pem_len = length; */

    etcdlock_client *client = NULL;
    int rc = etcdlock_client_new(endpoints, &opts, &client);
    if (rc != ETCDLOCK_OK) return fail("connect", rc); /* UNAVAILABLE, AUTH or INVALID_ARGUMENT */

    etcdlock_lock *lock = NULL;
    rc = etcdlock_lock_acquire(client, "examples/tls", 10, 5000, NULL, &lock);
    if (rc != ETCDLOCK_OK) {
        etcdlock_client_free(client);
        return fail("lock", rc);
    }
    printf("locked examples/tls over TLS, fencing token %lld\n", (long long)etcdlock_lock_fencing_token(lock));
    const char key[] = "examples/tls-state", value[] = "hello over TLS";
    rc = etcdlock_put(client, (const uint8_t *)key, sizeof key - 1, (const uint8_t *)value, sizeof value - 1, lock);
    if (rc != ETCDLOCK_OK) fail("fenced put", rc);
    rc = etcdlock_lock_release(lock);
    if (rc != ETCDLOCK_OK) fail("release", rc);
    etcdlock_lock_free(lock);
    etcdlock_delete(client, (const uint8_t *)key, sizeof key - 1);
    etcdlock_client_free(client);
    printf("done\n");
    return 0;
}
