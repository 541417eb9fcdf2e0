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
import java.util.NoSuchElementException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Watches read as blocking iterators: basic events, a start revision, a compacted start. */
class WatchTest {
    static final Duration WAIT = Duration.ofSeconds(5);

    /** One event read within 5 s (fails the test otherwise). */
    static WatchEvent next(Watch w) {
        return w.next(WAIT).orElseThrow(() -> new AssertionError("no event within 5 s"));
    }

    static String describe(WatchEvent e) {
        return e.type() + " " + e.key() + "=" + text(e.value());
    }

    // covers: WATCH-BASIC-001
    @Test
    void aKeyAndAPrefixSeePutPutDeleteInOrder() throws Exception {
        String p = Etcd.uniqueName("watch");
        try (EtcdLockClient client = Etcd.client(); Watch key = client.watch(p + "/a");
                Watch prefix = client.watchPrefix(p + "/")) {
            long r1 = client.put(p + "/a", bytes("1"));
            long r2 = client.put(p + "/b", bytes("2"));
            long r3 = client.put(p + "/a", bytes("3"));
            client.delete(p + "/a");
            List<String> seen = new ArrayList<>();
            List<Long> revisions = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                WatchEvent e = next(prefix);
                seen.add(describe(e));
                revisions.add(e.revision());
            }
            assertEquals(List.of("PUT " + p + "/a=1", "PUT " + p + "/b=2", "PUT " + p + "/a=3", "DELETE " + p + "/a="), seen);
            assertEquals(List.of(r1, r2, r3, r3 + 1), revisions, "strictly increasing, the writes' revisions");
            // The key's watch sees only its key, through the Iterator methods.
            assertTrue(key.hasNext());
            WatchEvent first = key.next();
            assertEquals(WatchEvent.Type.PUT, first.type());
            assertEquals(r1, first.revision());
            assertEquals(first.revision(), first.createRevision());
            assertEquals(1, first.version());
            WatchEvent second = next(key);
            assertEquals("PUT " + p + "/a=3", describe(second));
            assertEquals(2, second.version());
            WatchEvent gone = next(key);
            assertEquals(WatchEvent.Type.DELETE, gone.type());
            assertEquals(0, gone.value().length);
            assertEquals(r3 + 1, gone.revision());
            // Nothing more: an empty answer after the timeout.
            long t0 = System.nanoTime();
            assertEquals(Optional.empty(), key.next(Duration.ofMillis(300)));
            assertTrue(System.nanoTime() - t0 >= 250_000_000L, "returned before its timeout");
        }
    }

    // covers: WATCH-BASIC-001 (close from another thread ends a blocked reader; bad input)
    @Test
    void closeEndsABlockedReaderAndBadInputIsRefused() throws Exception {
        String p = Etcd.uniqueName("watch-close");
        EtcdLockClient client = Etcd.client();
        try {
            Watch w = client.watch(p);
            Thread closer = new Thread(() -> {
                try {
                    Thread.sleep(300);
                } catch (InterruptedException e) {
                    return;
                }
                w.close();
            });
            long t0 = System.nanoTime();
            closer.start();
            assertFalse(w.hasNext(), "a closed watch has no next event");
            assertTrue(System.nanoTime() - t0 < 5_000_000_000L);
            closer.join(5000);
            assertTrue(w.isClosed());
            assertThrows(NoSuchElementException.class, w::next);
            assertThrows(NoSuchElementException.class, () -> w.next(Duration.ZERO));
            w.close(); // idempotent
            assertThrows(NullPointerException.class, () -> client.watch(null));
            assertThrows(NullPointerException.class, () -> client.watchPrefix(p, null));
            assertThrows(IllegalArgumentException.class, () -> client.watch(""));
            assertThrows(IllegalArgumentException.class, () -> WatchOptions.startRevision(0));
            assertThrows(IllegalArgumentException.class, () -> WatchOptions.startRevision(-5));
            try (Watch ok = client.watch(p)) {
                assertThrows(IllegalArgumentException.class, () -> ok.next(Duration.ofMillis(-1)));
                assertThrows(NullPointerException.class, () -> ok.next(null));
            }
            // The client closed: an open watch fails with ClosedException (once), new ones too.
            Watch open = client.watch(p);
            client.close();
            assertThrows(ClosedException.class, () -> open.next(WAIT));
            assertFalse(open.hasNext());
            open.close();
            assertThrows(ClosedException.class, () -> client.watch(p));
        } finally {
            client.close();
        }
    }

    // covers: WATCH-START-001
    @Test
    void aStartRevisionReplaysTheHistoryFromThere() throws Exception {
        String p = Etcd.uniqueName("watch-start");
        try (EtcdLockClient client = Etcd.client()) {
            long r1 = client.put(p + "/x", bytes("one"));
            client.put(p + "/y", bytes("two"));
            client.delete(p + "/x");
            try (Watch w = client.watchPrefix(p + "/", WatchOptions.startRevision(r1).prevKv(true))) {
                List<String> seen = new ArrayList<>();
                List<Long> revisions = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    WatchEvent e = next(w);
                    seen.add(describe(e));
                    revisions.add(e.revision());
                    if (e.type() == WatchEvent.Type.DELETE) {
                        assertEquals("one", text(e.prevValue().orElseThrow()), "prevKv: the deleted value");
                    }
                }
                assertEquals(List.of("PUT " + p + "/x=one", "PUT " + p + "/y=two", "DELETE " + p + "/x="), seen);
                assertEquals(List.of(r1, r1 + 1, r1 + 2), revisions);
                // Then live changes after the replay, with no gap.
                long r4 = client.put(p + "/z", bytes("live"));
                WatchEvent live = next(w);
                assertEquals(r4, live.revision());
                assertEquals("live", text(live.value()));
            }
            // From the middle of the history: the key's watch starts at its second write.
            long k1 = client.put(p + "/k", bytes("a"));
            long k2 = client.put(p + "/k", bytes("b"));
            try (Watch w = client.watch(p + "/k", WatchOptions.startRevision(k2))) {
                WatchEvent e = next(w);
                assertEquals(k2, e.revision());
                assertTrue(k2 > k1);
                assertEquals("b", text(e.value()));
            }
        }
    }

    // covers: WATCH-COMPACT-001
    @Test
    void aCompactedStartRevisionFailsWithTheCompactRevision() throws Exception {
        String p = Etcd.uniqueName("watch-compact");
        try (EtcdLockClient client = Etcd.client()) {
            long old = client.put(p, bytes("1"));
            client.put(p, bytes("2"));
            long compactAt = client.put(p, bytes("3"));
            Etcd.etcdctl("compact", Long.toString(compactAt));
            CompactedException e;
            // The core may report it when the watch is created or at its first read.
            Watch[] opened = new Watch[1];
            e = assertThrows(CompactedException.class, () -> {
                opened[0] = client.watch(p, WatchOptions.startRevision(old));
                next(opened[0]);
            });
            assertEquals("COMPACTED", e.kind());
            assertEquals(compactAt, e.compactRevision(), e.getMessage());
            if (opened[0] != null) {
                // The watch has ended: no event, no second exception.
                assertFalse(opened[0].hasNext());
                assertThrows(NoSuchElementException.class, opened[0]::next);
                opened[0].close();
            }
            // From the compact revision itself, history is still there.
            try (Watch w = client.watch(p, WatchOptions.startRevision(compactAt))) {
                assertEquals("3", text(next(w).value()));
            }
        }
    }
}
