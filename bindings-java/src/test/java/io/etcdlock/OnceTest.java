package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Once-per-period jobs ({@code client.once}): one winner per period, failed and lost winners, bad options. */
class OnceTest {
    static final Duration HOUR = Duration.ofHours(1);

    // covers: ONCE-SLOT-001
    @Test
    void threeTriggersOfOnePeriodRunTheJobOnceAndTheNextPeriodAgain() throws Exception {
        String name = Etcd.uniqueName("once-slot");
        Instant t = Instant.ofEpochSecond(3600L * 500_000);
        List<EtcdLockClient> clients = List.of(Etcd.client(), Etcd.client(), Etcd.client());
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            CyclicBarrier barrier = new CyclicBarrier(3);
            // Clocks up to 29 minutes apart pick the same slot, the nearest boundary.
            long[] offsets = {-29 * 60, 0, 29 * 60};
            List<Future<Optional<OnceSlot>>> triggers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                EtcdLockClient c = clients.get(i);
                Instant at = t.plusSeconds(offsets[i]);
                triggers.add(pool.submit(() -> {
                    barrier.await(10, TimeUnit.SECONDS);
                    return c.once(name, OnceOptions.every(HOUR).at(at));
                }));
            }
            List<OnceSlot> won = new ArrayList<>();
            for (Future<Optional<OnceSlot>> f : triggers) {
                f.get(20, TimeUnit.SECONDS).ifPresent(won::add);
            }
            assertEquals(1, won.size(), "one winner");
            try (OnceSlot slot = won.get(0)) { // marks the period done
                assertEquals(500_000, slot.slot());
                assertTrue(slot.fencingToken() > 0 && slot.isHeld());
                assertEquals(Optional.empty(), slot.lostReason());
            }
            assertFalse(won.get(0).isHeld());
            assertEquals(Optional.empty(), clients.get(0).once(name, OnceOptions.every(HOUR).at(t.plusSeconds(60))), "ran twice in a period");
            OnceSlot next = clients.get(1).once(name, OnceOptions.every(HOUR).at(t.plus(HOUR))).orElseThrow();
            assertEquals(500_001, next.slot());
            next.done();
            assertThrows(NotHeldException.class, next::done);
            next.close(); // done already: only frees it
        } finally {
            pool.shutdownNow();
            clients.forEach(EtcdLockClient::close);
        }
    }

    static long leaseUnder(String prefix) {
        Matcher m = Pattern.compile("\"lease\":(\\d+)").matcher(Etcd.etcdctl("get", "--prefix", prefix, "-w", "json"));
        assertTrue(m.find(), "no key with a lease under " + prefix);
        return Long.parseLong(m.group(1));
    }

    // covers: ONCE-RETRY-001
    @Test
    void aFailedOrLostWinnersJobRunsAtTheNextTrigger() throws Exception {
        String name = Etcd.uniqueName("once-retry");
        // One trigger time for all: "now" could cross the half hour that moves the nearest slot.
        OnceOptions o = OnceOptions.every(HOUR).ttl(Duration.ofSeconds(2)).at(Instant.now());
        try (EtcdLockClient c = Etcd.client()) {
            OnceSlot first = c.once(name, o).orElseThrow();
            assertEquals(Optional.empty(), c.once(name, o), "claimed twice");
            first.release(); // the job failed
            first.close();
            OnceSlot second = c.once(name, o).orElseThrow(() -> new AssertionError("a failed job did not run again"));
            CountDownLatch lost = new CountDownLatch(1);
            second.onLost(reason -> lost.countDown());
            // The winner "dies": its claim goes with its lease.
            Etcd.etcdctl("lease", "revoke", Long.toHexString(leaseUnder(name + "/slot/")));
            assertTrue(lost.await(10, TimeUnit.SECONDS), "no lost callback");
            OnceSlot third = c.once(name, o).orElseThrow(() -> new AssertionError("a lost winner's job did not run again"));
            assertThrows(NotHeldException.class, second::done, "a lost claim marked the period done");
            second.close();
            third.done();
            assertThrows(NotHeldException.class, () -> third.onLost(r -> { }));
            third.close();
            assertEquals(Optional.empty(), c.once(name, o));
            // A slot closed in a block that lost its claim reports it.
            String other = name + "-2";
            OnceSlot dropped = c.once(other, o).orElseThrow();
            Etcd.etcdctl("lease", "revoke", Long.toHexString(leaseUnder(other + "/slot/")));
            assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> !dropped.isHeld()));
            assertThrows(LockLostException.class, dropped::close);
            try (OnceSlot again = c.once(other, o).orElseThrow()) {
                assertTrue(again.isHeld());
            }
            assertEquals(Optional.empty(), c.once(other, o));
        }
    }

    // covers: ONCE-FENCE-001
    @Test
    void aSlotFencesTheJobsWritesAndALostWinnerWritesNothing() throws Exception {
        String name = Etcd.uniqueName("once-fence");
        String result = name + "-result";
        OnceOptions o = OnceOptions.every(HOUR).ttl(Duration.ofSeconds(2)).at(Instant.now());
        try (EtcdLockClient c = Etcd.client(); EtcdLockClient other = Etcd.client()) {
            OnceSlot first = c.once(name, o).orElseThrow();
            assertTrue(first.putIfHeld(result, Etcd.bytes("first")) > first.fencingToken());
            String own = name + "/done/" + first.slot();
            assertThrows(IllegalArgumentException.class, () -> first.putIfHeld(own, Etcd.bytes("done")), "a job wrote its own done mark");
            assertThrows(IllegalArgumentException.class, () -> first.deleteIfHeld(own));
            assertThrows(IllegalArgumentException.class, () -> first.putIfHeld("", Etcd.bytes("x")));
            assertThrows(NullPointerException.class, () -> first.putIfHeld(result, null));
            assertEquals(List.of(), Etcd.keysUnder(own));
            // The winner's lease revoked: the next trigger wins, and the lost winner writes nothing.
            Etcd.etcdctl("lease", "revoke", Long.toHexString(leaseUnder(name + "/slot/")));
            OnceSlot second = other.once(name, o).orElseThrow(() -> new AssertionError("the lost winner's job did not run again"));
            second.putIfHeld(result, Etcd.bytes("second"));
            assertThrows(NotHeldException.class, () -> first.putIfHeld(result, Etcd.bytes("late")));
            assertThrows(NotHeldException.class, () -> first.deleteIfHeld(result));
            assertEquals("second", Etcd.text(c.get(result).orElseThrow()));
            assertTrue(second.deleteIfHeld(result) > second.fencingToken());
            assertEquals(Optional.empty(), c.get(result));
            second.done();
            assertThrows(NotHeldException.class, () -> second.putIfHeld(result, Etcd.bytes("after")));
            second.close();
            assertThrows(NotHeldException.class, () -> second.putIfHeld(result, Etcd.bytes("closed")));
            assertThrows(LockLostException.class, first::close);
        }
    }

    // covers: ONCE-INPUT-001
    @Test
    void badOptionsAreRejectedWithNothingWritten() {
        String name = Etcd.uniqueName("once-input");
        EtcdLockClient c = Etcd.client(); // closed in the test (finally: again, a no-op)
        try {
            OnceOptions minute = OnceOptions.every(Duration.ofMinutes(1));
            assertThrows(IllegalArgumentException.class, () -> c.once("", minute));
            assertThrows(IllegalArgumentException.class, () -> c.once(name + "/", minute));
            assertThrows(IllegalArgumentException.class, () -> c.once(name, OnceOptions.every(Duration.ofMillis(500))));
            assertThrows(IllegalArgumentException.class, () -> OnceOptions.every(Duration.ofSeconds(-60)));
            assertThrows(IllegalArgumentException.class, () -> c.once(name, minute.keepPeriods(1)));
            assertThrows(IllegalArgumentException.class, () -> minute.ttl(Duration.ZERO));
            assertThrows(IllegalArgumentException.class, () -> c.once(name, minute.at(Instant.EPOCH.minusSeconds(1))));
            assertThrows(IllegalArgumentException.class, () -> c.once(name, OnceOptions.every(Duration.ofDays(365L * 1_000_000)).keepPeriods(Integer.MAX_VALUE)));
            assertThrows(NullPointerException.class, () -> c.once(null, minute));
            assertThrows(NullPointerException.class, () -> c.once(name, null));
            assertThrows(NullPointerException.class, () -> minute.at(null));
            assertEquals(List.of(), Etcd.keysUnder(name));
            // Now, with the defaults: works, and release leaves nothing.
            OnceSlot s = c.once(name, minute).orElseThrow();
            s.release();
            s.close();
            assertEquals(List.of(), Etcd.keysUnder(name));
            c.close();
            assertThrows(ClosedException.class, () -> c.once(name, minute));
        } finally {
            c.close();
        }
    }
}
