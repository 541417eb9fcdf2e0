package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
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

    /** The samples of a Prometheus text as the strict reader (tests/prometheus_text.py) reads it. */
    /** The samples of a client's text, each series labelled {@code client="<client>"} first (left out of the keys). */
    static Map<String, Double> prometheus(String text, String client) throws Exception {
        Process p = new ProcessBuilder("python3", "../tests/prometheus_text.py", "--lines", "--client", client).start();
        try (var in = p.getOutputStream()) {
            in.write(text.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(20, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), "the strict reader refused the text: " + err + "\n" + text);
        Map<String, Double> samples = new HashMap<>();
        for (String line : out.split("\n")) {
            int sp = line.lastIndexOf(' ');
            if (sp > 0) {
                samples.put(line.substring(0, sp), Double.parseDouble(line.substring(sp + 1).replace("+Inf", "Infinity")));
            }
        }
        return samples;
    }

    // covers: OBS-METRICS-001
    @Test
    void metricsCountExactly() throws Exception {
        String name = Etcd.uniqueName("metrics");
        LockOptions ttl = LockOptions.ttl(Duration.ofSeconds(10));
        try (EtcdLockClient client = Etcd.client(); EtcdLockClient other = Etcd.client()) {
            assertEquals(0.0, prometheus(client.metricsText(), client.name()).get("etcdlock_lock_acquisitions_total"));
            for (int i = 0; i < 3; i++) {
                client.lock(name, ttl).acquire(Duration.ofSeconds(5)).close();
            }
            try (LockGuard held = other.lock(name, ttl).acquire(Duration.ofSeconds(5))) {
                assertTrue(held.isHeld());
                assertThrows(LockTimeoutException.class, () -> client.lock(name, ttl).acquire(Duration.ofMillis(200)));
            }
            LockGuard lost = client.lock(name, ttl).acquire(Duration.ofSeconds(5));
            Etcd.etcdctl("del", lost.key());
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> !lost.isHeld()));
            assertThrows(NotHeldException.class, lost::release);
            Map<String, Double> s = prometheus(client.metricsText(), client.name());
            Map<String, Double> expected = new TreeMap<>(Map.of(
                    "etcdlock_lock_acquisitions_total", 4.0,
                    "etcdlock_lock_timeouts_total", 1.0,
                    "etcdlock_lock_releases_total", 3.0,
                    "etcdlock_lock_release_failures_total", 1.0,
                    "etcdlock_lock_losses_total{reason=\"key_deleted\"}", 1.0,
                    "etcdlock_lock_losses_total{reason=\"expired\"}", 0.0,
                    "etcdlock_lock_wait_seconds_count", 4.0,
                    "etcdlock_lock_hold_seconds_count", 4.0));
            Map<String, Double> actual = new TreeMap<>();
            expected.keySet().forEach(k -> actual.put(k, s.get(k)));
            assertEquals(expected, actual);
            // The other client's hold is its own.
            assertEquals(1.0, prometheus(other.metricsText(), other.name()).get("etcdlock_lock_acquisitions_total"));
        }
    }
}
