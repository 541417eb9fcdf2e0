package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static io.etcdlock.Etcd.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The task queue ({@code client.queue}) against a real etcd, with etcdctl as the witness: order,
 * idempotent puts, close acking and fenced writes with a lost claim, delays, dead letters, bad
 * input, async claims and their cancel, and workers (child JVMs) killed or stopped mid-task.
 */
class TaskQueueTest {
    static final QueueOptions TTL10 = QueueOptions.ttl(Duration.ofSeconds(10));
    static EtcdLockClient client;

    @BeforeAll
    static void connect() {
        client = Etcd.client();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    static void put(TaskQueue q, String id, int priority) {
        assertEquals(id, q.put(bytes(id), PutOptions.defaults().id(id).priority(priority)));
    }

    /** Claims (try once) and acks everything available; the ids in claim order. */
    static List<String> drain(TaskQueue q) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            Optional<Task> t = q.tryClaim();
            if (t.isEmpty()) {
                return ids;
            }
            try (Task task = t.get()) {
                ids.add(task.id());
            }
        }
        throw new AssertionError("more than 100 tasks");
    }

    /** The lease of the first key under {@code prefix}, as etcdctl shows it. */
    static long leaseUnder(String prefix) {
        Matcher m = Pattern.compile("\"lease\":(\\d+)").matcher(Etcd.etcdctl("get", "--prefix", prefix, "-w", "json"));
        assertTrue(m.find(), "no key with a lease under " + prefix);
        return Long.parseLong(m.group(1));
    }

    static void revoke(long lease) {
        Etcd.etcdctl("lease", "revoke", Long.toHexString(lease));
    }

    // covers: QUEUE-ORDER-001
    @Test
    void priorityFirstThenTheOrderOfThePuts() {
        String name = Etcd.uniqueName("q-order");
        TaskQueue q = client.queue(name, TTL10);
        String[] ids = {"a", "b", "c", "d", "e", "f"};
        int[] prios = {0, 5, 0, -1, 5, 0};
        for (int i = 0; i < ids.length; i++) {
            put(q, ids[i], prios[i]);
        }
        QueueStats s = q.stats();
        assertEquals(6, s.pending());
        Map<Integer, Long> byPriority = new LinkedHashMap<>();
        byPriority.put(5, 2L);
        byPriority.put(0, 3L);
        byPriority.put(-1, 1L);
        assertEquals(byPriority, s.pendingByPriority());
        assertEquals(List.of(5, 0, -1), new ArrayList<>(s.pendingByPriority().keySet()), "the highest priority first");
        assertEquals(List.of("b", "e", "a", "c", "f", "d"), drain(q));
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    // covers: QUEUE-PUT-ID-001
    @Test
    void aPutWithAnExistingIdChangesNothing() throws Exception {
        String name = Etcd.uniqueName("q-idem");
        TaskQueue q = client.queue(name, TTL10.maxAttempts(1));
        q.put(bytes("first"), PutOptions.defaults().id("x"));
        assertEquals("x", q.put(bytes("second"), PutOptions.defaults().id("x").priority(9)));
        assertEquals(1, q.stats().pending());
        Task task = q.claim(Duration.ZERO);
        assertEquals("first", text(task.payload()));
        assertEquals("x", q.put(bytes("third"), PutOptions.defaults().id("x")));
        task.nack(); // its last attempt: dead
        task.close();
        assertEquals("x", q.put(bytes("fourth"), PutOptions.defaults().id("x")));
        QueueStats s = q.stats();
        assertEquals(List.of(0L, 0L, 1L), List.of(s.pending(), s.claimed(), s.dead()));
        assertTrue(q.deleteDead("x"));
        q.put(bytes("new"), PutOptions.defaults().id("x"));
        try (Task t = q.claim(Duration.ZERO)) {
            assertEquals("new", text(t.payload()));
        }
        String a = q.put(bytes("p")), b = q.put(bytes("p"));
        assertNotEquals(a, b, "no id: each its own item");
        Etcd.etcdctl("del", "--prefix", name + "/");
    }

    // covers: QUEUE-ACK-001
    @Test
    void closeAcksAndWritesAreFencedAndALostClaimWritesNothing() throws Exception {
        String name = Etcd.uniqueName("q-ack");
        String results = name + "-results/";
        // A client of its own: its claim lease gets revoked.
        try (EtcdLockClient c = Etcd.client()) {
            TaskQueue q = c.queue(name, TTL10);
            q.put(bytes("img-17"), PutOptions.defaults().id("img-17"));
            Task task = q.claim(Duration.ofSeconds(5));
            try (task) {
                assertEquals(List.of("img-17", "img-17", 1, 0), List.of(task.id(), text(task.payload()), task.attempts(), task.priority()));
                assertTrue(task.fencingToken() > 0 && task.isHeld());
                assertTrue(task.putIfHeld(results + "img-17", bytes("ok")) > task.fencingToken());
            }
            assertFalse(task.isHeld());
            assertEquals("ok", text(c.get(results + "img-17").orElseThrow()));
            assertEquals(0, q.stats().pending());
            assertThrows(NotHeldException.class, () -> task.putIfHeld(results + "late", bytes("x")));
            assertEquals(Optional.empty(), c.get(results + "late"));
            // A failed handler nacks in the block: close then only frees the task.
            q.put(bytes("boom"), PutOptions.defaults().id("boom"));
            try (Task t = q.claim(Duration.ofSeconds(5))) {
                t.nack();
                assertThrows(NotHeldException.class, t::ack);
            }
            Task again = q.claim(Duration.ofSeconds(5));
            assertEquals(List.of("boom", 2), List.of(again.id(), again.attempts()));
            AtomicReference<String> lostWhy = new AtomicReference<>();
            CountDownLatch lost = new CountDownLatch(1);
            again.onLost(reason -> {
                lostWhy.set(reason);
                lost.countDown();
            });
            // The claim is lost (its lease revoked): its fenced write and its ack fail together.
            revoke(leaseUnder(name + "/claim/"));
            assertTrue(lost.await(10, TimeUnit.SECONDS), "no lost callback");
            assertTrue(Set.of("expired", "key_deleted").contains(lostWhy.get()), lostWhy.get());
            assertFalse(again.isHeld());
            assertTrue(again.lostReason().isPresent());
            assertThrows(NotHeldException.class, () -> again.putIfHeld(results + "boom", bytes("late")));
            assertThrows(NotHeldException.class, () -> again.ack(Map.of(results + "boom", bytes("late")), List.of()));
            assertEquals(Optional.empty(), c.get(results + "boom"));
            Task last = q.claim(Duration.ofSeconds(5));
            assertEquals(3, last.attempts());
            assertTrue(last.fencingToken() > again.fencingToken());
            assertThrows(NotHeldException.class, () -> again.deleteIfHeld(results + "img-17"));
            again.close(); // its failed ack ended it: close only frees it
            // A task's writes stay out of the queue's own keys.
            assertThrows(IllegalArgumentException.class, () -> last.putIfHeld(name + "/items/x", bytes("v")));
            assertThrows(IllegalArgumentException.class, () -> last.ack(Map.of(name + "/items/x", bytes("v")), List.of()));
            // The result and the ack in one transaction.
            assertTrue(last.ack(Map.of(results + "boom", bytes("ok")), List.of(results + "img-17")) > last.fencingToken());
            assertThrows(NotHeldException.class, last::ack);
            assertThrows(NotHeldException.class, last::nack);
            assertThrows(NotHeldException.class, () -> last.onLost(r -> { }));
            last.close(); // acked: nothing more
            assertEquals("ok", text(c.get(results + "boom").orElseThrow()));
            assertEquals(Optional.empty(), c.get(results + "img-17"));
            assertEquals(List.of(), Etcd.keysUnder(name + "/"));
            c.delete(results + "boom");
        }
    }

    // covers: QUEUE-ACK-001 (close of a task whose claim was lost: LockLostException, not acked)
    @Test
    void closingALostTaskReportsIt() throws Exception {
        String name = Etcd.uniqueName("q-lostclose");
        try (EtcdLockClient c = Etcd.client()) {
            TaskQueue q = c.queue(name, TTL10);
            q.put(bytes("j"), PutOptions.defaults().id("j"));
            Task t = q.claim(Duration.ofSeconds(5));
            revoke(leaseUnder(name + "/claim/"));
            assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> !t.isHeld()));
            LockLostException e = assertThrows(LockLostException.class, t::close);
            assertTrue(e.getMessage().contains("not acked"), e.getMessage());
            try (Task back = q.claim(Duration.ofSeconds(5))) {
                assertEquals(2, back.attempts());
            }
            assertEquals(List.of(), Etcd.keysUnder(name + "/"));
        }
    }

    // covers: QUEUE-DELAY-001
    @Test
    void aDelayedItemWaitsForItsDelay() throws Exception {
        String name = Etcd.uniqueName("q-delay");
        TaskQueue q = client.queue(name, TTL10);
        long start = System.nanoTime();
        q.put(bytes("later"), PutOptions.defaults().id("later").delay(Duration.ofSeconds(2)));
        put(q, "now", 0);
        QueueStats s = q.stats();
        assertEquals(List.of(1L, 1L), List.of(s.pending(), s.delayed()));
        Task t = q.claim(Duration.ZERO);
        assertEquals("now", t.id());
        t.nack(Duration.ofMillis(2500)); // 3 s
        long nacked = System.nanoTime();
        t.close();
        assertEquals(Optional.empty(), q.tryClaim());
        EtcdLockException e = assertThrows(EtcdLockException.class, () -> q.claim(Duration.ZERO));
        assertEquals("WOULD_BLOCK", e.kind());
        try (Task first = q.claim(Duration.ofSeconds(10))) {
            assertEquals("later", first.id());
            assertTrue(System.nanoTime() - start >= 2_000_000_000L);
        }
        try (Task second = q.claim(Duration.ofSeconds(10))) {
            assertEquals(List.of("now", 2), List.of(second.id(), second.attempts()));
            long after = System.nanoTime() - nacked;
            assertTrue(after >= 3_000_000_000L, "claimed " + after / 1_000_000 + " ms after a nack of 3 s");
        }
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    // covers: QUEUE-DEAD-001
    @Test
    void deadLettersAfterTheLastAttempt() throws Exception {
        String name = Etcd.uniqueName("q-dead");
        TaskQueue q = client.queue(name, TTL10.maxAttempts(2));
        put(q, "p", 3);
        for (int i = 1; i <= 2; i++) {
            try (Task t = q.claim(Duration.ZERO)) {
                assertEquals(i, t.attempts());
                t.nack();
            }
        }
        assertEquals(Optional.empty(), q.tryClaim());
        assertEquals(List.of(DeadTask.of("p", bytes("p"), 2, 3)), q.dead());
        // Tasks given back without a nack of the worker's (as a claim cancelled too late is) count too.
        put(q, "k", 0);
        for (int i = 0; i < 2; i++) {
            q.claim(Duration.ZERO).giveBackQuietly();
        }
        assertEquals(Optional.empty(), q.tryClaim());
        assertEquals(2, q.stats().dead());
        assertTrue(q.requeueDead("p"));
        assertFalse(q.requeueDead("p"), "requeued twice");
        try (Task back = q.claim(Duration.ZERO)) {
            assertEquals(List.of("p", 1, 3), List.of(back.id(), back.attempts(), back.priority()));
        }
        assertTrue(q.deleteDead("k"));
        assertFalse(q.deleteDead("k"));
        assertEquals(List.of(), q.dead());
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    // covers: QUEUE-INPUT-001
    @Test
    void badInputIsRefusedWithNothingWritten() throws Exception {
        String name = Etcd.uniqueName("q-input");
        EtcdLockClient c = Etcd.client(); // closed in the test (finally: again, a no-op)
        try {
            assertThrows(IllegalArgumentException.class, () -> c.queue("", TTL10));
            assertThrows(IllegalArgumentException.class, () -> c.queue(name + "/", TTL10));
            assertThrows(IllegalArgumentException.class, () -> QueueOptions.ttl(Duration.ZERO));
            assertThrows(IllegalArgumentException.class, () -> c.queue(name, TTL10.maxAttempts(0)));
            assertThrows(IllegalArgumentException.class, () -> c.queue(name, TTL10.maxAttempts(-1)));
            assertThrows(IllegalArgumentException.class, () -> c.queue(name, TTL10.worker(new byte[4097])));
            assertThrows(NullPointerException.class, () -> c.queue(null, TTL10));
            assertThrows(NullPointerException.class, () -> c.queue(name, null));
            TaskQueue q = c.queue(name, TTL10);
            assertThrows(IllegalArgumentException.class, () -> q.put(new byte[1536 * 1024]));
            assertThrows(IllegalArgumentException.class, () -> q.put(bytes("x"), PutOptions.defaults().id("")));
            assertThrows(IllegalArgumentException.class, () -> q.put(bytes("x"), PutOptions.defaults().id("a\nb")));
            assertThrows(IllegalArgumentException.class, () -> q.put(bytes("x"), PutOptions.defaults().id("i".repeat(257))));
            assertThrows(IllegalArgumentException.class, () -> PutOptions.defaults().delay(Duration.ofSeconds(-1)));
            assertThrows(IllegalArgumentException.class, () -> q.put(bytes("x"), PutOptions.defaults().delay(Duration.ofDays(365L * 1000))));
            assertThrows(NullPointerException.class, () -> q.put(null));
            assertThrows(IllegalArgumentException.class, () -> q.claim(Duration.ofSeconds(-1)));
            assertThrows(IllegalArgumentException.class, () -> q.claimAsync(Duration.ofSeconds(-1)));
            assertThrows(IllegalArgumentException.class, () -> q.requeueDead(""));
            assertThrows(IllegalArgumentException.class, () -> q.deleteDead("a\nb"));
            assertEquals(List.of(), Etcd.keysUnder(name), "bad input wrote something");
            // The largest payload goes through.
            byte[] big = new byte[1536 * 1024 - 8 * 1024];
            Arrays.fill(big, (byte) 7);
            q.put(big);
            try (Task t = q.claim(Duration.ZERO)) {
                assertArrayEquals(big, t.payload());
                assertThrows(IllegalArgumentException.class, () -> t.putIfHeld("", bytes("v")));
                assertThrows(IllegalArgumentException.class, () -> t.nack(Duration.ofSeconds(-1)));
                assertTrue(t.isHeld(), "a refused call ended the claim");
            }
            assertEquals(List.of(), Etcd.keysUnder(name + "/"));
            c.close();
            assertThrows(ClosedException.class, () -> q.put(bytes("x")));
            assertThrows(ClosedException.class, () -> q.claim(Duration.ZERO));
            assertThrows(ClosedException.class, () -> c.queue(name, TTL10));
        } finally {
            c.close();
        }
    }

    // covers: QUEUE-CANCEL-001 (future cancel and orTimeout, thread interrupt)
    @Test
    void cancelledClaimsLeaveNothingAndTheNextWaiterGetsTheItem() throws Exception {
        String name = Etcd.uniqueName("q-cancel");
        TaskQueue q = client.queue(name, TTL10);
        // An async claim of an item that is there.
        put(q, "one", 0);
        try (Task t = q.claimAsync(Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS)) {
            assertEquals("one", t.id());
            assertTrue(t.isHeld());
        }
        // A waiting claim and one queued behind it for its turn; the first is cancelled, then an
        // item is put: the second gets it.
        CompletableFuture<Task> first = q.claimAsync(Duration.ofSeconds(20));
        assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> Etcd.keysUnder(name + "/workers/").size() == 1));
        CompletableFuture<Task> second = q.claimAsync(Duration.ofSeconds(20));
        assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> Etcd.keysUnder(name + "/workers/").size() == 2));
        assertTrue(first.cancel(true));
        assertThrows(CancellationException.class, first::join);
        assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> Etcd.keysUnder(name + "/workers/").size() == 1), "the cancelled turn key stayed");
        put(q, "two", 0);
        try (Task t = second.get(10, TimeUnit.SECONDS)) {
            assertEquals("two", t.id());
        }
        // orTimeout gives up the wait too.
        CompletableFuture<Task> timed = q.claimAsync(Duration.ofSeconds(30)).orTimeout(300, TimeUnit.MILLISECONDS);
        ExecutionException e = assertThrows(ExecutionException.class, () -> timed.get(10, TimeUnit.SECONDS));
        assertInstanceOf(java.util.concurrent.TimeoutException.class, e.getCause());
        // The claim's own timeout.
        ExecutionException lt = assertThrows(ExecutionException.class, () -> q.claimAsync(Duration.ofMillis(300)).get(10, TimeUnit.SECONDS));
        assertInstanceOf(LockTimeoutException.class, lt.getCause());
        // An interrupted blocking claim.
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            AtomicReference<Thread> waiter = new AtomicReference<>();
            Future<Task> blocked = pool.submit(() -> {
                waiter.set(Thread.currentThread());
                return q.claim(Duration.ofSeconds(30));
            });
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> Etcd.keysUnder(name + "/workers/").size() == 1));
            waiter.get().interrupt();
            ExecutionException ie = assertThrows(ExecutionException.class, () -> blocked.get(10, TimeUnit.SECONDS));
            assertInstanceOf(InterruptedException.class, ie.getCause());
        } finally {
            pool.shutdownNow();
        }
        assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> Etcd.keysUnder(name + "/").isEmpty()), Etcd.keysUnder(name + "/").toString());
    }

    /** A worker in a JVM of its own (QueueWorker), once it printed its claim. */
    static final class Worker implements AutoCloseable {
        final Process process;
        final BufferedReader out;
        final String claimed;

        Worker(String name, int ttl) throws Exception {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            process = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "io.etcdlock.QueueWorker", Etcd.endpoints(), name,
                    String.valueOf(ttl)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            claimed = line(30);
        }

        /** The child's next line, within {@code seconds}. */
        String line(int seconds) throws Exception {
            CompletableFuture<String> next = CompletableFuture.supplyAsync(() -> {
                try {
                    return out.readLine();
                } catch (java.io.IOException e) {
                    return null;
                }
            });
            return next.get(seconds, TimeUnit.SECONDS);
        }

        void tell(String s) throws Exception {
            OutputStream in = process.getOutputStream();
            in.write((s + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        }

        void signal(String sig) throws Exception {
            Process k = new ProcessBuilder("kill", "-" + sig, String.valueOf(process.pid())).start();
            assertTrue(k.waitFor(10, TimeUnit.SECONDS) && k.exitValue() == 0, "kill -" + sig);
        }

        @Override
        public void close() {
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    // covers: QUEUE-KILL-001
    @Test
    void aWorkerKilledMidTaskLosesItToAnotherWithinItsTtl() throws Exception {
        String name = Etcd.uniqueName("q-kill");
        TaskQueue q = client.queue(name, QueueOptions.ttl(Duration.ofSeconds(2)));
        put(q, "job", 0);
        try (Worker w = new Worker(name, 2)) {
            assertEquals("claimed job 1", w.claimed);
            w.process.destroyForcibly(); // SIGKILL: no shutdown hook, the lease is left to expire
            assertTrue(w.process.waitFor(10, TimeUnit.SECONDS));
            long killed = System.nanoTime();
            try (Task t = q.claim(Duration.ofSeconds(10))) {
                long took = (System.nanoTime() - killed) / 1_000_000;
                assertEquals(List.of("job", 2), List.of(t.id(), t.attempts()));
                assertTrue(took < 2000 + 1500, "claimed again " + took + " ms after the kill");
            }
        }
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    // covers: QUEUE-STOP-001
    @Test
    void aWorkerFrozenPastItsTtlCannotAckAndTheOthersResultStands() throws Exception {
        String name = Etcd.uniqueName("q-stop");
        TaskQueue q = client.queue(name, QueueOptions.ttl(Duration.ofSeconds(2)));
        put(q, "job", 0);
        try (Worker w = new Worker(name, 2)) {
            assertTrue(w.claimed.startsWith("claimed job"), w.claimed);
            w.signal("STOP");
            try {
                try (Task t = q.claim(Duration.ofSeconds(10))) {
                    assertEquals(2, t.attempts());
                    t.putIfHeld(name + "-result", bytes("second"));
                }
            } finally {
                w.signal("CONT");
            }
            w.tell("go");
            assertEquals("not held", w.line(20));
        }
        assertEquals("second", text(client.get(name + "-result").orElseThrow()));
        client.delete(name + "-result");
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }
}
