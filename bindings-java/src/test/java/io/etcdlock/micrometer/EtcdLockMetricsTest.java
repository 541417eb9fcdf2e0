package io.etcdlock.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.etcdlock.ClientOptions;
import io.etcdlock.EtcdLockClient;
import io.etcdlock.LockOptions;
import io.etcdlock.MetricFamily;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** EtcdLockMetrics: two clients' meters in one real Micrometer registry (SimpleMeterRegistry). */
class EtcdLockMetricsTest {
    private static EtcdLockClient connect(String name) {
        ClientOptions.Builder b = ClientOptions.builder().endpoints(System.getenv("ETCDLOCK_ENDPOINTS").split(",")).timeout(Duration.ofSeconds(5));
        return EtcdLockClient.connect(name == null ? b.build() : b.name(name).build());
    }

    // covers: METRICS-REGISTRY-001
    @Test
    void twoClientsInOneRegistryEachUnderItsName() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (EtcdLockClient orders = connect("orders"); EtcdLockClient other = connect(null)) {
            String lock = "java-test/micrometer-" + UUID.randomUUID().toString().substring(0, 8);
            orders.lock(lock, LockOptions.ttl(Duration.ofSeconds(10))).acquire(Duration.ofSeconds(5)).close();
            new EtcdLockMetrics(orders).bindTo(registry);
            new EtcdLockMetrics(other, Tags.of("app", "test")).bindTo(registry);

            // One meter per series of each client's text, under its name.
            int series = 0;
            for (MetricFamily f : orders.metricFamilies()) {
                series += f.type().equals("histogram") ? 1 : f.values().size();
            }
            Set<String> clients = new TreeSet<>();
            for (Meter m : registry.getMeters()) {
                clients.add(m.getId().getTag("client"));
            }
            assertEquals(new TreeSet<>(Set.of("orders", other.name())), clients);
            assertEquals(2 * series, registry.getMeters().size(), "one meter per series per client");

            FunctionCounter acquired = registry.get("etcdlock.lock.acquisitions").tag("client", "orders").functionCounter();
            assertEquals(1.0, acquired.count());
            assertEquals(0.0, registry.get("etcdlock.lock.acquisitions").tag("client", other.name()).tag("app", "test").functionCounter().count());
            assertEquals(0.0, registry.get("etcdlock.lock.losses").tags("client", "orders", "reason", "expired").functionCounter().count());
            assertEquals(0.0, registry.get("etcdlock.stream.reopens").tags("client", "orders", "stream", "watch").functionCounter().count());
            Gauge leases = registry.get("etcdlock.leases.alive").tag("client", "orders").gauge();
            assertEquals(1.0, leases.value(), "the shared lock lease");
            FunctionTimer wait = registry.get("etcdlock.lock.wait").tag("client", "orders").functionTimer();
            assertEquals(1.0, wait.count());
            assertEquals(orders.metrics().lockWaitSeconds().sum(), wait.totalTime(TimeUnit.SECONDS), 1e-9);
            assertNotNull(registry.get("etcdlock.lock.wait").tag("client", other.name()).functionTimer());
            assertEquals("Acquires that took the lock.", acquired.getId().getDescription());

            // A second client of the same name is the same series to Micrometer: no meter added.
            try (EtcdLockClient twin = connect("orders")) {
                new EtcdLockMetrics(twin).bindTo(registry);
                assertEquals(2 * series, registry.getMeters().size());
            }

            // Read at each look, not copied at binding.
            orders.lock(lock, LockOptions.ttl(Duration.ofSeconds(10))).acquire(Duration.ofSeconds(5)).close();
            assertEquals(2.0, acquired.count());
            assertEquals(2.0, wait.count());
        }
    }
}
