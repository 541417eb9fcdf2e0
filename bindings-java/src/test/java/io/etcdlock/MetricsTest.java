package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** client.metrics(): the core's snapshot as a record, the same numbers as the Prometheus text. */
class MetricsTest {
    // covers: OBS-METRICS-001 (the structured metrics())
    @Test
    void metricsRecordCountsExactlyAndAgreesWithTheText() throws Exception {
        String name = Etcd.uniqueName("metrics-record");
        LockOptions ttl = LockOptions.ttl(Duration.ofSeconds(10));
        try (EtcdLockClient client = Etcd.client(); EtcdLockClient other = Etcd.client()) {
            Metrics zero = client.metrics();
            assertEquals(0, zero.acquisitions());
            assertEquals(0, zero.lockWaitSeconds().count());
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

            Metrics m = client.metrics();
            String text = client.metricsText();
            assertEquals(4, m.acquisitions());
            assertEquals(1, m.lockTimeouts());
            assertEquals(0, m.wouldBlock());
            assertEquals(0, m.acquireFailures());
            assertEquals(3, m.releases());
            assertEquals(1, m.releaseFailures());
            assertEquals(Map.of("expired", 0L, "revoked", 0L, "key_deleted", 1L, "closed", 0L), m.losses());
            assertEquals(1, m.lossesTotal());
            assertEquals(4, m.lockWaitSeconds().count());
            assertEquals(4, m.lockHoldSeconds().count());
            assertEquals(1, m.leasesAlive(), "the one shared lock lease");
            assertEquals(0, m.requestsInFlight());
            assertEquals(Map.of("keepalive", 0L, "watch", 0L), m.streamReopens());
            assertEquals(Map.of("expired", 0L, "revoked", 0L, "key_deleted", 0L), m.reregistrations());
            assertEquals(0, m.registrationsAlive());
            assertEquals(0, m.discoverySnapshots());

            // Field for field what the strict reader finds in the text (read at nearly the same
            // moment: the counters cannot move, nothing runs on this client now).
            Map<String, Double> s = RuntimeTest.prometheus(text, client.name());
            assertEquals(s.get("etcdlock_lock_acquisitions_total"), (double) m.acquisitions());
            assertEquals(s.get("etcdlock_lock_timeouts_total"), (double) m.lockTimeouts());
            assertEquals(s.get("etcdlock_lock_releases_total"), (double) m.releases());
            assertEquals(s.get("etcdlock_lock_release_failures_total"), (double) m.releaseFailures());
            assertEquals(s.get("etcdlock_lock_losses_total{reason=\"key_deleted\"}"), (double) m.losses().get("key_deleted"));
            assertEquals(s.get("etcdlock_leases_alive"), (double) m.leasesAlive());
            assertEquals(s.get("etcdlock_member_switches_total"), (double) m.memberSwitches());
            assertEquals(s.get("etcdlock_request_retries_total"), (double) m.requestRetries());
            for (String h : List.of("lock_wait_seconds", "lock_hold_seconds")) {
                HistogramSnapshot hist = h.equals("lock_wait_seconds") ? m.lockWaitSeconds() : m.lockHoldSeconds();
                assertEquals(s.get("etcdlock_" + h + "_count"), (double) hist.count());
                assertEquals(s.get("etcdlock_" + h + "_sum"), hist.sum(), 1e-9);
                assertTrue(hist.buckets().size() > 3);
                long previous = 0;
                for (HistogramSnapshot.Bucket b : hist.buckets()) {
                    // The text writes bounds as Rust prints them: 0.005, 1, 2.5.
                    String le = BigDecimal.valueOf(b.upperBound()).stripTrailingZeros().toPlainString();
                    assertEquals(s.get("etcdlock_" + h + "_bucket{le=\"" + le + "\"}"), (double) b.count(), h + " le=" + le);
                    assertTrue(b.count() >= previous, "cumulative");
                    previous = b.count();
                }
                assertTrue(previous <= hist.count());
            }
            // Nothing of the other client's: it has its one acquisition and release.
            Metrics o = other.metrics();
            assertEquals(1, o.acquisitions());
            assertEquals(1, o.releases());
            assertEquals(0, o.lockTimeouts());
        }
    }

    // covers: METRICS-LABEL-001
    @Test
    void eachClientLabelsItsSeriesWithItsName() throws Exception {
        ClientOptions named = ClientOptions.builder().endpoints(Etcd.endpoints().split(",")).name("billing \"eu\"\\1").build();
        try (EtcdLockClient a = Etcd.client(); EtcdLockClient b = Etcd.client(); EtcdLockClient n = EtcdLockClient.connect(named)) {
            assertTrue(a.name().matches("etcdlock-\\d+") && b.name().matches("etcdlock-\\d+"), a.name() + " " + b.name());
            assertNotEquals(a.name(), b.name());
            assertEquals("billing \"eu\"\\1", n.name());
            for (EtcdLockClient c : List.of(a, b, n)) {
                assertEquals(0.0, RuntimeTest.prometheus(c.metricsText(), c.name()).get("etcdlock_lock_acquisitions_total"));
            }
            assertTrue(n.metricsText().contains("etcdlock_leases_alive{client=\"billing \\\"eu\\\"\\\\1\"} 0\n"), n.metricsText());
            assertEquals("etcdlock_lock_acquisitions_total", n.metricFamilies().get(0).name());
        }
        assertThrows(IllegalArgumentException.class, () -> ClientOptions.builder().name(""));
        assertThrows(NullPointerException.class, () -> ClientOptions.builder().name(null));
    }

    // covers: CONN-CLOSED-001 (metrics() after close)
    @Test
    void metricsOfAClosedClientFailClosed() {
        EtcdLockClient client = Etcd.client();
        client.close();
        assertThrows(ClosedException.class, client::metrics);
    }
}
