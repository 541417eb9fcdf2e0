package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static io.etcdlock.Etcd.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lock sets ({@code client.lockSet}) against a real etcd, with etcdctl as the witness: opposite
 * orders never deadlock and never share a name, one token on every member's key, writes fenced
 * by every member, a member's key deleted by someone else, mixed modes. Timeouts, tries, cancels
 * and bad input: {@link LockSetInputTest}; fences: {@link LockSetFenceTest}.
 */
@Timeout(120)
class LockSetTest {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));
    static final Duration WAIT = Duration.ofSeconds(5);
    static final int ROUNDS = 200;
    static EtcdLockClient client;

    @BeforeAll
    static void connect() {
        client = Etcd.client();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    /** {@code field} of {@code key} as etcdctl reads it ({@code -w json}), or -1 without the key. */
    static long field(String key, String field) {
        Matcher m = Pattern.compile("\"" + field + "\":(\\d+)").matcher(Etcd.etcdctl("get", key, "-w", "json"));
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    /** The keys in the queues of {@code names}. */
    static List<String> queues(String... names) {
        List<String> keys = new ArrayList<>();
        for (String n : names) {
            keys.addAll(Etcd.keysUnder(n + "/"));
        }
        return keys;
    }

    // covers: LOCKSET-ABBA-001
    @Test
    void oppositeOrdersNeverDeadlockAndNeverShareAName() throws Exception {
        String a = Etcd.uniqueName("ls-a"), b = Etcd.uniqueName("ls-b"), counter = Etcd.uniqueName("ls-counter");
        ExecutorService threads = Executors.newFixedThreadPool(2);
        List<EtcdLockClient> clients = List.of(Etcd.client(), Etcd.client());
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                EtcdLockClient c = clients.get(i);
                List<SetMember> order = i == 0 ? SetMember.names(a, b) : SetMember.names(b, a);
                done.add(threads.submit(() -> {
                    LockSet set = c.lockSet(order, TTL);
                    for (int round = 0; round < ROUNDS; round++) {
                        // A 10 s wait is a deadlock (LockTimeoutException fails the test).
                        try (LockSetHolding locks = set.acquire(Duration.ofSeconds(10))) {
                            // Read, then write through the set: a second holder in between would
                            // lose an increment.
                            long n = c.get(counter).map(v -> Long.parseLong(text(v))).orElse(0L);
                            locks.putIfHeld(counter, bytes(String.valueOf(n + 1)));
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(100, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
            clients.forEach(EtcdLockClient::close);
        }
        assertEquals(String.valueOf(2 * ROUNDS), Etcd.etcdctl("get", counter, "--print-value-only").strip());
        assertEquals(List.of(), queues(a, b));
    }

    // covers: LOCKSET-TOKEN-001
    @Test
    void oneTokenOnEveryKeyAndADeletedMemberLosesTheSet() throws Exception {
        String x = Etcd.uniqueName("ls-x"), y = Etcd.uniqueName("ls-y"), z = Etcd.uniqueName("ls-z"), data = Etcd.uniqueName("ls-data");
        long earlier;
        try (LockGuard lone = client.lock(y, TTL).acquire(WAIT)) {
            earlier = lone.fencingToken();
        }
        LockSet set = client.lockSet(SetMember.names(x, y, z), TTL);
        assertEquals(SetMember.names(x, y, z), set.members());
        LockSetHolding locks = set.acquire(WAIT);
        assertTrue(locks.isHeld());
        assertEquals(List.of(x, y, z), locks.names());
        long token = locks.fencingToken();
        assertTrue(token > earlier, token + " after " + earlier);
        // One Txn put every key: one create revision (the token), one lease.
        for (int i = 0; i < 3; i++) {
            String key = locks.keys().get(i);
            assertTrue(key.startsWith(locks.names().get(i) + "/"), key);
            assertEquals(token, field(key, "create_revision"), key);
            assertEquals(locks.leaseId(), field(key, "lease"), key);
        }
        assertTrue(locks.putIfHeld(data, bytes("1")) > token);
        assertThrows(IllegalArgumentException.class, () -> locks.putIfHeld(z + "/mine", bytes("1")));
        assertTrue(locks.writeIfHeld(Map.of(data, bytes("2")), List.of(data + "-none")) > token);
        // One member's key deleted by someone else: the set is lost, fenced writes go nowhere.
        CompletableFuture<String> lost = new CompletableFuture<>();
        locks.onLost(lost::complete);
        Etcd.etcdctl("del", locks.keys().get(2));
        assertThrows(NotHeldException.class, () -> locks.putIfHeld(data, bytes("3")));
        assertThrows(NotHeldException.class, () -> locks.deleteIfHeld(data));
        assertEquals("key_deleted", lost.get(5, TimeUnit.SECONDS));
        assertFalse(locks.isHeld());
        assertEquals("key_deleted", locks.lostReason().orElseThrow());
        assertEquals("2", Etcd.etcdctl("get", data, "--print-value-only").strip());
        // Closing says the set was lost, and deletes the keys left.
        LockLostException e = assertThrows(LockLostException.class, locks::close);
        assertTrue(e.getMessage().contains("key_deleted"), e.getMessage());
        assertEquals(List.of(), queues(x, y, z));
        assertThrows(NotHeldException.class, locks::release);
        assertThrows(NotHeldException.class, () -> locks.putIfHeld(data, bytes("4")));
    }

    // covers: LOCKSET-MIXED-001
    @Test
    void mixedModesTwoReadersAThirdWithoutAPermitAndAWriter() throws Exception {
        String cfg = Etcd.uniqueName("ls-cfg"), gpus = Etcd.uniqueName("ls-gpus"), jobs = Etcd.uniqueName("ls-jobs");
        List<LockSet> sets = new ArrayList<>();
        for (String j : List.of("a", "b", "c")) {
            sets.add(client.lockSet(List.of(SetMember.read(cfg), SetMember.write(jobs + "/" + j), SetMember.permit(gpus, 2)), TTL));
        }
        assertEquals(SetMember.Mode.PERMIT, sets.get(0).members().get(2).mode());
        assertEquals(2, sets.get(0).members().get(2).permits());
        LockSetHolding s1 = sets.get(0).acquire(WAIT), s2 = sets.get(1).acquire(WAIT); // two readers, two permits
        assertTrue(sets.get(2).tryAcquire().isEmpty()); // no permit left: nothing kept
        assertEquals(2, queues(cfg).size());
        assertEquals(2, queues(gpus).size());
        assertEquals(List.of(), queues(jobs + "/c"));
        // A writer of cfg waits for both reading sets; a reading set after it waits for it.
        CompletableFuture<LockGuard> writer = client.rwlock(cfg, TTL).writeLock().acquireAsync(Duration.ofSeconds(10));
        assertTrue(Etcd.eventually(WAIT, () -> queues(cfg).size() == 3));
        LockSet reading = client.lockSet(List.of(SetMember.read(cfg)), TTL);
        assertThrows(LockTimeoutException.class, () -> reading.acquire(Duration.ofMillis(500)));
        assertFalse(writer.isDone());
        s1.close();
        Thread.sleep(200);
        assertFalse(writer.isDone(), "the writer went in beside a reader");
        s2.close();
        try (LockGuard w = writer.get(5, TimeUnit.SECONDS)) {
            assertTrue(w.isHeld());
            assertThrows(LockTimeoutException.class, () -> reading.acquire(Duration.ofMillis(300)));
        }
        try (LockSetHolding r = reading.acquire(WAIT)) {
            assertTrue(r.isHeld());
        }
        assertEquals(List.of(), queues(cfg, gpus, jobs + "/a", jobs + "/b"));
    }
}
