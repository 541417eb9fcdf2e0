/* A lock holder for FENCE-PAUSE-001 (driven by tests/test_fence_pg.py): takes lock NAME on a
 * 2 s TTL (waiting up to 10 s), opens a READ COMMITTED transaction on PostgreSQL, prints
 * "fence <its fence>" and waits for a line on stdin (the driver SIGSTOPs it meanwhile, past
 * its TTL). Then, in that transaction, writes WRITER's row to the ledger through the example's
 * fence check, whether or not it still holds (a paused process does not know), and prints
 * "committed" or "refused" (the database refused it: nothing written).
 *
 *   fence_pg_holder DSN NAME WRITER
 *
 * Exit status 0 when it printed one of those, 1 otherwise. */
#include "check.h"
#include "fence_pg_example.h"

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s DSN NAME WRITER\n", argv[0]);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    etcdlock_client *c = NULL;
    etcdlock_lock *lock = NULL;
    char *text = NULL, line[64];
    struct fence f;
    int rc, status = 1;
    PGconn *db = ledger_connect(argv[1]);
    if (!db) return 1;
    if ((rc = etcdlock_client_new(endpoints(), NULL, &c)) != ETCDLOCK_OK) {
        etcd_fail("connect", rc);
    } else if ((rc = etcdlock_lock_acquire(c, argv[2], 2, 10000, NULL, &lock)) != ETCDLOCK_OK) {
        etcd_fail("lock", rc);
    } else if ((rc = etcdlock_lock_fence(lock, &text)) != ETCDLOCK_OK) {
        etcd_fail("fence", rc);
    } else if (parse_fence(text, &f) != 0 || exec_ok(db, "BEGIN ISOLATION LEVEL READ COMMITTED") != 0) {
        fprintf(stderr, "cannot begin\n");
    } else {
        printf("fence %s\n", text);
        if (fgets(line, sizeof line, stdin)) {
            rc = ledger_write(db, &f, argv[3]);
            if (rc == 0 && exec_ok(db, "COMMIT") == 0) {
                printf("committed\n");
                status = 0;
            } else {
                exec_ok(db, "ROLLBACK");
                if (rc == 3) {
                    printf("refused\n");
                    status = 0;
                }
            }
        }
    }
    /* A holder paused past its TTL lost the lock: its release is NOT_HELD, and that is fine. */
    if (lock) etcdlock_lock_release(lock);
    etcdlock_lock_free(lock);
    etcdlock_string_free(text);
    etcdlock_client_free(c);
    PQfinish(db);
    return status;
}
