package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Following an election's leader: the iterator, the publisher, the end at close. */
@Timeout(60)
class ElectionObserverTest {
    static final Duration TTL = Duration.ofSeconds(10);
    static final Duration WAIT = Duration.ofSeconds(10);

    /** The next state, within 10 s. */
    static Optional<Leader> next(ElectionObserver o) {
        return o.next(WAIT).orElseThrow(() -> new AssertionError("no change within 10 s"));
    }

    // covers: ELECT-OBSERVE-001, ELECT-OBSERVE-NOLEADER-001
    @Test
    void eachLeaderAndProclamationInOrderThenNoLeaderThenClosed() throws Exception {
        String name = Etcd.uniqueName("observe");
        EtcdLockClient watcher = Etcd.client();
        try (EtcdLockClient client = Etcd.client(); EtcdLockClient other = Etcd.client()) {
            ElectionObserver observer = watcher.election(name, TTL).observe();
            assertEquals(Optional.empty(), next(observer), "the current state (nobody) first");
            Leadership first = client.election(name, TTL).campaign("one", WAIT);
            Leader l1 = next(observer).orElseThrow();
            assertEquals(List.of(first.key(), "one"), List.of(l1.key(), l1.valueString()));
            CompletableFuture<Leadership> second = other.election(name, TTL).campaignAsync(Etcd.bytes("two"), WAIT);
            assertTrue(Etcd.eventually(WAIT, () -> Etcd.keysUnder(name + "/").size() == 2));
            assertEquals(Optional.empty(), observer.next(Duration.ofMillis(300)), "a new candidate is no change");
            first.proclaim("one, proclaimed");
            Leader l2 = next(observer).orElseThrow();
            assertEquals(List.of(first.key(), "one, proclaimed", first.fencingToken()), List.of(l2.key(), l2.valueString(), l2.revision()));
            first.resign();
            Leadership secondLeads = second.get(10, TimeUnit.SECONDS);
            Leader l3 = next(observer).orElseThrow();
            assertEquals(List.of(secondLeads.key(), "two"), List.of(l3.key(), l3.valueString()));
            // ELECT-OBSERVE-NOLEADER-001: the last candidate goes; then the client closes.
            secondLeads.resign();
            assertEquals(Optional.empty(), next(observer), "no leader is reported");
            CompletableFuture<Boolean> blocked = CompletableFuture.supplyAsync(observer::hasNext);
            Thread.sleep(100);
            watcher.close();
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> blocked.get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof ClosedException, String.valueOf(e.getCause()));
            assertFalse(observer.hasNext(), "the observer has ended");
            observer.close();
        } finally {
            watcher.close();
        }
    }

    @Test
    void closeEndsABlockedReaderAndThePublisherDeliversOnDemand() throws Exception {
        String name = Etcd.uniqueName("observe-pub");
        try (EtcdLockClient client = Etcd.client()) {
            Election election = client.election(name, TTL);
            ElectionObserver reader = election.observe();
            assertEquals(Optional.empty(), next(reader));
            CompletableFuture<Boolean> blocked = CompletableFuture.supplyAsync(reader::hasNext);
            Thread.sleep(100);
            reader.close();
            assertFalse(blocked.get(10, TimeUnit.SECONDS), "close did not end the blocked reader");
            assertThrows(java.util.NoSuchElementException.class, reader::next);

            List<Optional<Leader>> got = new CopyOnWriteArrayList<>();
            CountDownLatch one = new CountDownLatch(1);
            CountDownLatch two = new CountDownLatch(2);
            CountDownLatch completed = new CountDownLatch(1);
            ElectionObserver published = election.observe();
            published.subscribe(new Flow.Subscriber<Optional<Leader>>() {
                @Override
                public void onSubscribe(Flow.Subscription s) {
                    s.request(2);
                }

                @Override
                public void onNext(Optional<Leader> item) {
                    got.add(item);
                    one.countDown();
                    two.countDown();
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onComplete() {
                    completed.countDown();
                }
            });
            assertTrue(one.await(10, TimeUnit.SECONDS), "no first state");
            try (Leadership leading = election.campaign("x", WAIT)) {
                assertTrue(two.await(10, TimeUnit.SECONDS), "got " + got);
                assertEquals(Optional.empty(), got.get(0));
                assertEquals(leading.key(), got.get(1).orElseThrow().key());
                leading.proclaim("y");
                Thread.sleep(200);
                assertEquals(2, got.size(), "more than requested");
            }
            published.close();
            assertTrue(completed.await(10, TimeUnit.SECONDS), "close is onComplete");
        }
    }
}
