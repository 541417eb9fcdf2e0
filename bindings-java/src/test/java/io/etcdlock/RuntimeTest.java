package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Process-level behaviour: one runtime, handles nobody closed, metrics. */
class RuntimeTest {
    /** The native threads named etcdlock-rt-* in this process (from /proc: most are not Java threads). */
    static long runtimeThreads() throws IOException {
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            return tasks.filter(t -> {
                try {
                    return Files.readString(t.resolve("comm")).startsWith("etcdlock-rt");
                } catch (IOException gone) {
                    return false;
                }
            }).count();
        }
    }

    // covers: RT-ONE-001
    @Test
    void manyClientsShareOneRuntime() throws Exception {
        Etcd.client().close();
        long before = runtimeThreads();
        assertTrue(before >= 1, "no runtime thread found");
        List<EtcdLockClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 10; i++) {
                EtcdLockClient c = Etcd.client();
                clients.add(c);
                c.lock(Etcd.uniqueName("rt"), LockOptions.ttl(Duration.ofSeconds(5))).acquire(Duration.ofSeconds(5)).close();
            }
            assertEquals(before, runtimeThreads());
        } finally {
            clients.forEach(EtcdLockClient::close);
        }
    }

    /** A lock whose guard and client nobody closed: the Cleaner frees them, which releases it. */
    @Test
    void unclosedHandlesAreCleaned() throws Exception {
        String name = Etcd.uniqueName("cleaner");
        abandon(name);
        assertEquals(1, Etcd.keysUnder(name + "/").size());
        boolean gone = false;
        for (int i = 0; i < 100 && !gone; i++) {
            System.gc();
            gone = Etcd.keysUnder(name + "/").isEmpty();
            if (!gone) {
                Thread.sleep(50);
            }
        }
        assertTrue(gone, "the abandoned lock is still held: its handles were not cleaned");
    }

    private static void abandon(String name) throws InterruptedException {
        EtcdLockClient client = Etcd.client();
        client.lock(name, LockOptions.ttl(Duration.ofSeconds(30))).acquire(Duration.ofSeconds(5));
    }

    // covers: OBS-METRICS-001 (acquisitions, timeouts, releases, losses in the Prometheus text)
    @Test
    void metricsCount() throws Exception {
        String name = Etcd.uniqueName("metrics");
        LockOptions ttl = LockOptions.ttl(Duration.ofSeconds(10));
        try (EtcdLockClient client = Etcd.client(); EtcdLockClient other = Etcd.client()) {
            for (int i = 0; i < 3; i++) {
                client.lock(name, ttl).acquire(Duration.ofSeconds(5)).close();
            }
            try (LockGuard held = other.lock(name, ttl).acquire(Duration.ofSeconds(5))) {
                assertTrue(held.isHeld());
                try {
                    client.lock(name, ttl).acquire(Duration.ofMillis(200));
                } catch (LockTimeoutException expected) {
                    // counted
                }
            }
            LockGuard lost = client.lock(name, ttl).acquire(Duration.ofSeconds(5));
            Etcd.etcdctl("del", lost.key());
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> !lost.isHeld()));
            try {
                lost.release();
            } catch (NotHeldException expected) {
                // the failed release
            }
            String text = client.metricsText();
            assertTrue(text.contains("etcdlock_lock_acquisitions_total 4"), text);
            assertTrue(text.contains("etcdlock_lock_timeouts_total 1"), text);
            assertTrue(text.contains("etcdlock_lock_releases_total 3"), text);
            assertTrue(text.contains("etcdlock_lock_release_failures_total 1"), text);
            assertTrue(text.contains("etcdlock_lock_losses_total{reason=\"key_deleted\"} 1"), text);
        }
    }
}
