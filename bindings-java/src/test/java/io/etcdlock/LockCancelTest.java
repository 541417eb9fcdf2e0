package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Leaving the queue: thread interrupt, future cancel, future timeout, client close. */
class LockCancelTest {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));
    static EtcdLockClient holder;

    @BeforeAll
    static void connect() {
        holder = Etcd.client();
    }

    @AfterAll
    static void close() {
        holder.close();
    }

    /** Waits until {@code name} has {@code n} queue keys (the waiter has joined the queue). */
    static void awaitKeys(String name, int n) {
        assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> Etcd.keysUnder(name + "/").size() == n),
                "queue of " + name + ": " + Etcd.keysUnder(name + "/"));
    }

    // covers: LOCK-CANCEL-001 (Thread.interrupt)
    @Test
    void interruptWhileWaitingLeavesTheQueue() throws Exception {
        String name = Etcd.uniqueName("interrupt");
        try (EtcdLockClient client = Etcd.client(); LockGuard held = holder.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
            AtomicReference<Throwable> outcome = new AtomicReference<>();
            AtomicReference<Boolean> flagAfter = new AtomicReference<>();
            AtomicReference<List<String>> keysWhenThrown = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    client.lock(name, TTL).acquire(Duration.ofSeconds(30));
                    outcome.set(new AssertionError("acquired"));
                } catch (Throwable t) {
                    keysWhenThrown.set(Etcd.keysUnder(name + "/"));
                    flagAfter.set(Thread.currentThread().isInterrupted());
                    outcome.set(t);
                }
            });
            waiter.start();
            awaitKeys(name, 2);
            waiter.interrupt();
            waiter.join(10_000);
            assertFalse(waiter.isAlive(), "the interrupted waiter is still waiting");
            assertInstanceOf(InterruptedException.class, outcome.get());
            assertEquals(List.of(held.key()), keysWhenThrown.get(), "a key was left when InterruptedException was thrown");
            assertEquals(false, flagAfter.get(), "InterruptedException consumes the interrupt status");
        }
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    // covers: LOCK-CANCEL-001 (Lock.lockInterruptibly)
    @Test
    void lockInterruptiblyLeavesTheQueue() throws Exception {
        String name = Etcd.uniqueName("lockint");
        try (EtcdLockClient client = Etcd.client(); LockGuard held = holder.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
            AtomicReference<Throwable> outcome = new AtomicReference<>();
            DistributedLock lock = client.lock(name, TTL);
            Thread waiter = new Thread(() -> {
                try {
                    lock.lockInterruptibly();
                    outcome.set(new AssertionError("acquired"));
                } catch (Throwable t) {
                    outcome.set(t);
                }
            });
            waiter.start();
            awaitKeys(name, 2);
            waiter.interrupt();
            waiter.join(10_000);
            assertInstanceOf(InterruptedException.class, outcome.get());
            assertEquals(List.of(held.key()), Etcd.keysUnder(name + "/"));
        }
    }

    // covers: LOCK-CANCEL-001 (CompletableFuture.cancel)
    @Test
    void cancellingTheFutureLeavesTheQueue() throws Exception {
        String name = Etcd.uniqueName("future");
        try (EtcdLockClient client = Etcd.client()) {
            LockGuard held = holder.lock(name, TTL).acquire(Duration.ofSeconds(5));
            CompletableFuture<LockGuard> later = client.lock(name, TTL).acquireAsync(Duration.ofSeconds(30));
            awaitKeys(name, 2);
            assertTrue(later.cancel(true));
            assertThrows(CancellationException.class, later::join);
            awaitKeys(name, 1);
            assertEquals(List.of(held.key()), Etcd.keysUnder(name + "/"));
            held.close();
            // Nobody is left to take it: a try-once from elsewhere finds it free.
            try (LockGuard free = holder.lock(name, TTL).tryAcquire().orElseThrow()) {
                assertEquals(List.of(free.key()), Etcd.keysUnder(name + "/"));
            }
        }
    }

    // covers: LOCK-CANCEL-001 (CompletableFuture.orTimeout)
    @Test
    void futureTimedOutFromOutsideLeavesTheQueue() throws Exception {
        String name = Etcd.uniqueName("ortimeout");
        try (EtcdLockClient client = Etcd.client(); LockGuard held = holder.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
            CompletableFuture<LockGuard> later = client.lock(name, TTL).acquireAsync(Duration.ofSeconds(30))
                    .orTimeout(300, TimeUnit.MILLISECONDS);
            ExecutionException e = assertThrows(ExecutionException.class, () -> later.get(10, TimeUnit.SECONDS));
            assertInstanceOf(java.util.concurrent.TimeoutException.class, e.getCause());
            awaitKeys(name, 1);
            assertEquals(List.of(held.key()), Etcd.keysUnder(name + "/"));
        }
    }

    // covers: CONN-CLOSE-WAITER-001
    @Test
    void closingTheClientFailsItsWaiters() throws Exception {
        String name = Etcd.uniqueName("closewaiter");
        EtcdLockClient client = Etcd.client();
        try (LockGuard held = holder.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
            CompletableFuture<LockGuard> later = client.lock(name, TTL).acquireAsync(Duration.ofSeconds(30));
            awaitKeys(name, 2);
            client.close();
            ExecutionException e = assertThrows(ExecutionException.class, () -> later.get(10, TimeUnit.SECONDS));
            assertInstanceOf(ClosedException.class, e.getCause());
            assertEquals(List.of(held.key()), Etcd.keysUnder(name + "/"));
        }
    }

    // covers: LOCK-CANCEL-001 (interrupted before the call)
    @Test
    void anInterruptedThreadJoinsNoQueue() throws Exception {
        String name = Etcd.uniqueName("preinterrupt");
        try (EtcdLockClient client = Etcd.client()) {
            DistributedLock lock = client.lock(name, TTL);
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class, () -> lock.acquire(Duration.ofSeconds(5)));
            assertFalse(Thread.currentThread().isInterrupted());
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class, lock::lockInterruptibly);
            assertEquals(0.0, RuntimeTest.prometheus(client.metricsText(), client.name()).get("etcdlock_lock_acquisitions_total"));
            // A cancelled acquire would count as a failure: none was started.
            assertEquals(0.0, RuntimeTest.prometheus(client.metricsText(), client.name()).get("etcdlock_lock_acquire_failures_total"),
                    "an acquire was started");
            assertEquals(List.of(), Etcd.keysUnder(name + "/"));
        }
    }
}
