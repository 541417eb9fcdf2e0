package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static io.etcdlock.Etcd.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A Watch as a java.util.concurrent.Flow.Publisher: demand respected, cancel closes, end and errors signalled. */
class WatchPublisherTest {
    /** Records every signal; requests nothing by itself. */
    static final class Recorder implements Flow.Subscriber<WatchEvent> {
        final CompletableFuture<Flow.Subscription> subscription = new CompletableFuture<>();
        final List<WatchEvent> events = new CopyOnWriteArrayList<>();
        final CompletableFuture<Throwable> end = new CompletableFuture<>(); // null: onComplete
        final List<String> threads = new CopyOnWriteArrayList<>();

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription.complete(s);
        }

        @Override
        public void onNext(WatchEvent e) {
            threads.add(Thread.currentThread().getName());
            events.add(e);
        }

        @Override
        public void onError(Throwable t) {
            end.complete(t);
        }

        @Override
        public void onComplete() {
            end.complete(null);
        }

        Flow.Subscription sub() throws Exception {
            return subscription.get(5, TimeUnit.SECONDS);
        }
    }

    // covers: WATCH-BASIC-001 (as a Flow.Publisher)
    @Test
    void deliversOnlyWhatWasRequestedAndCancelClosesTheWatch() throws Exception {
        String p = Etcd.uniqueName("watch-flow");
        try (EtcdLockClient client = Etcd.client()) {
            long before = client.metrics().watchesOpen();
            Watch w = client.watchPrefix(p + "/");
            assertEquals(before + 1, client.metrics().watchesOpen());
            Recorder r = new Recorder();
            w.subscribe(r);
            Flow.Subscription s = r.sub();
            List<Long> revisions = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                revisions.add(client.put(p + "/" + i, bytes("v" + i)));
            }
            Thread.sleep(300); // nothing requested yet: nothing may come
            assertEquals(0, r.events.size(), "delivered without demand");
            s.request(2);
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> r.events.size() == 2));
            Thread.sleep(300);
            assertEquals(2, r.events.size(), "delivered beyond the demand");
            s.request(3);
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> r.events.size() == 5));
            List<Long> seen = new ArrayList<>();
            for (WatchEvent e : r.events) {
                seen.add(e.revision());
            }
            assertEquals(revisions, seen, "in order, no gap");
            assertEquals("v4", text(r.events.get(4).value()));
            assertTrue(r.threads.stream().allMatch(t -> t.startsWith("etcdlock-callback-")), r.threads.toString());
            // A second subscriber is refused; the first goes on.
            Recorder second = new Recorder();
            w.subscribe(second);
            assertInstanceOf(IllegalStateException.class, second.end.get(5, TimeUnit.SECONDS));
            s.request(Long.MAX_VALUE);
            s.cancel();
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), w::isClosed), "cancel() did not close the watch");
            // The core's watch is gone too, not only the Java object.
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> client.metrics().watchesOpen() == before),
                    "the core watch is still open: " + client.metrics().watchesOpen());
            client.put(p + "/after", bytes("x"));
            Thread.sleep(200);
            assertEquals(5, r.events.size());
            assertTrue(!r.end.isDone(), "no signal after cancel");
        }
    }

    // covers: WATCH-COMPACT-001 (as a Flow.Publisher: onError carries the compact revision)
    @Test
    void closeCompletesAndFailuresAreOnError() throws Exception {
        String p = Etcd.uniqueName("watch-flow-end");
        try (EtcdLockClient client = Etcd.client()) {
            Watch w = client.watch(p);
            Recorder r = new Recorder();
            w.subscribe(r);
            r.sub().request(10);
            long rev = client.put(p, bytes("1"));
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> r.events.size() == 1));
            assertEquals(rev, r.events.get(0).revision());
            w.close();
            assertNull(r.end.get(5, TimeUnit.SECONDS), "close() is onComplete");

            // request(0) is onError (rule 3.9), and the watch is closed.
            Watch bad = client.watch(p);
            Recorder rb = new Recorder();
            bad.subscribe(rb);
            rb.sub().request(0);
            assertInstanceOf(IllegalArgumentException.class, rb.end.get(5, TimeUnit.SECONDS));
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), bad::isClosed));

            // A compacted start revision: onError with CompactedException.
            long old = client.put(p, bytes("2"));
            long compactAt = client.put(p, bytes("3"));
            Etcd.etcdctl("compact", Long.toString(compactAt));
            Watch compacted;
            try {
                compacted = client.watch(p, WatchOptions.startRevision(old));
            } catch (CompactedException atOnce) {
                assertEquals(compactAt, atOnce.compactRevision());
                return; // reported at creation: nothing to publish
            }
            Recorder rc = new Recorder();
            compacted.subscribe(rc);
            rc.sub().request(1);
            Throwable t = rc.end.get(5, TimeUnit.SECONDS);
            assertInstanceOf(CompactedException.class, t);
            assertEquals(compactAt, ((CompactedException) t).compactRevision());
            assertEquals(0, rc.events.size());
            compacted.close();
        }
    }
}
