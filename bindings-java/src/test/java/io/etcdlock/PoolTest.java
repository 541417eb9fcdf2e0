package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Pools of named slots ({@code client.pool}): never two holders of a slot, a killed holder's slot
 * resting the reuse delay, FIFO with the head-of-line rule, owners, a lost holding, definitions
 * and runtime changes, bad input.
 */
@Timeout(90)
class PoolTest {
    static final Duration WAIT = Duration.ofSeconds(5);
    static EtcdLockClient client;

    @BeforeAll
    static void connect() {
        client = Etcd.client();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    // covers: POOL-EXCL-001
    @Test
    void twelveWorkersOnThreeSlotsNeverShareOne() throws Exception {
        String name = Etcd.uniqueName("pool-excl");
        String marks = name + "-using/";
        AtomicInteger inside = new AtomicInteger(), most = new AtomicInteger();
        List<EtcdLockClient> clients = new ArrayList<>();
        ExecutorService workers = Executors.newFixedThreadPool(12);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                EtcdLockClient c = Etcd.client();
                clients.add(c);
                int me = i;
                done.add(workers.submit(() -> {
                    Pool pool = c.pool(name, PoolOptions.slots("gpu0", "gpu1", "gpu2").reuseDelay(Duration.ofSeconds(2)));
                    for (int round = 0; round < 3; round++) {
                        try (PoolHolding held = pool.acquire(1, Duration.ofSeconds(60))) {
                            most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            String slot = held.slots().get(0);
                            // A fenced mark per slot: a second holder of the slot would find it.
                            String mark = marks + slot;
                            assertEquals(Optional.empty(), c.get(mark), "slot " + slot + " used by two holders (worker " + me + ", round " + round + ")");
                            held.putIfHeld(mark, bytes(String.valueOf(me)));
                            Thread.sleep(3 * (me % 4));
                            held.deleteIfHeld(mark);
                            inside.decrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(80, TimeUnit.SECONDS);
            }
        } finally {
            workers.shutdownNow();
            clients.forEach(EtcdLockClient::close);
        }
        assertTrue(most.get() <= 3, most.get() + " holders at once");
        assertTrue(most.get() >= 2, "the slots were never used side by side");
        assertEquals(List.of(), Etcd.keysUnder(marks));
        assertEquals(List.of(), Etcd.keysUnder(name + "/slot/"));
        assertEquals(List.of(), Etcd.keysUnder(name + "/queue/"));
    }

    // covers: POOL-REUSE-001
    @Test
    void aKilledHoldersSlotRestsTheReuseDelayAndAReleasedOneDoesNot() throws Exception {
        String name = Etcd.uniqueName("pool-reuse");
        PoolOptions opts = PoolOptions.slots("w0").ttl(Duration.ofSeconds(2)).reuseDelay(Duration.ofSeconds(3));
        try (EtcdLockClient a = Etcd.client(); EtcdLockClient b = Etcd.client()) {
            Pool pa = a.pool(name, opts), pb = b.pool(name, opts);
            // A clean release: the next request gets the slot at once, with a larger token.
            PoolHolding first = pa.acquire(1, WAIT);
            long token = first.tokens().get("w0");
            first.release();
            first.close();
            long at = System.nanoTime();
            try (PoolHolding second = pb.acquire(1, WAIT)) {
                assertTrue(System.nanoTime() - at < 500_000_000L, "a released slot rested");
                assertTrue(second.tokens().get("w0") > token);
            }
            // A holder JVM SIGKILLed: its lease ends within its TTL (2 s), and the request waiting
            // meanwhile gets the slot only the reuse delay (3 s) after that.
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "io.etcdlock.PoolHolder", Etcd.endpoints(), name)
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
                String line = CompletableFuture.supplyAsync(() -> {
                    try {
                        return out.readLine();
                    } catch (java.io.IOException e) {
                        return null;
                    }
                }).get(30, TimeUnit.SECONDS);
                assertTrue(line != null && line.startsWith("held w0 "), String.valueOf(line));
                String[] tokens = line.substring(8).trim().split(" ");
                long childToken = Long.parseLong(tokens[0]);
                // The slot key holds "<acquisition token>;<owner>": the child's until it dies.
                String childValue = tokens[1] + ";";
                AtomicLong got = new AtomicLong();
                CompletableFuture<PoolHolding> waiting = pa.acquireAsync(1, Duration.ofSeconds(15)).whenComplete((h, e) -> got.set(System.nanoTime()));
                Thread.sleep(300);
                child.destroyForcibly(); // SIGKILL
                assertTrue(child.waitFor(10, TimeUnit.SECONDS));
                // The slot key goes with the dead holder's lease.
                assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> !a.get(name + "/slot/w0").map(Etcd::text).orElse("").equals(childValue)));
                long died = System.nanoTime();
                try (PoolHolding third = waiting.get(15, TimeUnit.SECONDS)) {
                    long rested = (got.get() - died) / 1_000_000;
                    assertTrue(rested >= 2900, "a dead holder's slot was handed out " + rested + " ms after its lease ended");
                    assertTrue(rested < 6000, "the slot rested " + rested + " ms");
                    assertEquals(List.of("w0"), third.slots());
                    assertTrue(third.tokens().get("w0") > childToken);
                }
            } finally {
                child.destroyForcibly();
            }
        }
    }

    // covers: POOL-FIFO-001
    @Test
    void aRequestForTwoGoesBeforeLaterSingleOnes() throws Exception {
        String name = Etcd.uniqueName("pool-fifo");
        Pool pool = client.pool(name, PoolOptions.size(3));
        PoolHolding x = pool.acquire(1, WAIT), y = pool.acquire(1, WAIT);
        assertEquals(List.of("0"), x.slots());
        assertEquals(List.of("1"), y.slots());
        assertTrue(y.fencingToken() > x.fencingToken());
        List<Integer> order = java.util.Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<PoolHolding>> waiting = new ArrayList<>();
        int[] counts = {2, 1, 1};
        for (int i = 0; i < 3; i++) {
            int me = i;
            waiting.add(pool.acquireAsync(counts[i], Duration.ofSeconds(10)).whenComplete((h, e) -> order.add(me)));
            int queued = i + 1;
            assertTrue(Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/queue/").size() == queued), "queued in order");
        }
        // One slot is free, but the head wants two: nobody passes it.
        Thread.sleep(300);
        assertEquals(List.of(), order, "a later single request passed the request for two");
        x.close();
        PoolHolding two = waiting.get(0).get(5, TimeUnit.SECONDS);
        assertEquals(2, two.slots().size());
        assertEquals(2, two.tokens().size());
        // Singles then go one free slot at a time, in their order (each release
        // frees exactly one slot, so the order checked is etcd's, not the threads').
        y.close();
        PoolHolding one = waiting.get(1).get(5, TimeUnit.SECONDS);
        assertTrue(Etcd.eventually(WAIT, () -> order.size() == 2));
        assertEquals(List.of(0, 1), order, "the later single request went first");
        two.close();
        PoolHolding other = waiting.get(2).get(5, TimeUnit.SECONDS);
        assertTrue(Etcd.eventually(WAIT, () -> order.size() == 3));
        assertEquals(List.of(0, 1, 2), order);
        for (PoolHolding h : List.of(one, other)) {
            assertEquals(1, h.slots().size());
            h.close();
        }
        // A waiting acquire cancelled: nothing left behind.
        try (PoolHolding all = pool.acquire(3, WAIT)) {
            CompletableFuture<PoolHolding> w = pool.acquireAsync(1, Duration.ofSeconds(30));
            assertTrue(Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/queue/").size() == 1));
            assertTrue(w.cancel(true));
            assertThrows(CancellationException.class, w::join);
            assertTrue(Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/queue/").isEmpty()), "a cancelled acquire left its request");
            assertEquals(3, all.slots().size());
        }
        try (PoolHolding all = pool.tryAcquire(3).orElseThrow()) {
            assertEquals(List.of("0", "1", "2"), all.slots());
        }
    }

    // covers: POOL-OWNER-001
    @Test
    void anAcquireWithTheOwnerOfALiveHoldingReturnsIt() throws Exception {
        String name = Etcd.uniqueName("pool-owner");
        Pool pool = client.pool(name, PoolOptions.size(2));
        PoolHolding first = pool.acquire(1, "job-7", WAIT);
        PoolHolding again = pool.acquire(1, "job-7", WAIT);
        assertNotSame(first, again);
        assertEquals(first.slots(), again.slots());
        assertEquals(first.fencingToken(), again.fencingToken());
        assertEquals(first.tokens(), again.tokens());
        assertEquals(Optional.of("job-7"), again.owner());
        try (PoolHolding other = pool.acquire(1, "job-8", WAIT)) {
            assertNotEquals(first.slots(), other.slots());
            List<SlotInfo> slots = pool.slots();
            assertEquals(2, slots.size());
            SlotInfo s0 = slots.get(0);
            assertEquals("0", s0.id());
            assertEquals(SlotInfo.State.HELD, s0.state());
            assertEquals(Optional.of("job-7"), s0.owner());
            assertEquals(first.fencingToken(), s0.acquisition());
            assertEquals((long) first.tokens().get("0"), s0.token());
            assertEquals(first.leaseId(), s0.leaseId());
            assertTrue(s0.ttlSeconds().orElse(-1) > 0);
            assertEquals(Optional.of("job-8"), slots.get(1).owner());
            // Closing one handle keeps the holding for the other.
            again.close();
            assertTrue(first.isHeld());
            first.putIfHeld(name + "-rec", bytes("x"));
            first.release();
            assertFalse(first.isHeld());
            assertEquals(Optional.empty(), first.lostReason());
            try (PoolHolding fresh = pool.acquire(1, "job-7", WAIT)) {
                assertTrue(fresh.fencingToken() > first.fencingToken(), "a released holding came back");
            }
            assertThrows(NotHeldException.class, first::release);
            assertThrows(NotHeldException.class, () -> first.putIfHeld(name + "-rec", bytes("late")));
            first.close();
        }
        assertEquals(List.of(), Etcd.keysUnder(name + "/slot/"));
        client.delete(name + "-rec");
    }

    // covers: POOL-LOST-001 (Java: onLost, fenced writes and close of a lost holding)
    @Test
    void aLostHoldingCallsBackOnceAndWritesNothing() throws Exception {
        String name = Etcd.uniqueName("pool-lost");
        String result = name + "-result";
        try (EtcdLockClient c = Etcd.client()) {
            Pool pool = c.pool(name, PoolOptions.size(3).ttl(Duration.ofSeconds(2)));
            PoolHolding held = pool.acquire(2, WAIT);
            CountDownLatch lost = new CountDownLatch(1);
            AtomicInteger calls = new AtomicInteger();
            AtomicReference<String> why = new AtomicReference<>();
            held.onLost(reason -> {
                why.set(reason);
                calls.incrementAndGet();
                lost.countDown();
            });
            held.putIfHeld(result, bytes("first"));
            Etcd.etcdctl("lease", "revoke", Long.toHexString(held.leaseId()));
            assertTrue(lost.await(10, TimeUnit.SECONDS), "no lost callback");
            assertFalse(held.isHeld());
            assertEquals(Optional.of(why.get()), held.lostReason());
            assertThrows(NotHeldException.class, () -> held.putIfHeld(result, bytes("late")));
            assertThrows(NotHeldException.class, () -> held.deleteIfHeld(result));
            assertEquals("first", Etcd.text(c.get(result).orElseThrow()));
            assertThrows(LockLostException.class, held::close);
            assertEquals(List.of(), Etcd.keysUnder(name + "/slot/"));
            // A holding released normally: no callback.
            AtomicInteger never = new AtomicInteger();
            try (PoolHolding other = pool.acquire(1, WAIT)) {
                other.onLost(r -> never.incrementAndGet());
            }
            Thread.sleep(200);
            assertEquals(0, never.get());
            assertEquals(1, calls.get());
            c.delete(result);
        }
    }

    // covers: POOL-DEF-001
    @Test
    void definitionsMustAgreeAndSlotsChangeAtRuntime() throws Exception {
        String name = Etcd.uniqueName("pool-def");
        Pool pool = client.pool(name, PoolOptions.slots("a", "b"));
        assertThrows(IllegalArgumentException.class, () -> pool.addSlots("c"), "changed a pool nobody defined");
        pool.acquire(1, WAIT).close();
        for (PoolOptions other : List.of(PoolOptions.slots("a", "c"), PoolOptions.slots("a", "b").reuseDelay(Duration.ofSeconds(5)))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> client.pool(name, other).acquire(1, Duration.ofSeconds(1)));
            assertTrue(e.getMessage().contains("add_slots"), e.getMessage());
        }
        // Joining takes the stored definition; joining a pool nobody defined is refused.
        try (PoolHolding joined = client.joinPool(name, Duration.ofSeconds(10)).acquire(2, WAIT)) {
            assertEquals(List.of("a", "b"), joined.slots());
        }
        assertThrows(IllegalArgumentException.class, () -> client.joinPool(name + "-none", Duration.ofSeconds(10)).acquire(1, WAIT));
        PoolHolding both = pool.acquire(2, WAIT);
        // A request waiting while both slots are held gets a slot added meanwhile.
        CompletableFuture<PoolHolding> waiting = pool.acquireAsync(1, WAIT);
        Thread.sleep(300);
        assertEquals(List.of("a", "b", "c"), pool.addSlots("c"));
        try (PoolHolding got = waiting.get(5, TimeUnit.SECONDS)) {
            assertEquals(List.of("c"), got.slots());
            // A held slot removed goes at its release; it is not handed out meanwhile.
            assertEquals(List.of("b", "c"), pool.removeSlots(List.of("a")));
            both.close();
            List<SlotInfo> slots = pool.slots();
            assertEquals(2, slots.size());
            assertEquals("b", slots.get(0).id());
            assertEquals(SlotInfo.State.FREE, slots.get(0).state());
            assertEquals(SlotInfo.State.HELD, slots.get(1).state());
            assertThrows(IllegalArgumentException.class, () -> pool.addSlots("b"));
            assertThrows(IllegalArgumentException.class, () -> pool.removeSlots("zz"));
        }
        assertEquals(Optional.empty(), client.inspectPool(name + "-none"));
        assertEquals(List.of(), client.joinPool(name + "-none", Duration.ofSeconds(10)).slots());
    }

    // covers: POOL-INPUT-001
    @Test
    void badInputIsRejectedWithNothingWritten() throws Exception {
        String name = Etcd.uniqueName("pool-input");
        for (PoolOptions bad : List.of(PoolOptions.slots(), PoolOptions.slots("a", "a"), PoolOptions.slots("a/b"), PoolOptions.slots(""),
                PoolOptions.slots("x\ny"), PoolOptions.size(0), PoolOptions.size(-1), PoolOptions.size(1025))) {
            assertThrows(IllegalArgumentException.class, () -> client.pool(name, bad), bad.toString());
        }
        assertThrows(IllegalArgumentException.class, () -> client.pool("", PoolOptions.size(2)));
        assertThrows(IllegalArgumentException.class, () -> client.pool(name + "/", PoolOptions.size(2)));
        assertThrows(IllegalArgumentException.class, () -> PoolOptions.size(2).ttl(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> PoolOptions.size(2).reuseDelay(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> client.pool(name, PoolOptions.size(2).reuseDelay(Duration.ofDays(365L * 1000))));
        assertThrows(IllegalArgumentException.class, () -> client.joinPool(name, Duration.ZERO));
        assertThrows(NullPointerException.class, () -> client.pool(null, PoolOptions.size(2)));
        assertThrows(NullPointerException.class, () -> client.pool(name, null));
        assertThrows(NullPointerException.class, () -> PoolOptions.slots("a", null));
        assertThrows(NullPointerException.class, () -> PoolOptions.slots((String[]) null));
        assertEquals(List.of("0", "1"), PoolOptions.size(2).slotIds());
        Pool pool = client.pool(name, PoolOptions.size(2));
        for (int count : new int[] {0, -1, 3}) {
            assertThrows(IllegalArgumentException.class, () -> pool.acquire(count, WAIT), "count " + count);
        }
        assertThrows(IllegalArgumentException.class, () -> pool.acquire(1, Duration.ofMillis(-1)));
        assertThrows(NullPointerException.class, () -> pool.acquire(1, null));
        ExecutionException async = assertThrows(ExecutionException.class, () -> pool.acquireAsync(0, WAIT).get(5, TimeUnit.SECONDS));
        assertTrue(async.getCause() instanceof IllegalArgumentException, async.getCause().toString());
        assertThrows(NullPointerException.class, () -> pool.addSlots((String) null));
        assertEquals(List.of(), Etcd.keysUnder(name));
        // A try that finds no slot free leaves nothing but the definition.
        try (PoolHolding both = pool.acquire(2, WAIT)) {
            assertEquals(Optional.empty(), both.owner());
            assertEquals(Optional.empty(), pool.tryAcquire(1));
            assertThrows(LockTimeoutException.class, () -> pool.acquire(1, Duration.ofMillis(200)));
            assertEquals(List.of(), Etcd.keysUnder(name + "/queue/"));
            // Writes through the holding: not to the pool's own keys, not without a write.
            assertThrows(IllegalArgumentException.class, () -> both.putIfHeld(name + "/slot/0", bytes("mine")));
            assertThrows(IllegalArgumentException.class, () -> both.putIfHeld("", bytes("v")));
            assertThrows(IllegalArgumentException.class, () -> both.writeIfHeld(Map.of(), List.of()));
            assertThrows(NullPointerException.class, () -> both.putIfHeld(name + "-out", null));
            assertEquals(Optional.empty(), client.get(name + "-out"));
            long rev = both.writeIfHeld(Map.of(name + "-out", bytes("v")), List.of(name + "-never-there"));
            assertTrue(rev > both.fencingToken());
            assertEquals("v", Etcd.text(client.get(name + "-out").orElseThrow()));
        }
        client.delete(name + "-out");
    }
}
