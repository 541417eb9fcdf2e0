package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Spans through the OpenTelemetry API (io.etcdlock.Tracing), read back with the SDK's
 * InMemorySpanExporter: the core's names (etcdlock.acquire, etcdlock.hold, etcdlock.release,
 * etcdlock.campaign, etcdlock.lead, etcdlock.task.claim, etcdlock.task.ack, etcdlock.register)
 * with the name, the fencing token, the outcome and the error kind. The SDK is the process's
 * GlobalOpenTelemetry for this class only (reset afterwards: the other tests run untraced).
 */
class TracingTest {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));
    static final InMemorySpanExporter EXPORTER = InMemorySpanExporter.create();
    static SdkTracerProvider provider;

    @BeforeAll
    static void install() {
        GlobalOpenTelemetry.resetForTest();
        provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(EXPORTER)).build();
        GlobalOpenTelemetry.set(OpenTelemetrySdk.builder().setTracerProvider(provider).build());
    }

    @AfterAll
    static void uninstall() {
        provider.close();
        GlobalOpenTelemetry.resetForTest();
    }

    @BeforeEach
    void clear() {
        EXPORTER.reset();
    }

    static List<SpanData> named(String spanName, String name) {
        return EXPORTER.getFinishedSpanItems().stream()
                .filter(s -> s.getName().equals(spanName) && name.equals(s.getAttributes().get(AttributeKey.stringKey("etcdlock.name"))))
                .collect(Collectors.toList());
    }

    static SpanData one(String spanName, String name) {
        List<SpanData> found = named(spanName, name);
        assertEquals(1, found.size(), () -> spanName + " " + name + " in " + EXPORTER.getFinishedSpanItems());
        return found.get(0);
    }

    static SpanData eventuallyOne(String spanName, String name) {
        assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> !named(spanName, name).isEmpty()), () -> "no " + spanName + " in " + EXPORTER.getFinishedSpanItems());
        return one(spanName, name);
    }

    static String str(SpanData s, String key) {
        return s.getAttributes().get(AttributeKey.stringKey(key));
    }

    static Long num(SpanData s, String key) {
        return s.getAttributes().get(AttributeKey.longKey(key));
    }

    static List<String> linked(SpanData s) {
        return s.getLinks().stream().map(LinkData::getSpanContext).map(c -> c.getSpanId()).collect(Collectors.toList());
    }

    // covers: TRACE-SPANS-001
    @Test
    void acquireHoldAndReleaseAreSpansWithTheNameTokenAndOutcome() throws Exception {
        String name = Etcd.uniqueName("trace-held");
        try (EtcdLockClient client = Etcd.client()) {
            LockGuard held = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
            long token = held.fencingToken();
            SpanData acquire = one("etcdlock.acquire", name);
            assertEquals("acquired", str(acquire, "etcdlock.outcome"));
            assertEquals(token, num(acquire, "etcdlock.fencing_token"));
            assertEquals(List.of(), named("etcdlock.hold", name), "the hold is open (not ended) while held");

            held.release();
            SpanData hold = one("etcdlock.hold", name);
            assertEquals(List.of("released", token), List.of(str(hold, "etcdlock.outcome"), num(hold, "etcdlock.fencing_token")));
            assertEquals(List.of(acquire.getSpanId()), linked(hold), "the hold links to its acquire");
            SpanData release = one("etcdlock.release", name);
            assertEquals(List.of("released", token), List.of(str(release, "etcdlock.outcome"), num(release, "etcdlock.fencing_token")));
            assertEquals(null, str(release, "etcdlock.error_kind"));

            // A second release: NOT_HELD, and no second hold.
            assertThrows(NotHeldException.class, held::release);
            held.close();
            assertEquals(1, named("etcdlock.hold", name).size());

            // The async release ends the hold before its future completes.
            LockGuard again = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
            again.releaseAsync().get();
            assertEquals(List.of("released", "released"), named("etcdlock.hold", name).stream().map(s -> str(s, "etcdlock.outcome")).collect(Collectors.toList()));
            again.close();
        }
    }

    // covers: TRACE-SPANS-001
    @Test
    void aTimedOutOrBusyAcquireHasNoHold() throws Exception {
        String name = Etcd.uniqueName("trace-busy");
        try (EtcdLockClient client = Etcd.client(); EtcdLockClient other = Etcd.client()) {
            try (LockGuard held = other.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
                assertTrue(held.isHeld());
                EXPORTER.reset();
                assertThrows(LockTimeoutException.class, () -> client.lock(name, TTL).acquire(Duration.ofMillis(200)));
                SpanData timedOut = one("etcdlock.acquire", name);
                assertEquals(List.of("timeout", "LOCK_TIMEOUT"), List.of(str(timedOut, "etcdlock.outcome"), str(timedOut, "etcdlock.error_kind")));
                assertEquals(null, num(timedOut, "etcdlock.fencing_token"));
                EXPORTER.reset();
                assertEquals(Optional.empty(), client.lock(name, TTL).tryAcquire());
                SpanData busy = one("etcdlock.acquire", name);
                assertEquals(List.of("timeout", "WOULD_BLOCK"), List.of(str(busy, "etcdlock.outcome"), str(busy, "etcdlock.error_kind")));
            }
            assertEquals(1, named("etcdlock.hold", name).size(), "only the holder's hold: " + EXPORTER.getFinishedSpanItems());
        }
    }

    // covers: TRACE-SPANS-001
    @Test
    void aLostHoldEndsLostAndItsReleaseIsNotHeld() throws Exception {
        String name = Etcd.uniqueName("trace-lost");
        try (EtcdLockClient client = Etcd.client()) {
            LockGuard held = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
            Etcd.etcdctl("lease", "revoke", Long.toHexString(held.leaseId()));
            SpanData hold = eventuallyOne("etcdlock.hold", name);
            // The reason the guard reports (a revoke deletes the key too: either may be seen first).
            assertEquals(List.of("lost", "LOCK_LOST", held.lostReason().orElseThrow()),
                    List.of(str(hold, "etcdlock.outcome"), str(hold, "etcdlock.error_kind"), str(hold, "etcdlock.lost_reason")));
            assertThrows(NotHeldException.class, held::release);
            SpanData release = one("etcdlock.release", name);
            assertEquals(List.of("error", "NOT_HELD"), List.of(str(release, "etcdlock.outcome"), str(release, "etcdlock.error_kind")));
            try {
                held.close();
            } catch (LockLostException e) {
                // Reported or not, the hold ended once.
            }
            assertEquals(1, named("etcdlock.hold", name).size());
        }
    }

    // covers: TRACE-SPANS-001
    @Test
    void aGuardNobodyClosesEndsDroppedWhenCollected() throws Exception {
        String name = Etcd.uniqueName("trace-dropped");
        try (EtcdLockClient client = Etcd.client()) {
            acquireAndForget(client, name);
            assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> {
                System.gc();
                return !named("etcdlock.hold", name).isEmpty();
            }), "the hold of a collected guard was not ended");
            assertEquals("dropped", str(one("etcdlock.hold", name), "etcdlock.outcome"));
        }
    }

    private static void acquireAndForget(EtcdLockClient client, String name) throws InterruptedException {
        client.lock(name, TTL).acquire(Duration.ofSeconds(5));
    }

    // covers: TRACE-SPANS-001
    @Test
    void aCampaignAndItsLeadership() throws Exception {
        String name = Etcd.uniqueName("trace-elect");
        try (EtcdLockClient client = Etcd.client()) {
            Leadership lead = client.election(name, Duration.ofSeconds(10)).campaign("me", Duration.ofSeconds(5));
            SpanData campaign = one("etcdlock.campaign", name);
            assertEquals(List.of("acquired", lead.fencingToken()), List.of(str(campaign, "etcdlock.outcome"), num(campaign, "etcdlock.fencing_token")));
            assertEquals(List.of(), named("etcdlock.acquire", name));
            lead.resign();
            SpanData led = one("etcdlock.lead", name);
            assertEquals(List.of("released", lead.fencingToken()), List.of(str(led, "etcdlock.outcome"), num(led, "etcdlock.fencing_token")));
            assertEquals(List.of(campaign.getSpanId()), linked(led));
            assertEquals(List.of(), named("etcdlock.hold", name));
            lead.close();
        }
    }

    // covers: TRACE-SPANS-002
    @Test
    void aTaskClaimedAndAcked() throws Exception {
        String name = Etcd.uniqueName("trace-queue");
        try (EtcdLockClient client = Etcd.client()) {
            TaskQueue q = client.queue(name, QueueOptions.ttl(Duration.ofSeconds(10)));
            String id = q.put(bytes("job"));
            Task task = q.claim(Duration.ofSeconds(5));
            SpanData claim = one("etcdlock.task.claim", name);
            assertEquals(List.of("acquired", id, task.fencingToken()),
                    List.of(str(claim, "etcdlock.outcome"), str(claim, "etcdlock.task_id"), num(claim, "etcdlock.fencing_token")));
            task.ack();
            SpanData ack = one("etcdlock.task.ack", name);
            assertEquals(List.of("acked", id, task.fencingToken()),
                    List.of(str(ack, "etcdlock.outcome"), str(ack, "etcdlock.task_id"), num(ack, "etcdlock.fencing_token")));
            assertThrows(NotHeldException.class, task::ack);
            List<SpanData> acks = named("etcdlock.task.ack", name);
            assertEquals(2, acks.size());
            assertEquals(List.of("error", "NOT_HELD"), List.of(str(acks.get(1), "etcdlock.outcome"), str(acks.get(1), "etcdlock.error_kind")));
            task.close();
            // An empty queue's try: a claim span that timed out, and no hold spans of the claim's own lock.
            EXPORTER.reset();
            assertEquals(Optional.empty(), q.tryClaim());
            SpanData none = one("etcdlock.task.claim", name);
            assertEquals("timeout", str(none, "etcdlock.outcome"));
            assertFalse(EXPORTER.getFinishedSpanItems().stream().anyMatch(s -> s.getName().equals("etcdlock.acquire") || s.getName().equals("etcdlock.hold")));
        }
    }

    // covers: TRACE-SPANS-002
    @Test
    void aRegistrationAndOneRefused() throws Exception {
        String svc = Etcd.uniqueName("trace-reg");
        RegisterOptions ttl = RegisterOptions.ttl(Duration.ofSeconds(10));
        try (EtcdLockClient client = Etcd.client(); EtcdLockClient other = Etcd.client()) {
            try (Registration reg = client.register(svc, "n1", bytes("a"), ttl)) {
                assertTrue(reg.isRegistered());
                assertEquals("registered", str(one("etcdlock.register", svc + "/n1"), "etcdlock.outcome"));
                EtcdLockException taken = assertThrows(EtcdLockException.class, () -> other.register(svc, "n1", bytes("b"), ttl));
                assertEquals("WOULD_BLOCK", taken.kind());
                List<SpanData> spans = named("etcdlock.register", svc + "/n1");
                assertEquals(2, spans.size());
                assertEquals(Map.of("etcdlock.outcome", "error", "etcdlock.error_kind", "WOULD_BLOCK"),
                        Map.of("etcdlock.outcome", str(spans.get(1), "etcdlock.outcome"), "etcdlock.error_kind", str(spans.get(1), "etcdlock.error_kind")));
            }
        }
    }

    // covers: TRACE-SPANS-003
    @Test
    void aPoolsAcquireHoldAndReleaseAreSpansWithItsSlots() throws Exception {
        String name = Etcd.uniqueName("trace-pool");
        try (EtcdLockClient client = Etcd.client()) {
            PoolHolding held = client.pool(name, PoolOptions.slots("a", "b")).acquire(2, Duration.ofSeconds(5));
            long token = held.fencingToken();
            SpanData acquire = one("etcdlock.acquire", name);
            assertEquals(List.of("acquired", "a,b", token),
                    List.of(str(acquire, "etcdlock.outcome"), str(acquire, "etcdlock.slots"), num(acquire, "etcdlock.fencing_token")));
            assertEquals(List.of(), named("etcdlock.hold", name), "the hold is open while held");
            assertEquals(Optional.empty(), client.pool(name, PoolOptions.slots("a", "b")).tryAcquire(1));
            SpanData busy = named("etcdlock.acquire", name).get(1);
            assertEquals(List.of("timeout", "WOULD_BLOCK"), List.of(str(busy, "etcdlock.outcome"), str(busy, "etcdlock.error_kind")));
            held.release();
            SpanData hold = one("etcdlock.hold", name);
            assertEquals(List.of("released", "a,b", token), List.of(str(hold, "etcdlock.outcome"), str(hold, "etcdlock.slots"), num(hold, "etcdlock.fencing_token")));
            assertEquals(List.of(acquire.getSpanId()), linked(hold));
            SpanData release = one("etcdlock.release", name);
            assertEquals(List.of("released", "a,b"), List.of(str(release, "etcdlock.outcome"), str(release, "etcdlock.slots")));
            held.close();
            assertEquals(1, named("etcdlock.hold", name).size());

            // Lost: its lease revoked by an operator ends the hold at once.
            String lostName = name + "-lost";
            PoolHolding lost = client.pool(lostName, PoolOptions.slots("x")).acquire(1, Duration.ofSeconds(5));
            Etcd.etcdctl("lease", "revoke", Long.toHexString(lost.leaseId()));
            SpanData lostHold = eventuallyOne("etcdlock.hold", lostName);
            assertEquals(List.of("lost", "LOCK_LOST"), List.of(str(lostHold, "etcdlock.outcome"), str(lostHold, "etcdlock.error_kind")));
            try {
                lost.close();
            } catch (LockLostException e) {
                // Reported: the hold still ended once.
            }
            assertEquals(1, named("etcdlock.hold", lostName).size());
        }
    }

    // covers: TRACE-SPANS-003
    @Test
    void aLockSetsAcquireHoldAndReleaseAreSpansNamedByItsMembers() throws Exception {
        String x = Etcd.uniqueName("trace-set-x");
        String y = Etcd.uniqueName("trace-set-y");
        String name = x + "," + y;
        try (EtcdLockClient client = Etcd.client()) {
            LockSet set = client.lockSet(List.of(SetMember.exclusive(x), SetMember.exclusive(y)), TTL);
            LockSetHolding held = set.acquire(Duration.ofSeconds(5));
            long token = held.fencingToken();
            SpanData acquire = one("etcdlock.acquire", name);
            assertEquals(List.of("acquired", token), List.of(str(acquire, "etcdlock.outcome"), num(acquire, "etcdlock.fencing_token")));
            held.release();
            SpanData hold = one("etcdlock.hold", name);
            assertEquals(List.of("released", token), List.of(str(hold, "etcdlock.outcome"), num(hold, "etcdlock.fencing_token")));
            assertEquals("released", str(one("etcdlock.release", name), "etcdlock.outcome"));
            held.close();

            LockSetHolding again = set.acquire(Duration.ofSeconds(5));
            Etcd.etcdctl("del", x, "--prefix");
            assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> named("etcdlock.hold", name).size() == 2), () -> "" + EXPORTER.getFinishedSpanItems());
            SpanData lost = named("etcdlock.hold", name).get(1);
            assertEquals(List.of("lost", "key_deleted"), List.of(str(lost, "etcdlock.outcome"), str(lost, "etcdlock.lost_reason")));
            assertThrows(NotHeldException.class, again::release);
            assertEquals(List.of("error", "NOT_HELD"), List.of(str(named("etcdlock.release", name).get(1), "etcdlock.outcome"), str(named("etcdlock.release", name).get(1), "etcdlock.error_kind")));
            try {
                again.close();
            } catch (LockLostException e) {
                // Reported or not, the hold ended once.
            }
            assertEquals(2, named("etcdlock.hold", name).size());
        }
    }
}
