package io.etcdlock;

import static io.etcdlock.LockSetTest.TTL;
import static io.etcdlock.LockSetTest.WAIT;
import static io.etcdlock.LockSetTest.queues;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lock sets: a timeout, a try, a cancelled future and an interrupted wait leaving no key in any
 * queue; the largest set; a release twice; bad input refused before anything is sent; a closed
 * client.
 */
@Timeout(60)
class LockSetInputTest {
    // covers: LOCKSET-BINDING-001 (timed out, tried, cancelled: a future's cancel, an interrupt;
    // the async acquire; 64 names; a release twice)
    @Test
    void timeoutTryAndCancelLeaveNoKey() throws Exception {
        String a = Etcd.uniqueName("lsin-a"), b = Etcd.uniqueName("lsin-b");
        try (EtcdLockClient client = Etcd.client()) {
            LockGuard holder = client.lock(b, TTL).acquire(WAIT);
            LockSet set = client.lockSet(SetMember.names(a, b), TTL);
            long started = System.nanoTime();
            assertThrows(LockTimeoutException.class, () -> set.acquire(Duration.ofMillis(500)));
            long ms = (System.nanoTime() - started) / 1_000_000;
            assertTrue(ms >= 400 && ms < 3000, ms + " ms");
            assertEquals(List.of(), queues(a));
            assertEquals(1, queues(b).size());
            assertTrue(set.tryAcquire().isEmpty()); // never held in part, nothing kept
            EtcdLockException busy = assertThrows(EtcdLockException.class, () -> set.acquire(Duration.ZERO));
            assertEquals("WOULD_BLOCK", busy.kind());
            assertEquals(List.of(), queues(a));
            // A waiting future cancelled: the wait ends, no key is left.
            CompletableFuture<LockSetHolding> waiting = set.acquireAsync(Duration.ofSeconds(20));
            assertTrue(Etcd.eventually(WAIT, () -> queues(a).size() == 1));
            assertTrue(waiting.cancel(true));
            assertTrue(Etcd.eventually(WAIT, () -> queues(a).isEmpty()), "the cancel left a key");
            // A thread interrupted while waiting: InterruptedException, no key left.
            AtomicReference<Throwable> outcome = new AtomicReference<>();
            CountDownLatch over = new CountDownLatch(1);
            Thread t = new Thread(() -> {
                try {
                    set.acquire(Duration.ofSeconds(20)).close();
                } catch (Throwable e) {
                    outcome.set(e);
                }
                over.countDown();
            });
            t.start();
            assertTrue(Etcd.eventually(WAIT, () -> queues(a).size() == 1));
            t.interrupt();
            assertTrue(over.await(5, TimeUnit.SECONDS));
            assertTrue(outcome.get() instanceof InterruptedException, String.valueOf(outcome.get()));
            assertEquals(List.of(), queues(a));
            assertEquals(1, queues(b).size());
            // Free again: the async acquire holds both, with a larger token than the lone holder's.
            CompletableFuture<LockSetHolding> later = set.acquireAsync(WAIT);
            Thread.sleep(200);
            assertFalse(later.isDone());
            long lone = holder.fencingToken();
            holder.close();
            LockSetHolding both = later.get(5, TimeUnit.SECONDS);
            assertTrue(both.fencingToken() > lone);
            both.release();
            assertThrows(NotHeldException.class, both::release); // twice
            assertThrows(NotHeldException.class, () -> both.onLost(r -> { }));
            both.close(); // released: nothing to report
            assertEquals(List.of(), queues(a, b));
            // The largest set: 64 names.
            List<String> names = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                names.add(Etcd.uniqueName("lsin-m" + i));
            }
            try (LockSetHolding big = client.lockSet(SetMember.names(names.toArray(new String[0])), TTL).acquire(WAIT)) {
                assertEquals(names, big.names());
                assertEquals(1, queues(names.get(63)).size());
            }
            assertEquals(List.of(), queues(names.get(0), names.get(63)));
        }
    }

    // covers: LOCKSET-BINDING-001 (no names, a name twice, a name under another, 65 names, an
    // empty name, bad TTL, permits and value, nulls: refused before anything is sent; a closed
    // client)
    @Test
    void badInputIsRefusedBeforeAnythingIsSent() throws Exception {
        String a = Etcd.uniqueName("lsin-bad");
        EtcdLockClient client = Etcd.client();
        List<List<SetMember>> bad = new ArrayList<>(List.of(List.of(), SetMember.names(a, a), List.of(SetMember.exclusive(a), SetMember.read(a)),
                SetMember.names(a, a + "/b"), SetMember.names(a + "/b/c", a + "/b"), SetMember.names(""), SetMember.names(a + "/"),
                SetMember.names("x\0y")));
        String[] many = new String[65];
        Arrays.setAll(many, i -> a + "-" + i);
        bad.add(SetMember.names(many));
        for (List<SetMember> members : bad) {
            assertThrows(IllegalArgumentException.class, () -> client.lockSet(members, TTL), members.toString());
        }
        for (int permits : new int[] {0, -1, 1025}) {
            assertThrows(IllegalArgumentException.class, () -> SetMember.permit(a, permits));
        }
        assertThrows(IllegalArgumentException.class, () -> client.lockSet(SetMember.names(a), LockOptions.ttl(Duration.ofSeconds(10_000_000_000L))));
        assertThrows(IllegalArgumentException.class, () -> LockOptions.ttl(Duration.ZERO));
        assertThrows(NullPointerException.class, () -> client.lockSet(null, TTL));
        assertThrows(NullPointerException.class, () -> client.lockSet(SetMember.names(a), null));
        assertThrows(NullPointerException.class, () -> client.lockSet(Arrays.asList(SetMember.exclusive(a), null), TTL));
        assertThrows(NullPointerException.class, () -> SetMember.names(a, null));
        LockSet set = client.lockSet(SetMember.names(a), TTL);
        LockSet valued = client.lockSet(SetMember.names(a), TTL.value(new byte[4097]));
        assertThrows(IllegalArgumentException.class, () -> valued.acquire(WAIT)); // a value over 4096 bytes
        assertThrows(IllegalArgumentException.class, () -> set.acquire(Duration.ofMillis(-1)));
        assertThrows(NullPointerException.class, () -> set.acquire(null));
        try (LockSetHolding held = set.acquire(WAIT)) {
            assertThrows(IllegalArgumentException.class, () -> held.putIfHeld("", new byte[0]));
            assertThrows(IllegalArgumentException.class, () -> held.writeIfHeld(java.util.Map.of(), List.of()));
            assertThrows(IllegalArgumentException.class, () -> held.fence(a + "-none"));
            assertThrows(NullPointerException.class, () -> held.fence(null));
            assertThrows(NullPointerException.class, () -> held.putIfHeld("k", null));
            assertNotNull(held.fence(a));
        }
        assertEquals(List.of(), queues(a));
        // A closed client: a new set and an acquire of an existing one are Closed.
        client.close();
        assertThrows(ClosedException.class, () -> client.lockSet(SetMember.names(a), TTL));
        assertThrows(ClosedException.class, () -> set.acquire(WAIT));
        assertThrows(ClosedException.class, set::tryAcquire);
    }
}
