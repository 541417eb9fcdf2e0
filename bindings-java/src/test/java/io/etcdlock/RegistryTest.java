package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Registrations: listing, updates, takeover, recovery from a lost lease, the metrics. */
@Timeout(60)
class RegistryTest {
    static final RegisterOptions TTL = RegisterOptions.ttl(Duration.ofSeconds(5));

    static String hex(long id) {
        return Long.toHexString(id);
    }

    // covers: REG-BASIC-001
    @Test
    void registerUpdateTakeOverAndClose() throws Exception {
        String svc = Etcd.uniqueName("reg-basic");
        try (EtcdLockClient client = Etcd.client(); EtcdLockClient other = Etcd.client()) {
            Registration reg = client.register(svc, "n1", bytes("10.0.0.1:80"), TTL);
            assertEquals(svc + "/n1", reg.key());
            assertTrue(reg.isRegistered());
            Instance listed = client.instances(svc).get("n1").orElseThrow();
            assertEquals("10.0.0.1:80", listed.valueString());
            assertEquals(reg.leaseId(), listed.lease());
            long rev = reg.update("10.0.0.1:81");
            Instance updated = other.instances(svc).get("n1").orElseThrow();
            assertEquals(List.of("10.0.0.1:81", rev), List.of(updated.valueString(), updated.modRevision()));
            long firstLease = reg.leaseId();
            List<Long> leasesBefore = Etcd.leases();
            EtcdLockException taken = assertThrows(EtcdLockException.class, () -> other.register(svc, "n1", bytes("x"), TTL));
            assertEquals("WOULD_BLOCK", taken.kind());
            assertEquals(leasesBefore.size(), Etcd.leases().size(), "the refused registration left a lease");
            CountDownLatch takenOver = new CountDownLatch(1);
            reg.onTakenOver(takenOver::countDown);
            Registration taker = other.register(svc, "n1", bytes("10.0.0.2:80"), TTL.replace(true));
            assertTrue(takenOver.await(5, TimeUnit.SECONDS), "no TakenOver");
            assertEquals("10.0.0.2:80", client.instances(svc).get("n1").orElseThrow().valueString());
            assertThrows(NotHeldException.class, () -> reg.update("mine again"));
            long takerLease = taker.leaseId();
            reg.close();
            assertEquals(List.of(svc + "/n1"), Etcd.keysUnder(svc + "/"), "the first one's close deleted the taker's key");
            taker.close();
            // Gone when close returns (not in the background after it).
            assertEquals(List.of(), other.instances(svc).instances());
            taker.close();
            assertEquals(List.of(), Etcd.keysUnder(svc + "/"));
            List<Long> leases = Etcd.leases();
            assertFalse(leases.contains(firstLease) || leases.contains(takerLease), "a lease outlived its registration");
            assertFalse(reg.isRegistered());
            assertEquals(0, reg.leaseId());
            assertThrows(ClosedException.class, () -> reg.update("x"));
        }
    }

    @Test
    void badArgumentsAreRefusedBeforeAnythingIsSent() {
        String svc = Etcd.uniqueName("reg-args");
        try (EtcdLockClient client = Etcd.client()) {
            List<Long> leases = Etcd.leases();
            // covers: REG-BASIC-001 (bad service or instance names, TTL 0, a value over 4096 bytes)
            for (String badService : List.of("", "svc/")) {
                assertThrows(IllegalArgumentException.class, () -> client.register(badService, "n1", bytes("v"), TTL));
                assertThrows(IllegalArgumentException.class, () -> client.instances(badService));
                assertThrows(IllegalArgumentException.class, () -> client.discover(badService));
            }
            for (String badInstance : List.of("", "a/b", "nul\0")) {
                assertThrows(IllegalArgumentException.class, () -> client.register(svc, badInstance, bytes("v"), TTL));
            }
            assertThrows(IllegalArgumentException.class, () -> RegisterOptions.ttl(Duration.ZERO));
            assertThrows(IllegalArgumentException.class, () -> client.register(svc, "n1", new byte[4097], TTL));
            assertThrows(NullPointerException.class, () -> client.register(svc, null, bytes("v"), TTL));
            assertThrows(NullPointerException.class, () -> client.register(svc, "n1", null, TTL));
            assertEquals(List.of(), Etcd.keysUnder(svc));
            assertEquals(leases.size(), Etcd.leases().size());
        }
    }

    // covers: REG-RECOVER-001
    @Test
    void lostThenRestoredAfterARevokeAndAfterADelete() throws Exception {
        String svc = Etcd.uniqueName("reg-recover");
        try (EtcdLockClient client = Etcd.client(); Registration reg = client.register(svc, "n1", bytes("v1"), TTL)) {
            BlockingQueue<String> events = new LinkedBlockingQueue<>();
            reg.onLost(reason -> events.add("lost " + reason));
            reg.onRestored(lease -> events.add("restored " + hex(lease)));
            long first = reg.leaseId();
            Etcd.etcdctl("lease", "revoke", hex(first));
            // The key's deletion (a watch event) may be seen before the lease's end.
            String lost = events.poll(5, TimeUnit.SECONDS);
            assertTrue(List.of("lost revoked", "lost expired", "lost key_deleted").contains(lost), lost);
            String restored = events.poll(5, TimeUnit.SECONDS);
            assertEquals("restored " + hex(reg.leaseId()), restored);
            assertTrue(reg.leaseId() != first && reg.isRegistered());
            Instance again = client.instances(svc).get("n1").orElseThrow();
            assertEquals(List.of("v1", reg.leaseId()), List.of(again.valueString(), again.lease()));
            long second = reg.leaseId();
            Etcd.etcdctl("del", svc + "/n1");
            assertEquals("lost key_deleted", events.poll(5, TimeUnit.SECONDS));
            assertTrue(events.poll(5, TimeUnit.SECONDS).startsWith("restored "));
            assertTrue(reg.leaseId() != second);
            assertEquals("v1", client.instances(svc).get("n1").orElseThrow().valueString());
        }
    }

    // covers: REG-METRICS-001
    @Test
    void registrationsAndDiscoveriesAreCounted() throws Exception {
        String svc = Etcd.uniqueName("reg-metrics");
        try (EtcdLockClient client = Etcd.client(); Discovery d = client.discover(svc)) {
            assertTrue(d.next(Duration.ofSeconds(5)).isPresent());
            Registration reg = client.register(svc, "n1", bytes("a"), TTL);
            assertTrue(d.next(Duration.ofSeconds(5)).isPresent());
            Metrics m = client.metrics();
            assertEquals(List.of(1L, 2L), List.of(m.registrationsAlive(), m.discoverySnapshots()));
            assertEquals(0L, m.reregistrations().values().stream().mapToLong(Long::longValue).sum());
            BlockingQueue<String> lost = new LinkedBlockingQueue<>();
            CountDownLatch restored = new CountDownLatch(1);
            reg.onLost(lost::add);
            reg.onRestored(lease -> restored.countDown());
            Etcd.etcdctl("lease", "revoke", hex(reg.leaseId()));
            String reason = lost.poll(5, TimeUnit.SECONDS);
            assertTrue(restored.await(5, TimeUnit.SECONDS));
            m = client.metrics();
            assertEquals(1L, m.reregistrations().get(reason), m.reregistrations() + " after " + reason);
            assertEquals(1L, m.registrationsAlive());
            assertTrue(client.metricsText().contains("etcdlock_reregistrations_total{client=\"" + client.name() + "\",reason=\"" + reason + "\"} 1\n"), client.metricsText());
            reg.close();
            assertEquals(0L, client.metrics().registrationsAlive());
            assertTrue(client.metricsText().contains("etcdlock_registrations_alive{client=\"" + client.name() + "\"} 0\n"));
        }
    }
}
