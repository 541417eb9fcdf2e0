package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static io.etcdlock.Etcd.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** client.inspect(name): the queue as etcd has it, checked against etcdctl. */
class InspectTest {
    static final Duration TTL = Duration.ofSeconds(10);

    /** One queue key as etcdctl shows it: key, create revision, lease, value. */
    record Raw(String key, long createRevision, long lease, String value) {}

    /** The keys under {@code name/}, oldest first, read by etcdctl ({@code -w fields}). */
    static List<Raw> etcdctlQueue(String name) {
        String out = Etcd.etcdctl("get", "--prefix", name + "/", "--sort-by=CREATE", "--order=ASCEND", "-w", "fields");
        List<Raw> raws = new ArrayList<>();
        Matcher m = Pattern.compile("\"Key\" : \"(.*)\"\\n\"CreateRevision\" : (\\d+)\\n\"ModRevision\" : \\d+\\n"
                + "\"Version\" : \\d+\\n\"Value\" : \"(.*)\"\\n\"Lease\" : (\\d+)").matcher(out);
        while (m.find()) {
            raws.add(new Raw(m.group(1), Long.parseLong(m.group(2)), Long.parseLong(m.group(4)), m.group(3)));
        }
        return raws;
    }

    static void assertMatches(Raw raw, QueueEntry e) {
        assertEquals(raw.key(), e.key());
        assertEquals(raw.createRevision(), e.fencingToken());
        assertEquals(raw.lease(), e.leaseId());
        assertEquals(raw.value(), text(e.value()));
        assertEquals("", e.mode());
        long ttl = e.ttlSeconds().orElseThrow();
        assertTrue(ttl > 0 && ttl <= 10, "remaining TTL " + ttl);
    }

    // covers: LOCK-INSPECT-001
    @Test
    void holderAndWaitersInQueueOrderAsEtcdctlShowsThem() throws Exception {
        String name = Etcd.uniqueName("inspect");
        try (EtcdLockClient a = Etcd.client(); EtcdLockClient b = Etcd.client()) {
            LockState free = a.inspect(name);
            assertTrue(free.holder().isEmpty() && free.holders().isEmpty() && free.waiters().isEmpty(), free.toString());
            assertTrue(free.revision() > 0);

            LockGuard holder = a.lock(name, LockOptions.ttl(TTL).value(bytes("holder"))).acquire(Duration.ofSeconds(5));
            // Three waiters from the two clients, one without a value, each queued before the next.
            EtcdLockClient[] clients = {b, a, b};
            String[] values = {"w1", null, "w3"};
            List<CompletableFuture<LockGuard>> waiting = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                LockOptions o = values[i] == null ? LockOptions.ttl(TTL) : LockOptions.ttl(TTL).value(bytes(values[i]));
                waiting.add(clients[i].lock(name, o).acquireAsync(Duration.ofSeconds(30)));
                int keys = i + 2;
                assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> Etcd.keysUnder(name + "/").size() == keys));
            }
            LockState s = a.inspect(name);
            List<Raw> raw = etcdctlQueue(name);
            assertEquals(4, raw.size(), raw.toString());
            assertEquals(1, s.holders().size());
            assertEquals(3, s.waiters().size());
            assertMatches(raw.get(0), s.holder().orElseThrow());
            assertEquals(holder.key(), s.holder().orElseThrow().key());
            assertEquals(holder.fencingToken(), s.holder().orElseThrow().fencingToken());
            assertEquals("holder", text(s.holder().orElseThrow().value()));
            for (int i = 0; i < 3; i++) {
                assertMatches(raw.get(i + 1), s.waiters().get(i));
                assertEquals(values[i] == null ? "" : values[i], text(s.waiters().get(i).value()));
            }
            assertTrue(s.revision() >= raw.get(3).createRevision());
            assertThrows(UnsupportedOperationException.class, () -> s.waiters().clear());

            // The waiters are served in that order, with those tokens.
            holder.release();
            for (int i = 0; i < 3; i++) {
                LockGuard g = waiting.get(i).get(10, TimeUnit.SECONDS);
                assertEquals(s.waiters().get(i).fencingToken(), g.fencingToken(), "waiter " + i);
                assertEquals(s.waiters().get(i).key(), g.key());
                for (int j = i + 1; j < 3; j++) {
                    assertTrue(!waiting.get(j).isDone(), "waiter " + j + " served before waiter " + i);
                }
                g.release();
            }
            LockState after = b.inspect(name);
            assertTrue(after.holder().isEmpty() && after.waiters().isEmpty(), after.toString());
        }
    }

    // covers: LOCK-INSPECT-001 (bad input: nothing sent)
    @Test
    void badNamesAndAClosedClientAreRefused() {
        EtcdLockClient client = Etcd.client();
        assertThrows(NullPointerException.class, () -> client.inspect(null));
        assertThrows(IllegalArgumentException.class, () -> client.inspect(""));
        assertThrows(IllegalArgumentException.class, () -> client.inspect("ends/"));
        client.close();
        assertThrows(ClosedException.class, () -> client.inspect("x"));
    }
}
