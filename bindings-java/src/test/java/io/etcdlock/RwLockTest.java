package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The fair read-write lock: readers together, a writer alone, in arrival order. */
@Timeout(60)
class RwLockTest extends TwoClients {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));
    static final Duration WAIT = Duration.ofSeconds(10);
    // covers: RW-READERS-001
    @Test
    void readersHoldTogetherAndTheWriterWaitsForTheLast() throws Exception {
        String name = Etcd.uniqueName("rw-readers");
        DistributedReadWriteLock a = client.rwlock(name, TTL);
        DistributedReadWriteLock b = other.rwlock(name, TTL);
        LockGuard r1 = a.readLock().acquire(WAIT);
        LockGuard r2 = b.readLock().acquire(WAIT);
        LockGuard r3 = a.readLock().tryAcquire().orElseThrow(() -> new AssertionError("a third reader was refused"));
        assertEquals(3, Etcd.keysUnder(name + "/").size());
        assertTrue(b.writeLock().tryAcquire().isEmpty(), "a writer got in with readers");
        assertThrows(LockTimeoutException.class, () -> b.writeLock().acquire(Duration.ofMillis(300)));
        assertEquals(3, Etcd.keysUnder(name + "/").size(), "the refused writes left a key");
        CompletableFuture<LockGuard> writer = b.writeLock().acquireAsync(WAIT);
        assertTrue(Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/").size() == 4));
        long newest = Math.max(r1.fencingToken(), Math.max(r2.fencingToken(), r3.fencingToken()));
        for (LockGuard r : List.of(r1, r2, r3)) {
            Thread.sleep(100);
            assertFalse(writer.isDone(), "the writer held with a reader");
            r.close();
        }
        try (LockGuard w = writer.get(10, TimeUnit.SECONDS)) {
            assertTrue(w.fencingToken() > newest);
            assertTrue(a.readLock().tryAcquire().isEmpty(), "a reader got in with the writer");
            assertEquals(List.of(w.key()), Etcd.keysUnder(name + "/"));
        }
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    // covers: RW-WRITER-FAIR-001
    @Test
    void aReaderWaitsBehindAWaitingWriter() throws Exception {
        String name = Etcd.uniqueName("rw-fair");
        DistributedReadWriteLock rw = client.rwlock(name, TTL);
        LockGuard first = rw.readLock().acquire(WAIT);
        CompletableFuture<LockGuard> writer = other.rwlock(name, TTL).writeLock().acquireAsync(WAIT);
        assertTrue(Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/").size() == 2));
        assertTrue(rw.readLock().tryAcquire().isEmpty(), "a reader overtook the waiting writer");
        CompletableFuture<LockGuard> second = rw.readLock().acquireAsync(WAIT);
        assertTrue(Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/").size() == 3));
        Thread.sleep(200);
        assertFalse(writer.isDone() || second.isDone());
        first.close();
        LockGuard w = writer.get(10, TimeUnit.SECONDS);
        Thread.sleep(200);
        assertFalse(second.isDone(), "the second reader held with the writer");
        w.close();
        try (LockGuard r = second.get(10, TimeUnit.SECONDS)) {
            assertTrue(first.fencingToken() < w.fencingToken() && w.fencingToken() < r.fencingToken());
        }
    }

    // covers: RW-MUTEX-001
    @Test
    void aPlainLockOnTheNameIsAWriter() throws Exception {
        String name = Etcd.uniqueName("rw-mutex");
        DistributedReadWriteLock rw = other.rwlock(name, TTL);
        try (LockGuard mutex = client.lock(name, TTL).acquire(WAIT)) {
            EtcdLockException busy = assertThrows(EtcdLockException.class, () -> rw.readLock().acquire(Duration.ZERO));
            assertEquals("WOULD_BLOCK", busy.kind());
            long t0 = System.nanoTime();
            assertThrows(LockTimeoutException.class, () -> rw.readLock().acquire(Duration.ofMillis(300)));
            assertTrue(System.nanoTime() - t0 >= 290_000_000L);
            assertEquals(List.of(mutex.key()), Etcd.keysUnder(name + "/"));
        }
        LockGuard r1 = rw.readLock().acquire(Duration.ZERO);
        LockGuard r2 = rw.readLock().acquire(Duration.ZERO);
        EtcdLockException busy = assertThrows(EtcdLockException.class, () -> client.lock(name, TTL).acquire(Duration.ZERO));
        assertEquals("WOULD_BLOCK", busy.kind());
        assertEquals(List.of(r1.key(), r2.key()).stream().sorted().toList(), Etcd.keysUnder(name + "/").stream().sorted().toList());
        r1.close();
        r2.close();
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    @Test
    void theReadWriteLockInterface() throws Exception {
        String name = Etcd.uniqueName("rw-iface");
        ReadWriteLock rw = client.rwlock(name, TTL);
        Lock read = rw.readLock();
        read.lock();
        try {
            assertThrows(IllegalStateException.class, read::lock, "not reentrant");
            assertFalse(other.rwlock(name, TTL).writeLock().tryLock());
            Lock otherRead = other.rwlock(name, TTL).readLock();
            assertTrue(otherRead.tryLock(1, TimeUnit.SECONDS));
            assertEquals(2, Etcd.keysUnder(name + "/").size());
            otherRead.unlock();
        } finally {
            read.unlock();
        }
        assertTrue(rw.writeLock().tryLock());
        assertEquals(1, Etcd.keysUnder(name + "/").size());
        rw.writeLock().unlock();
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
        assertTrue(rw.toString().contains(name));
    }
}
