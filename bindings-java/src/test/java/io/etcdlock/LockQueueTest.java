package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What the queue under `<name>/` is made of: the client's shared lease, nested names, foreign keys. */
class LockQueueTest {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));

    // covers: LOCK-SESSION-001
    @Test
    void locksOfOneClientAndTtlShareOneLease() throws Exception {
        EtcdLockClient client = Etcd.client();
        String name = Etcd.uniqueName("session");
        long lease;
        try (LockGuard first = client.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
            lease = first.leaseId();
        }
        for (int i = 0; i < 3; i++) {
            // Other handles, other names, later cycles: the same lease, never re-granted.
            try (LockGuard again = client.lock(name + "-" + i, TTL).acquire(Duration.ofSeconds(5))) {
                assertEquals(lease, again.leaseId());
            }
        }
        long other;
        try (LockGuard longer = client.lock(name, LockOptions.ttl(Duration.ofSeconds(20))).acquire(Duration.ofSeconds(5))) {
            other = longer.leaseId();
            assertNotEquals(lease, other);
        }
        List<Long> leases = Etcd.leases();
        assertTrue(leases.contains(lease), leases.toString());
        assertTrue(leases.contains(other), leases.toString());
        client.close();
        leases = Etcd.leases();
        assertFalse(leases.contains(lease), "close() did not revoke the shared lease");
        assertFalse(leases.contains(other), "close() did not revoke the other TTL's lease");
    }

    // covers: LOCK-NESTED-001
    @Test
    void aNameAndANameUnderItAreDifferentLocks() throws Exception {
        String name = Etcd.uniqueName("nested");
        try (EtcdLockClient a = Etcd.client(); EtcdLockClient b = Etcd.client()) {
            try (LockGuard inner = a.lock(name + "/a", TTL).acquire(Duration.ofSeconds(5));
                    LockGuard outer = b.lock(name, TTL).acquire(Duration.ofSeconds(2))) {
                assertTrue(inner.isHeld() && outer.isHeld());
                assertTrue(a.lock(name + "/a", TTL).tryAcquire().isEmpty(), "the inner lock no longer excludes");
                assertTrue(a.lock(name, TTL).tryAcquire().isEmpty(), "the outer lock no longer excludes");
            }
        }
    }

    // covers: LOCK-FOREIGN-001
    @Test
    void keysNoWaiterWroteNeverMakeTheLockBusy() throws Exception {
        String name = Etcd.uniqueName("foreign");
        try (EtcdLockClient client = Etcd.client(); Lease lease = client.lease(Duration.ofSeconds(30))) {
            client.put(name + "/plain", bytes("no lease"));
            client.put(name + "/leased", bytes("a user's key on a lease"), lease);
            client.put(name + "/" + Long.toHexString(lease.id()), bytes("named like a waiter"));
            Optional<LockGuard> free = client.lock(name, TTL).tryAcquire();
            assertTrue(free.isPresent(), "foreign keys made the lock busy");
            try (LockGuard held = free.get()) {
                assertEquals(List.of(held.key()), Etcd.keysUnder(held.key()));
                assertTrue(client.lock(name, TTL).tryAcquire().isEmpty(), "the holder no longer excludes");
            }
            try (LockGuard again = client.lock(name, TTL).acquire(Duration.ofSeconds(2))) {
                assertTrue(again.isHeld());
            }
            Etcd.etcdctl("del", "--prefix", name + "/");
        }
    }
}
