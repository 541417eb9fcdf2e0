package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code QueueOptions.maxProcessing} against a real etcd: a claim whose handler outlives it ends
 * (the lost callback fires, the ack is refused) and the item is claimed again; a task acked in
 * time is untouched; bad limits are refused.
 */
class TaskMaxProcessingTest {
    static EtcdLockClient client;

    @BeforeAll
    static void connect() {
        client = Etcd.client();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    // covers: QUEUE-MAXPROC-001
    @Test
    void aClaimPastMaxProcessingEndsAndItsItemIsClaimedAgain() throws Exception {
        String name = Etcd.uniqueName("q-maxproc");
        QueueOptions opts = QueueOptions.ttl(Duration.ofSeconds(10)).maxProcessing(Duration.ofSeconds(1));
        assertEquals(Optional.of(Duration.ofSeconds(1)), opts.maxProcessing());
        TaskQueue q = client.queue(name, opts);
        q.put(bytes("hung"), PutOptions.defaults().id("hung"));
        Task hung = q.tryClaim().orElseThrow();
        long at = System.nanoTime();
        AtomicReference<String> why = new AtomicReference<>();
        CountDownLatch lost = new CountDownLatch(1);
        hung.onLost(reason -> {
            why.set(reason);
            lost.countDown();
        });
        assertTrue(lost.await(5, TimeUnit.SECONDS), "the claim outlived maxProcessing");
        long tookMs = (System.nanoTime() - at) / 1_000_000;
        assertTrue(tookMs >= 900, "ended after " + tookMs + " ms");
        assertEquals("key_deleted", why.get());
        assertFalse(hung.isHeld());
        try (Task again = q.claim(Duration.ofSeconds(5))) {
            assertEquals(List.of("hung", 2), List.of(again.id(), again.attempts()));
            assertThrows(NotHeldException.class, hung::ack);
        }
        hung.close(); // its failed ack ended it: close only frees it
        // A task acked in time is not touched by its timer.
        q.put(bytes("quick"), PutOptions.defaults().id("quick"));
        try (Task quick = q.claim(Duration.ZERO)) {
            assertEquals("quick", quick.id());
        }
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
    }

    // covers: QUEUE-MAXPROC-001 (bad limits)
    @Test
    void aNegativeOrZeroMaxProcessingIsRefused() {
        String name = Etcd.uniqueName("q-maxproc-input");
        QueueOptions ttl = QueueOptions.ttl(Duration.ofSeconds(10));
        assertEquals(Optional.empty(), ttl.maxProcessing());
        assertThrows(IllegalArgumentException.class, () -> ttl.maxProcessing(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> client.queue(name, ttl.maxProcessing(Duration.ZERO)));
        assertThrows(NullPointerException.class, () -> ttl.maxProcessing(null));
        assertEquals(List.of(), Etcd.keysUnder(name));
    }
}
