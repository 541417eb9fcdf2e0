package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** A held lock that stops being held without a release: the lost callback and the fencing. */
class LockLostTest {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));

    // covers: LOCK-LOST-001
    @Test
    void keyDeletedByAnOperator() throws Exception {
        String name = Etcd.uniqueName("lostkey");
        try (EtcdLockClient client = Etcd.client()) {
            LockGuard held = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
            List<String> reasons = new CopyOnWriteArrayList<>();
            List<String> threads = new CopyOnWriteArrayList<>();
            held.onLost(r -> {
                reasons.add(r);
                threads.add(Thread.currentThread().getName());
            });
            Etcd.etcdctl("del", held.key());
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> !reasons.isEmpty()), "onLost was not called");
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> !held.isHeld()));
            assertEquals(Optional.of("key_deleted"), held.lostReason());
            assertThrows(NotHeldException.class, () -> held.putIfHeld(name + "-data", bytes("x")));
            assertTrue(client.get(name + "-data").isEmpty());
            // Fires once; a callback added afterwards gets the reason at once.
            List<String> late = new CopyOnWriteArrayList<>();
            held.onLost(late::add);
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> late.size() == 1));
            Thread.sleep(200);
            assertEquals(List.of("key_deleted"), reasons);
            assertTrue(threads.get(0).startsWith("etcdlock-callback-"), threads.get(0));
            // The try-with-resources end reports that the block did not all run under the lock.
            assertThrows(LockLostException.class, held::close);
        }
    }

    // covers: LEASE-LOST-001 (a lock's lease revoked with etcdctl)
    @Test
    void leaseRevokedElsewhere() throws Exception {
        String name = Etcd.uniqueName("lostlease");
        try (EtcdLockClient client = Etcd.client()) {
            LockGuard held = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
            List<String> reasons = new CopyOnWriteArrayList<>();
            held.onLost(reasons::add);
            Etcd.etcdctl("lease", "revoke", Long.toHexString(held.leaseId()));
            assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> !reasons.isEmpty()), "onLost was not called");
            assertFalse(held.isHeld());
            assertThrows(NotHeldException.class, () -> held.putIfHeld(name + "-data", bytes("x")));
            assertTrue(client.get(name + "-data").isEmpty());
            assertEquals(List.of(), Etcd.keysUnder(name + "/"));
            // The client's next lock of that TTL works, on a new lease.
            try (LockGuard again = client.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
                assertTrue(again.leaseId() != held.leaseId());
            }
            Thread.sleep(100);
            assertEquals(1, reasons.size(), "onLost fired more than once: " + reasons);
        }
    }

    // covers: LOCK-LOST-002
    @Test
    void clientClosedWhileHeld() throws Exception {
        String name = Etcd.uniqueName("lostclose");
        EtcdLockClient client = Etcd.client();
        LockGuard held = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
        List<String> reasons = new CopyOnWriteArrayList<>();
        held.onLost(reasons::add);
        client.close();
        assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> !reasons.isEmpty()), "onLost was not called");
        assertEquals(List.of("closed"), reasons);
        assertFalse(held.isHeld());
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    @Test
    void noLostCallbackAfterRelease() throws Exception {
        String name = Etcd.uniqueName("nolost");
        EtcdLockClient client = Etcd.client();
        LockGuard held = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
        List<String> reasons = new CopyOnWriteArrayList<>();
        held.onLost(reasons::add);
        held.release();
        assertThrows(NotHeldException.class, () -> held.onLost(reasons::add));
        client.close(); // would fire "closed" if the callback were still armed
        Thread.sleep(300);
        assertEquals(List.of(), reasons);
    }
}
