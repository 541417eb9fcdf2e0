package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@code health()} of every holding (issue #59): ok while held, not ok once lost, released after. */
class HealthTest {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));
    static final Duration WAIT = Duration.ofSeconds(5);

    static void assertHeld(Health h, String name, long token) {
        assertTrue(h.ok(), h.toString());
        assertEquals("held", h.state());
        assertEquals(Optional.empty(), h.lostReason());
        assertEquals(name, h.name());
        assertEquals(token, h.fencingToken());
        assertTrue(h.leaseId() != 0, h.toString());
        long ms = h.exclusiveForMs().orElseThrow();
        assertTrue(ms > 0 && ms <= 10_000, h.toString());
    }

    static void assertReleased(Health h) {
        assertFalse(h.ok(), h.toString());
        assertEquals("released", h.state());
        assertTrue(h.exclusiveForMs().isEmpty(), h.toString());
    }

    // covers: HEALTH-HANDLE-001
    @Test
    void notOkByTheTimeTheLostCallbackRuns() throws Exception {
        String name = Etcd.uniqueName("health");
        try (EtcdLockClient client = Etcd.client()) {
            LockGuard held = client.lock(name, TTL).acquire(WAIT);
            assertHeld(held.health(), name, held.fencingToken());
            AtomicReference<Health> seen = new AtomicReference<>();
            held.onLost(r -> seen.set(held.health()));
            Etcd.etcdctl("del", held.key()); // another client deletes the key
            assertTrue(Etcd.eventually(WAIT, () -> seen.get() != null), "onLost was not called");
            Health h = seen.get();
            assertFalse(h.ok(), h.toString());
            assertEquals("lost", h.state());
            assertEquals(Optional.of("key_deleted"), h.lostReason());
            assertTrue(h.exclusiveForMs().isEmpty());
            assertThrows(NotHeldException.class, held::release);
            assertReleased(held.health());
            held.close();
            // Closed (its native handle freed): still an answer, never ok.
            assertReleased(held.health());
        }
    }

    // covers: HEALTH-HANDLE-001
    @Test
    void everyHoldingReadsHeldThenReleased() throws Exception {
        String p = Etcd.uniqueName("health-kinds");
        try (EtcdLockClient client = Etcd.client()) {
            LockGuard permit = client.semaphore(p + "sem", 2, TTL).acquire(WAIT);
            assertHeld(permit.health(), p + "sem", permit.fencingToken());
            permit.close();
            assertReleased(permit.health());
            LockGuard w = client.rwlock(p + "rw", TTL).writeLock().acquire(WAIT);
            assertHeld(w.health(), p + "rw", w.fencingToken());
            w.release();
            assertReleased(w.health());
            w.close();
            Leadership leading = client.election(p + "el", Duration.ofSeconds(10)).campaign("me", WAIT);
            assertHeld(leading.health(), p + "el", leading.fencingToken());
            leading.resign();
            assertReleased(leading.health());
            leading.close();
            LockSetHolding set = client.lockSet(SetMember.names(p + "a", p + "b"), TTL).acquire(WAIT);
            assertHeld(set.health(), p + "a," + p + "b", set.fencingToken());
            set.release();
            assertReleased(set.health());
            set.close();
            PoolHolding slots = client.pool(p + "pool", PoolOptions.size(2)).acquire(1, WAIT);
            assertHeld(slots.health(), p + "pool", slots.fencingToken());
            slots.release();
            assertReleased(slots.health());
            slots.close();
            TaskQueue q = client.queue(p + "q", QueueOptions.ttl(Duration.ofSeconds(10)));
            q.put(bytes("x"));
            Task task = q.claim(WAIT);
            assertTrue(task.health().ok(), task.health().toString());
            assertTrue(task.health().name().startsWith(p + "q/claim/"), task.health().toString());
            task.ack();
            assertReleased(task.health());
            task.close();
            assertReleased(task.health());
            OnceSlot slot = client.once(p + "job", OnceOptions.every(Duration.ofHours(1))).orElseThrow();
            assertTrue(slot.health().ok(), slot.health().toString());
            assertTrue(slot.health().name().startsWith(p + "job/slot/"), slot.health().toString());
            slot.done();
            assertReleased(slot.health());
            slot.close();
            assertReleased(slot.health());
        }
    }

    // covers: HEALTH-HANDLE-001 (after the client closed: an answer, never ok)
    @Test
    void afterTheClientClosedItIsNotOk() throws Exception {
        String name = Etcd.uniqueName("health-closed");
        EtcdLockClient client = Etcd.client();
        LockGuard held = client.lock(name, TTL).acquire(WAIT);
        client.close();
        Health h = held.health();
        assertFalse(h.ok(), h.toString());
        assertTrue(List.of("lost", "released").contains(h.state()), h.toString());
    }
}
