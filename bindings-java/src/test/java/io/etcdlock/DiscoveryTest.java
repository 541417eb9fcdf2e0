package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Following a service's instances: one set per change, the iterator and the publisher. */
@Timeout(60)
class DiscoveryTest {
    static final RegisterOptions TTL = RegisterOptions.ttl(Duration.ofSeconds(5));

    static Instances next(Discovery d) {
        return d.next(Duration.ofSeconds(5)).orElseThrow(() -> new AssertionError("no set within 5 s"));
    }

    static List<String> names(Instances set) {
        return set.instances().stream().map(i -> i.name() + "=" + i.valueString()).collect(Collectors.toList());
    }

    /** The revision of the next change under the service, seen by a raw watch. */
    static long changed(Watch raw) {
        return raw.next(Duration.ofSeconds(5)).orElseThrow(() -> new AssertionError("no change within 5 s")).revision();
    }

    // covers: DISC-BASIC-001
    @Test
    void oneSetPerChangeInNameOrder() throws Exception {
        String svc = Etcd.uniqueName("disc-basic");
        try (EtcdLockClient client = Etcd.client(); EtcdLockClient other = Etcd.client(); Discovery d = client.discover(svc);
                Watch raw = other.watchPrefix(svc + "/")) {
            Instances empty = next(d);
            assertEquals(List.of(), empty.instances());
            Registration b = other.register(svc, "n2", bytes("b"), TTL);
            Instances one = next(d);
            assertEquals(List.of("n2=b"), names(one));
            assertEquals(changed(raw), one.revision());
            Registration a = other.register(svc, "n1", bytes("a"), TTL);
            Instances two = next(d);
            assertEquals(List.of("n1=a", "n2=b"), names(two), "in name order");
            assertEquals(changed(raw), two.revision());
            // A key below an instance is no instance: no set for it.
            other.put(svc + "/n1/detail", bytes("x"));
            long detail = changed(raw);
            long rev = a.update("a2");
            Instances updated = next(d);
            assertEquals(List.of("n1=a2", "n2=b"), names(updated));
            assertEquals(List.of(rev, rev), List.of(changed(raw), updated.revision()));
            assertTrue(detail < rev);
            a.close();
            Instances afterA = next(d);
            assertEquals(List.of("n2=b"), names(afterA));
            assertEquals(changed(raw), afterA.revision());
            b.close();
            Instances none = next(d);
            assertEquals(List.of(), none.instances());
            assertEquals(changed(raw), none.revision());
            assertEquals(List.of(), client.instances(svc).instances());
            assertTrue(d.next(Duration.ofMillis(200)).isEmpty(), "a set without a change");
            client.delete(svc + "/n1/detail");
        }
    }

    @Test
    void thePublisherAndTheEnds() throws Exception {
        String svc = Etcd.uniqueName("disc-pub");
        try (EtcdLockClient client = Etcd.client()) {
            BlockingQueue<Object> got = new LinkedBlockingQueue<>();
            Discovery published = client.discover(svc);
            published.subscribe(new Flow.Subscriber<Instances>() {
                @Override
                public void onSubscribe(Flow.Subscription s) {
                    s.request(Long.MAX_VALUE);
                }

                @Override
                public void onNext(Instances set) {
                    got.add(names(set));
                }

                @Override
                public void onError(Throwable t) {
                    got.add(t);
                }

                @Override
                public void onComplete() {
                    got.add("complete");
                }
            });
            assertEquals(List.of(), got.poll(5, TimeUnit.SECONDS));
            try (Registration r = client.register(svc, "n1", bytes("a"), TTL)) {
                assertEquals(List.of("n1=a"), got.poll(5, TimeUnit.SECONDS), r.key());
            }
            assertEquals(List.of(), got.poll(5, TimeUnit.SECONDS));
            published.close();
            assertEquals("complete", got.poll(5, TimeUnit.SECONDS));

            // A closed client ends a blocked reader with ClosedException, once.
            EtcdLockClient closing = Etcd.client();
            Discovery d = closing.discover(svc);
            assertEquals(List.of(), next(d).instances());
            CompletableFuture<Boolean> blocked = CompletableFuture.supplyAsync(d::hasNext);
            Thread.sleep(100);
            closing.close();
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> blocked.get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof ClosedException, String.valueOf(e.getCause()));
            assertFalse(d.hasNext());
            d.close();
            assertThrows(ClosedException.class, () -> closing.discover(svc));
        }
    }
}
