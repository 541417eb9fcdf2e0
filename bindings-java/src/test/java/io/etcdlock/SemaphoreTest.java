package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The fair semaphore: the limit, try-once, timeouts, the permit count's checks. */
@Timeout(60)
class SemaphoreTest {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));
    static final Duration WAIT = Duration.ofSeconds(10);
    static EtcdLockClient client;

    @BeforeAll
    static void connect() {
        client = Etcd.client();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    // covers: SEM-LIMIT-001
    @Test
    void neverMoreThanNHolders() throws Exception {
        String name = Etcd.uniqueName("sem-limit");
        String marks = name + "-marks/";
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger mostMarks = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> workers = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                String mine = marks + i;
                workers.add(pool.submit(() -> {
                    try (EtcdLockClient c = Etcd.client()) {
                        DistributedSemaphore slots = c.semaphore(name, 3, TTL);
                        for (int round = 0; round < 4; round++) {
                            try (LockGuard permit = slots.acquire(Duration.ofSeconds(20))) {
                                most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                                permit.putIfHeld(mine, bytes("held"));
                                // One read of the whole prefix (one revision): marks read one
                                // by one could count a holder that left and the one after it.
                                mostMarks.accumulateAndGet(Etcd.keysUnder(marks).size(), Math::max);
                                Thread.sleep(30);
                                c.delete(mine);
                                inside.decrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> w : workers) {
                w.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(3, most.get(), "holders at once");
        assertTrue(mostMarks.get() >= 1 && mostMarks.get() <= 3, "marks at once: " + mostMarks.get());
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    // covers: SEM-FIFO-001
    @Test
    void waitersGetPermitsInArrivalOrder() throws Exception {
        String name = Etcd.uniqueName("sem-fifo");
        List<EtcdLockClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 7; i++) {
                clients.add(Etcd.client());
            }
            List<LockGuard> holders = new ArrayList<>();
            holders.add(clients.get(0).semaphore(name, 2, TTL).acquire(WAIT));
            holders.add(clients.get(1).semaphore(name, 2, TTL).acquire(WAIT));
            // 5 waiters, each queued (its key in etcd) before the next comes.
            List<CompletableFuture<LockGuard>> waiters = new ArrayList<>();
            for (int i = 2; i < 7; i++) {
                waiters.add(clients.get(i).semaphore(name, 2, TTL).acquireAsync(Duration.ofSeconds(30)));
                int queued = i + 1;
                assertTrue(Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/").size() == queued), "waiter " + i + " never queued");
            }
            Thread.sleep(100);
            assertTrue(waiters.stream().noneMatch(CompletableFuture::isDone), "a waiter got a permit of a full semaphore");
            // Release the older holder, one at a time: each release lets exactly the next waiter in.
            long last = Math.max(holders.get(0).fencingToken(), holders.get(1).fencingToken());
            for (int n = 0; n < waiters.size(); n++) {
                holders.remove(0).close();
                LockGuard next = waiters.get(n).get(10, TimeUnit.SECONDS);
                Thread.sleep(50);
                for (int later = n + 1; later < waiters.size(); later++) {
                    assertFalse(waiters.get(later).isDone(), "waiter " + (later + 2) + " overtook waiter " + (n + 2));
                }
                assertTrue(next.fencingToken() > last, "tokens not increasing: " + next.fencingToken() + " after " + last);
                last = next.fencingToken();
                holders.add(next);
            }
            for (LockGuard h : holders) {
                h.close();
            }
            assertEquals(List.of(), Etcd.keysUnder(name + "/"));
        } finally {
            for (EtcdLockClient c : clients) {
                c.close();
            }
        }
    }

    // covers: SEM-PERMITS-001
    @Test
    void permitCountsAreChecked() throws Exception {
        String name = Etcd.uniqueName("sem-permits");
        assertThrows(IllegalArgumentException.class, () -> client.semaphore(name, 0, TTL));
        assertThrows(IllegalArgumentException.class, () -> client.semaphore(name, 1025, TTL));
        assertThrows(IllegalArgumentException.class, () -> client.semaphore(name, -1, TTL));
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
        try (LockGuard held = client.semaphore(name, 3, TTL).acquire(WAIT)) {
            DistributedSemaphore two = client.semaphore(name, 2, TTL);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> two.acquire(WAIT));
            assertTrue(e.getMessage().contains("3"), e.getMessage());
            assertEquals(List.of(held.key()), Etcd.keysUnder(name + "/"));
        }
        String locked = Etcd.uniqueName("sem-on-lock");
        try (LockGuard held = client.lock(locked, TTL).acquire(WAIT)) {
            assertThrows(IllegalArgumentException.class, () -> client.semaphore(locked, 2, TTL).acquire(WAIT));
            assertEquals(List.of(held.key()), Etcd.keysUnder(locked + "/"));
        }
        // Nobody participates any more: another count works.
        try (LockGuard a = client.semaphore(name, 2, TTL).acquire(WAIT); LockGuard b = client.semaphore(name, 2, TTL).acquire(WAIT)) {
            assertTrue(client.semaphore(name, 2, TTL).tryAcquire().isEmpty());
            assertEquals(2, Etcd.keysUnder(name + "/").size(), a + " " + b);
        }
    }

    // covers: SEM-TRY-001
    @Test
    void tryAcquireOnAFullSemaphore() throws Exception {
        String name = Etcd.uniqueName("sem-try");
        DistributedSemaphore slots = client.semaphore(name, 2, TTL);
        LockGuard a = slots.acquire(WAIT);
        try (LockGuard b = slots.tryAcquire().orElseThrow()) {
            assertTrue(slots.tryAcquire().isEmpty());
            assertEquals(2, Etcd.keysUnder(name + "/").size());
            a.close();
            try (LockGuard c = slots.tryAcquire().orElseThrow()) {
                assertTrue(c.fencingToken() > b.fencingToken());
            }
        }
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    // covers: SEM-TIMEOUT-001
    @Test
    void aTimeoutOnAFullSemaphoreLeavesNothing() throws Exception {
        String name = Etcd.uniqueName("sem-timeout");
        DistributedSemaphore slots = client.semaphore(name, 2, TTL);
        try (LockGuard held = slots.acquire(WAIT); LockGuard second = slots.acquire(WAIT)) {
            List<String> keys = List.of(held.key(), second.key());
            long t0 = System.nanoTime();
            assertThrows(LockTimeoutException.class, () -> slots.acquire(Duration.ofMillis(300)));
            assertTrue(System.nanoTime() - t0 >= 290_000_000L);
            assertEquals(keys, Etcd.keysUnder(name + "/"));
            java.util.concurrent.CompletionException late = assertThrows(java.util.concurrent.CompletionException.class,
                    () -> slots.acquireAsync(Duration.ofMillis(300)).join());
            assertTrue(late.getCause() instanceof LockTimeoutException, String.valueOf(late.getCause()));
            assertEquals(keys, Etcd.keysUnder(name + "/"));
        }
    }

    // covers: SEM-COUNT-001
    @Test
    void aRequestForTwoPermitsWaitsForTwoAndGoesBeforeLaterSingleOnes() throws Exception {
        String name = Etcd.uniqueName("sem-count");
        DistributedSemaphore single = client.semaphore(name, 3, TTL);
        DistributedSemaphore doubled = single.withCount(2);
        assertEquals(2, doubled.count());
        assertEquals(1, single.count());
        assertEquals(3, doubled.permits());
        LockGuard a = single.acquire(WAIT), b = single.acquire(WAIT);
        // One permit is free: the request for two waits at the head ...
        CompletableFuture<LockGuard> waiting = doubled.acquireAsync(WAIT);
        assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> Etcd.keysUnder(name + "/").size() == 3));
        // ... and a later request for one waits behind it, though one permit is free.
        assertThrows(LockTimeoutException.class, () -> single.acquire(Duration.ofMillis(600)), "a single request passed the waiting double one");
        assertFalse(waiting.isDone());
        a.close();
        try (LockGuard two = waiting.get(5, TimeUnit.SECONDS)) {
            assertTrue(two.fencingToken() > b.fencingToken());
            // Two of three held by it and one by b: nothing is free.
            assertEquals(java.util.Optional.empty(), single.tryAcquire());
            LockState state = client.inspect(name);
            assertEquals(2, state.holders().size());
            assertEquals("permits=3,count=2", state.holders().get(1).mode());
        }
        try (LockGuard c = single.acquire(WAIT)) {
            assertTrue(c.isHeld());
        }
        b.close();
        // None, or more than N, is refused before anything is sent.
        for (int count : new int[] {0, 4, -1}) {
            assertThrows(IllegalArgumentException.class, () -> single.withCount(count), "count " + count);
        }
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    // covers: SEM-COUNT-002
    @Test
    void mixedCountsNeverTakeMoreThanNPermits() throws Exception {
        String name = Etcd.uniqueName("sem-count-mix");
        AtomicInteger used = new AtomicInteger(), most = new AtomicInteger();
        ExecutorService workers = Executors.newFixedThreadPool(6);
        List<EtcdLockClient> clients = new ArrayList<>();
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                EtcdLockClient c = Etcd.client();
                clients.add(c);
                int count = 1 + i % 3;
                done.add(workers.submit(() -> {
                    DistributedSemaphore sem = c.semaphore(name, 4, TTL).withCount(count);
                    for (int round = 0; round < 3; round++) {
                        try (LockGuard g = sem.acquire(Duration.ofSeconds(30))) {
                            assertTrue(g.fencingToken() > 0);
                            most.accumulateAndGet(used.addAndGet(count), Math::max);
                            Thread.sleep(10);
                            used.addAndGet(-count);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(50, TimeUnit.SECONDS);
            }
        } finally {
            workers.shutdownNow();
            clients.forEach(EtcdLockClient::close);
        }
        assertTrue(most.get() <= 4, most.get() + " permits taken at once");
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }
}
