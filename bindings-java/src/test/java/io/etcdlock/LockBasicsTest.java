package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The mutex's single-client basics: acquire, tokens, try-once, timeout, release, guarded writes. */
class LockBasicsTest extends TwoClients {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));
    // covers: LOCK-BASIC-001
    @Test
    void acquireAndReleaseLeaveNoKey() throws Exception {
        String name = Etcd.uniqueName("basic");
        DistributedLock lock = client.lock(name, TTL);
        try (LockGuard held = lock.acquire(Duration.ofSeconds(5))) {
            assertTrue(held.isHeld());
            String leaseHex = Long.toHexString(held.leaseId());
            assertTrue(held.key().startsWith(name + "/" + leaseHex), held.key());
            assertEquals(List.of(held.key()), Etcd.keysUnder(name + "/"));
        }
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    // covers: LOCK-TOKEN-001
    @Test
    void fencingTokensIncrease() throws Exception {
        DistributedLock lock = client.lock(Etcd.uniqueName("token"), TTL);
        DistributedLock otherLock = other.lock(lock.name(), TTL);
        long last = 0;
        for (int i = 0; i < 6; i++) {
            try (LockGuard held = (i % 2 == 0 ? lock : otherLock).acquire(Duration.ofSeconds(5))) {
                assertTrue(held.fencingToken() > last, held.fencingToken() + " after " + last);
                last = held.fencingToken();
            }
        }
    }

    // covers: LOCK-TRY-001
    @Test
    void tryAcquireWhileHeldFailsAtOnceAndLeavesNoKey() throws Exception {
        String name = Etcd.uniqueName("try");
        try (LockGuard held = other.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
            long t0 = System.nanoTime();
            Optional<LockGuard> busy = client.lock(name, TTL).tryAcquire();
            assertTrue(busy.isEmpty());
            assertTrue(System.nanoTime() - t0 < 2_000_000_000L, "try-once waited");
            EtcdLockException e = assertThrows(EtcdLockException.class, () -> client.lock(name, TTL).acquire(Duration.ZERO));
            assertEquals("WOULD_BLOCK", e.kind());
            assertEquals(List.of(held.key()), Etcd.keysUnder(name + "/"));
        }
        Optional<LockGuard> free = client.lock(name, TTL).tryAcquire();
        assertTrue(free.isPresent());
        free.get().close();
    }

    // covers: LOCK-TIMEOUT-001
    @Test
    void acquireTimesOutLeavingNoKeyNorLease() throws Exception {
        String name = Etcd.uniqueName("timeout");
        try (EtcdLockClient waiter = Etcd.client(); LockGuard held = other.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
            List<Long> leasesBefore = Etcd.leases();
            long t0 = System.nanoTime();
            LockTimeoutException e = assertThrows(LockTimeoutException.class,
                    () -> waiter.lock(name, TTL).acquire(Duration.ofMillis(400)));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals("LOCK_TIMEOUT", e.kind());
            assertTrue(ms >= 390 && ms < 3000, "timed out after " + ms + " ms");
            assertEquals(List.of(held.key()), Etcd.keysUnder(name + "/"));
            assertEquals(leasesBefore, Etcd.leases(), "the waiter's lease was not revoked");
        }
    }

    // covers: LOCK-RELEASE-001
    @Test
    void releaseTwiceIsNotHeld() throws Exception {
        LockGuard held = client.lock(Etcd.uniqueName("release"), TTL).acquire(Duration.ofSeconds(5));
        held.release();
        assertFalse(held.isHeld());
        NotHeldException e = assertThrows(NotHeldException.class, held::release);
        assertEquals("NOT_HELD", e.kind());
        held.close(); // released already: close is quiet
        held.close();
        assertThrows(NotHeldException.class, held::release);
    }

    // covers: LOCK-GUARD-001
    @Test
    void guardedWriteWhileHeld() throws Exception {
        String name = Etcd.uniqueName("guarded");
        String data = name + "-data";
        try (LockGuard held = client.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
            long rev = held.putIfHeld(data, bytes("v1"));
            assertTrue(rev > 0);
        }
        assertEquals("v1", Etcd.text(client.get(data).orElseThrow()));
        client.delete(data);
    }

    // covers: LOCK-FENCED-001
    @Test
    void staleHolderWriteIsRefusedAndItsReleaseSparesTheNewHolder() throws Exception {
        String name = Etcd.uniqueName("fenced");
        String data = name + "-data";
        LockGuard stale = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
        Etcd.etcdctl("del", stale.key());
        try (LockGuard fresh = other.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
            assertThrows(NotHeldException.class, () -> stale.putIfHeld(data, bytes("stale")));
            assertTrue(client.get(data).isEmpty(), "the stale write happened");
            assertThrows(NotHeldException.class, stale::release);
            assertEquals(List.of(fresh.key()), Etcd.keysUnder(name + "/"));
            stale.close(); // the failed release above was the release: close is quiet
            assertEquals(List.of(fresh.key()), Etcd.keysUnder(name + "/"));
            fresh.putIfHeld(data, bytes("fresh"));
        }
        assertEquals("fresh", Etcd.text(client.get(data).orElseThrow()));
        client.delete(data);
    }

    // covers: LOCK-PREFIX-001
    @Test
    void guardedWriteUnderTheLocksOwnPrefixIsRefused() throws Exception {
        String name = Etcd.uniqueName("prefix");
        try (LockGuard held = client.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
            assertThrows(IllegalArgumentException.class, () -> held.putIfHeld(name + "/mine", bytes("x")));
            assertEquals(List.of(held.key()), Etcd.keysUnder(name + "/"));
        }
        try (LockGuard again = client.lock(name, TTL).acquire(Duration.ofMillis(500))) {
            assertTrue(again.isHeld());
        }
    }
}
