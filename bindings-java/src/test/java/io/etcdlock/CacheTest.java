package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Prefix caches against the test etcd: the copy at its revision is etcd's, read-your-writes with
 * waitFor, events with previous values, a resync after a compaction while cut off, close, a
 * closed client, bad arguments. (Loading, following and resyncing are the core's:
 * core/tests/integration/cache.rs.)
 */
@Timeout(60)
class CacheTest {
    /** The copy as etcdctl prints a prefix ("key\nvalue\n" per key). */
    static String text(CacheSnapshot s) {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, KeyValue> e : s.entries().entrySet()) {
            b.append(e.getKey()).append('\n').append(e.getValue().valueString()).append('\n');
        }
        return b.toString();
    }

    /** The copy is etcd's {@code get --prefix --rev=R} at the copy's revision R. */
    static void assertCopyIsEtcds(Cache cache) {
        CacheSnapshot s = cache.snapshot();
        assertEquals(Etcd.etcdctl("get", "--prefix", cache.prefix(), "--rev=" + s.revision()), text(s));
    }

    static CacheEvent next(CacheEvents events) {
        return events.next(Duration.ofSeconds(10)).orElseThrow(() -> new AssertionError("no event within 10 s"));
    }

    static void assertEvent(CacheEvent e, CacheEvent.Type type, String key, String value, String prev) {
        assertEquals(type + " " + key + "=" + value + " prev " + prev, e.type() + " " + e.key() + "=" + e.valueString() + " prev "
                + e.prevValue().map(Etcd::text).orElse(null));
    }

    // covers: CACHE-READ-001 (loaded at one revision: the copy, its gets and its size are etcd's
    // `get --prefix --rev=R`; a key outside is not in it)
    @Test
    void theCopyIsEtcdsStateAtItsRevision() {
        String base = Etcd.uniqueName("cache-load");
        String prefix = base + "/";
        try (EtcdLockClient client = Etcd.client()) {
            for (int i = 0; i < 25; i++) {
                client.put(String.format("%sk%02d", prefix, i), bytes(i % 2 == 0 ? "even" : "odd"));
            }
            long again = client.put(prefix + "k03", bytes("again"));
            client.put(base + "-outside", bytes("x"));
            try (Cache cache = client.cache(prefix)) {
                assertEquals(prefix, cache.prefix());
                assertEquals(25, cache.size());
                assertCopyIsEtcds(cache);
                KeyValue kv = cache.get(prefix + "k03").orElseThrow();
                assertEquals("again", kv.valueString());
                assertEquals(prefix + "k03", kv.key());
                assertEquals(List.of(again, 2L, 0L), List.of(kv.modRevision(), kv.version(), kv.lease()));
                assertTrue(kv.createRevision() < again && again <= cache.revision());
                assertTrue(cache.get(base + "-outside").isEmpty());
                CacheSnapshot s = cache.snapshot();
                assertEquals(kv, s.get(prefix + "k03").orElseThrow());
                assertEquals(prefix + "k00", s.entries().keySet().iterator().next(), "in key order");
            }
        }
    }

    // covers: CACHE-READ-001 (read-your-writes with waitFor and waitForAsync; events in order
    // with revisions and previous values, a delete, none for a key outside; waits timing out)
    @Test
    void waitForAndEventsInOrder() throws Exception {
        String base = Etcd.uniqueName("cache-events");
        String prefix = base + "/";
        String a = prefix + "a";
        try (EtcdLockClient client = Etcd.client(); Cache cache = client.cache(prefix); CacheEvents events = cache.events()) {
            assertTrue(events.next(Duration.ZERO).isEmpty());
            long r1 = client.put(a, bytes("1"));
            assertTrue(cache.waitFor(r1, Duration.ofSeconds(5)));
            assertEquals("1", cache.get(a).orElseThrow().valueString());
            long r2 = client.put(a, bytes("2"));
            assertTrue(cache.waitForAsync(r2, Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS));
            assertEquals("2", cache.get(a).orElseThrow().valueString());
            client.delete(a);
            client.put(base + "-outside", bytes("x"));

            CacheEvent e1 = next(events);
            assertEvent(e1, CacheEvent.Type.PUT, a, "1", null);
            assertEquals(r1, e1.revision());
            CacheEvent e2 = next(events);
            assertEvent(e2, CacheEvent.Type.PUT, a, "2", "1");
            assertEquals(r2, e2.revision());
            CacheEvent e3 = next(events);
            assertEvent(e3, CacheEvent.Type.DELETE, a, "", "2");
            assertTrue(e3.revision() > r2);
            assertTrue(events.next(Duration.ofMillis(300)).isEmpty(), "no event for a key outside");
            assertTrue(cache.waitFor(e3.revision(), Duration.ZERO));
            assertTrue(cache.get(a).isEmpty());

            long t0 = System.nanoTime();
            assertFalse(cache.waitFor(e3.revision() + 1000, Duration.ofMillis(200)));
            assertTrue(System.nanoTime() - t0 >= 190_000_000L);
            assertFalse(cache.waitForAsync(e3.revision() + 1000, Duration.ofMillis(100)).get(10, TimeUnit.SECONDS));
            assertCopyIsEtcds(cache);

            // A for-each loop over a stream of its own.
            long rb = client.put(prefix + "b", bytes("1"));
            assertTrue(cache.waitFor(rb, Duration.ofSeconds(5))); // out before the stream is made
            try (CacheEvents more = cache.events()) {
                client.put(prefix + "c", bytes("1"));
                for (CacheEvent e : more) {
                    assertEvent(e, CacheEvent.Type.PUT, prefix + "c", "1", null);
                    break;
                }
            }
            assertEvent(next(events), CacheEvent.Type.PUT, prefix + "b", "1", null);
        }
    }

    // covers: CACHE-RESYNC-001 (cut off by CutProxy while keys are deleted, re-created, changed and
    // created and the history compacted: the differences as events, then RESYNCED; the copy is
    // etcd's; later writes arrive)
    @Test
    void aResyncAfterACompactionWhileCutOff() throws Exception {
        String prefix = Etcd.uniqueName("cache-resync") + "/";
        try (CutProxy proxy = new CutProxy(Etcd.endpoints()); EtcdLockClient direct = Etcd.client();
                EtcdLockClient cutOff = EtcdLockClient.connect(ClientOptions.builder().endpoints(proxy.endpoint())
                        .timeout(Duration.ofSeconds(5)).build())) {
            for (String k : List.of("a", "b", "c")) {
                direct.put(prefix + k, bytes("1"));
            }
            try (Cache cache = cutOff.cache(prefix); CacheEvents events = cache.events()) {
                assertEquals(3, cache.size());
                proxy.cut(); // the cache hears nothing from here
                direct.delete(prefix + "a");
                direct.put(prefix + "a", bytes("2"));
                direct.put(prefix + "b", bytes("2"));
                direct.delete(prefix + "c");
                long head = direct.put(prefix + "d", bytes("1"));
                Etcd.etcdctl("compact", Long.toString(head));
                proxy.restore();

                assertTrue(cache.waitFor(head, Duration.ofSeconds(30)));
                List<String> got = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    CacheEvent e = next(events);
                    assertTrue(e.revision() >= head, e.toString());
                    got.add(e.type() + " " + e.key().replace(prefix, "") + "=" + e.valueString() + " prev "
                            + e.prevValue().map(Etcd::text).orElse("-"));
                }
                assertEquals(List.of("DELETE a= prev 1", "PUT a=2 prev -", "PUT b=2 prev 1", "DELETE c= prev 1", "PUT d=1 prev -",
                        "RESYNCED = prev -"), got);
                assertCopyIsEtcds(cache);
                // And it follows on from there.
                long rev = direct.put(prefix + "e", bytes("1"));
                assertTrue(cache.waitFor(rev, Duration.ofSeconds(10)));
                CacheEvent e = next(events);
                assertEvent(e, CacheEvent.Type.PUT, prefix + "e", "1", null);
                assertEquals(rev, e.revision());
            }
        }
    }

    // covers: CACHE-CLOSE-001 (a close from another thread ends a blocked waitFor with
    // ClosedException and the streams; later calls throw ClosedException; a stream's own close)
    @Test
    void closeWakesWaitersAndEndsTheStreams() throws Exception {
        String prefix = Etcd.uniqueName("cache-close") + "/";
        try (EtcdLockClient client = Etcd.client()) {
            Cache cache = client.cache(prefix);
            CacheEvents events = cache.events();
            CacheEvents other = cache.events();
            CompletableFuture<Boolean> closedStream = CompletableFuture.supplyAsync(other::hasNext);
            Thread.sleep(200);
            other.close();
            assertFalse(closedStream.get(5, TimeUnit.SECONDS), "a closed stream has ended");

            long far = cache.revision() + 1000;
            CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> cache.waitFor(far, Duration.ofMinutes(1)));
            CompletableFuture<Boolean> reading = CompletableFuture.supplyAsync(events::hasNext);
            CompletableFuture<Boolean> async = cache.waitForAsync(far, Duration.ofMinutes(1));
            Thread.sleep(200);
            cache.close();
            ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(5, TimeUnit.SECONDS));
            assertInstanceOf(ClosedException.class, e.getCause());
            e = assertThrows(ExecutionException.class, () -> async.get(5, TimeUnit.SECONDS));
            assertInstanceOf(ClosedException.class, e.getCause());
            assertFalse(reading.get(5, TimeUnit.SECONDS), "the cache's stream ends with it");
            assertTrue(cache.isClosed());
            assertThrows(ClosedException.class, () -> cache.get(prefix + "a"));
            assertThrows(ClosedException.class, cache::snapshot);
            assertThrows(ClosedException.class, cache::revision);
            assertThrows(ClosedException.class, cache::events);
            assertThrows(ClosedException.class, () -> cache.waitFor(1, Duration.ZERO));
            e = assertThrows(ExecutionException.class, () -> cache.waitForAsync(1, Duration.ZERO).get(5, TimeUnit.SECONDS));
            assertInstanceOf(ClosedException.class, e.getCause());
            cache.close(); // idempotent
            events.close();
        }
    }

    // covers: CACHE-CLOSE-001 (a cache outliving its client: a blocked waitFor, a blocked reader
    // and every call throw ClosedException, after the events received before; cache() on the
    // closed client too)
    @Test
    void aClosedClientsCacheThrowsClosed() throws Exception {
        String prefix = Etcd.uniqueName("cache-closed") + "/";
        try (EtcdLockClient writer = Etcd.client()) {
            EtcdLockClient client = Etcd.client();
            try (Cache cache = client.cache(prefix); CacheEvents events = cache.events()) {
                long rev = writer.put(prefix + "k", bytes("v"));
                assertTrue(cache.waitFor(rev, Duration.ofSeconds(5)));
                CacheEvents quiet = cache.events(); // made after the put: nothing to read
                CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> cache.waitFor(rev + 1000, Duration.ofMinutes(1)));
                CompletableFuture<Boolean> reading = CompletableFuture.supplyAsync(quiet::hasNext);
                Thread.sleep(200);
                client.close();
                ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(5, TimeUnit.SECONDS));
                assertInstanceOf(ClosedException.class, e.getCause());
                e = assertThrows(ExecutionException.class, () -> reading.get(5, TimeUnit.SECONDS));
                assertInstanceOf(ClosedException.class, e.getCause());
                quiet.close();
                assertEvent(next(events), CacheEvent.Type.PUT, prefix + "k", "v", null); // received before
                assertThrows(ClosedException.class, events::hasNext);
                assertFalse(events.hasNext(), "ended after the exception");
                assertThrows(ClosedException.class, () -> cache.get(prefix + "k"));
                assertThrows(ClosedException.class, cache::snapshot);
                assertThrows(ClosedException.class, cache::events);
                assertThrows(ClosedException.class, () -> cache.waitFor(rev, Duration.ZERO));
                assertThrows(ClosedException.class, () -> client.cache(prefix));
            }
        }
    }

    // covers: CACHE-CLOSE-001 (null and negative arguments: NullPointerException and
    // IllegalArgumentException before anything is sent)
    @Test
    void badArguments() {
        try (EtcdLockClient client = Etcd.client(); Cache cache = client.cache(Etcd.uniqueName("cache-args") + "/")) {
            assertThrows(NullPointerException.class, () -> client.cache(null));
            assertThrows(NullPointerException.class, () -> cache.get(null));
            assertThrows(NullPointerException.class, () -> cache.waitFor(1, null));
            assertThrows(NullPointerException.class, () -> cache.waitForAsync(1, null));
            assertThrows(IllegalArgumentException.class, () -> cache.waitFor(1, Duration.ofMillis(-1)));
            assertThrows(IllegalArgumentException.class, () -> cache.waitForAsync(1, Duration.ofMillis(-1)));
            assertTrue(cache.get("").isEmpty());
            assertEquals(0, cache.snapshot().size());
        }
    }
}
