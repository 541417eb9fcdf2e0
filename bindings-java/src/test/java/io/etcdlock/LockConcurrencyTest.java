package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Many threads on one lock: exclusion (checked in etcd) and FIFO order. */
class LockConcurrencyTest {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));

    // covers: LOCK-EXCL-001
    @Test
    void sixtyFourThreadsOnOneClientNeverHoldTogether() throws Exception {
        final int threads = 64;
        final int rounds = 3;
        String name = Etcd.uniqueName("excl");
        String counter = name + "-counter";
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        try (EtcdLockClient client = Etcd.client()) {
            client.put(counter, bytes("0"));
            DistributedLock lock = client.lock(name, TTL);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    go.await();
                    for (int r = 0; r < rounds; r++) {
                        try (LockGuard held = lock.acquire(Duration.ofSeconds(60))) {
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            // A read-increment-write that loses updates unless the holders exclude
                            // each other; the write is fenced, so a lost lock cannot write either.
                            int n = Integer.parseInt(Etcd.text(client.get(counter).orElseThrow()));
                            held.putIfHeld(counter, bytes(Integer.toString(n + 1)));
                            inside.decrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                try {
                    f.get(120, TimeUnit.SECONDS);
                } catch (Exception e) {
                    errors.add(e);
                }
            }
            pool.shutdownNow();
            assertTrue(errors.isEmpty(), "threads failed: " + errors);
            assertEquals(0, overlaps.get(), "two holders at once");
            assertEquals(Integer.toString(threads * rounds), Etcd.text(client.get(counter).orElseThrow()));
            assertEquals(List.of(), Etcd.keysUnder(name + "/"));
            client.delete(counter);
        }
    }

    // covers: LOCK-FIFO-001
    @Test
    void waitersAreServedInArrivalOrder() throws Exception {
        String name = Etcd.uniqueName("fifo");
        final int waiters = 5;
        try (EtcdLockClient a = Etcd.client(); EtcdLockClient b = Etcd.client()) {
            LockGuard first = a.lock(name, TTL).acquire(Duration.ofSeconds(5));
            List<Integer> served = java.util.Collections.synchronizedList(new ArrayList<>());
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                final int me = i;
                EtcdLockClient c = i % 2 == 0 ? a : b;
                all.add(c.lock(name, TTL).acquireAsync(Duration.ofSeconds(30)).thenAccept(g -> {
                    served.add(me);
                    g.close();
                }));
                // Queued (its key is in etcd) before the next one arrives.
                final int keys = i + 2;
                assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> Etcd.keysUnder(name + "/").size() == keys));
            }
            first.close();
            CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
            assertEquals(List.of(0, 1, 2, 3, 4), served);
            assertEquals(List.of(), Etcd.keysUnder(name + "/"));
        }
    }
}
