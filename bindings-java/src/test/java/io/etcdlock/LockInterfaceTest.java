package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;

/** DistributedLock as a java.util.concurrent.locks.Lock, and where it differs from ReentrantLock. */
class LockInterfaceTest extends TwoClients {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));
    @Test
    void lockAndUnlock() {
        String name = Etcd.uniqueName("iface");
        Lock lock = client.lock(name, TTL);
        lock.lock();
        try {
            assertEquals(1, Etcd.keysUnder(name + "/").size());
            assertTrue(((DistributedLock) lock).heldByCurrentThread().orElseThrow().isHeld());
        } finally {
            lock.unlock();
        }
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
        assertThrows(IllegalMonitorStateException.class, lock::unlock);
    }

    // covers: LOCK-TRY-001 (Lock.tryLock), LOCK-TIMEOUT-001 (Lock.tryLock with a time)
    @Test
    void tryLockWhileHeldElsewhere() throws Exception {
        String name = Etcd.uniqueName("ifacetry");
        DistributedLock lock = client.lock(name, TTL);
        try (LockGuard held = other.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
            assertFalse(lock.tryLock());
            long t0 = System.nanoTime();
            assertFalse(lock.tryLock(300, TimeUnit.MILLISECONDS));
            assertTrue(System.nanoTime() - t0 >= 290_000_000L);
            assertEquals(List.of(held.key()), Etcd.keysUnder(name + "/"));
        }
        assertTrue(lock.tryLock(1, TimeUnit.SECONDS));
        lock.unlock();
    }

    @Test
    void notReentrant() throws Exception {
        DistributedLock lock = client.lock(Etcd.uniqueName("reentrant"), TTL);
        lock.lock();
        try {
            assertThrows(IllegalStateException.class, lock::lock);
            assertThrows(IllegalStateException.class, lock::tryLock);
        } finally {
            lock.unlock();
        }
    }

    @Test
    void unlockFromAnotherThreadIsRefused() throws Exception {
        DistributedLock lock = client.lock(Etcd.uniqueName("owner"), TTL);
        lock.lock();
        try {
            AtomicReference<Throwable> t = new AtomicReference<>();
            Thread stranger = new Thread(() -> {
                try {
                    lock.unlock();
                } catch (Throwable e) {
                    t.set(e);
                }
            });
            stranger.start();
            stranger.join(5000);
            assertTrue(t.get() instanceof IllegalMonitorStateException, String.valueOf(t.get()));
        } finally {
            lock.unlock();
        }
    }

    @Test
    void lockIgnoresInterruptsAndKeepsTheStatus() throws Exception {
        String name = Etcd.uniqueName("uninterruptible");
        DistributedLock lock = client.lock(name, TTL);
        LockGuard held = other.lock(name, TTL).acquire(Duration.ofSeconds(5));
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        AtomicBoolean got = new AtomicBoolean();
        Thread waiter = new Thread(() -> {
            lock.lock();
            got.set(true);
            interruptedAfter.set(Thread.currentThread().isInterrupted());
            lock.unlock();
        });
        waiter.start();
        assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> Etcd.keysUnder(name + "/").size() == 2));
        waiter.interrupt();
        Thread.sleep(200);
        assertFalse(got.get(), "lock() gave up on interrupt");
        held.close();
        waiter.join(10_000);
        assertTrue(got.get());
        assertTrue(interruptedAfter.get(), "the interrupt status was not restored");
    }

    @Test
    void unlockOfALostLockReportsIt() throws Exception {
        String name = Etcd.uniqueName("ifacelost");
        DistributedLock lock = client.lock(name, TTL);
        lock.lock();
        Etcd.etcdctl("del", lock.heldByCurrentThread().orElseThrow().key());
        assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> !lock.heldByCurrentThread().orElseThrow().isHeld()));
        assertThrows(NotHeldException.class, lock::unlock);
        assertTrue(lock.heldByCurrentThread().isEmpty());
    }

    @Test
    void noConditions() {
        assertThrows(UnsupportedOperationException.class, () -> client.lock(Etcd.uniqueName("cond"), TTL).newCondition());
    }
}
