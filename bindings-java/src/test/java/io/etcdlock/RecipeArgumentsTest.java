package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bad input to the election, semaphore, read-write lock and registry: a clear exception, nothing
 * sent, nothing changed; and every call on a closed client is ClosedException.
 */
@Timeout(60)
class RecipeArgumentsTest {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));
    static final Duration T = Duration.ofSeconds(10);

    @Test
    void badNamesNullsAndCounts() throws Exception {
        String name = Etcd.uniqueName("recipe-args");
        try (EtcdLockClient client = Etcd.client()) {
            List<Long> leases = Etcd.leases();
            for (String bad : new String[] {"", "a/", "a\0b"}) {
                assertThrows(IllegalArgumentException.class, () -> client.election(bad, T), bad);
                assertThrows(IllegalArgumentException.class, () -> client.semaphore(bad, 2, TTL), bad);
                assertThrows(IllegalArgumentException.class, () -> client.rwlock(bad, TTL), bad);
            }
            assertThrows(NullPointerException.class, () -> client.election(null, T));
            assertThrows(NullPointerException.class, () -> client.election(name, null));
            assertThrows(IllegalArgumentException.class, () -> client.election(name, Duration.ZERO));
            assertThrows(NullPointerException.class, () -> client.semaphore(null, 2, TTL));
            assertThrows(NullPointerException.class, () -> client.semaphore(name, 2, null));
            assertThrows(NullPointerException.class, () -> client.rwlock(null, TTL));
            assertThrows(NullPointerException.class, () -> client.rwlock(name, null));
            assertThrows(NullPointerException.class, () -> client.instances(null));
            assertThrows(NullPointerException.class, () -> client.discover(null));
            IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> client.semaphore(name, 0, TTL));
            assertTrue(zero.getMessage().contains("permits"), zero.getMessage());
            Election election = client.election(name, T);
            assertThrows(NullPointerException.class, () -> election.campaign((byte[]) null, T));
            assertThrows(NullPointerException.class, () -> election.campaign("v", null));
            assertThrows(IllegalArgumentException.class, () -> election.campaign("v", Duration.ofSeconds(-1)));
            assertThrows(IllegalArgumentException.class, () -> election.campaign(new byte[4097], T));
            assertThrows(NullPointerException.class, () -> election.campaignAsync((byte[]) null, T));
            assertEquals(List.of(), Etcd.keysUnder(name));
            assertEquals(leases.size(), Etcd.leases().size(), "a refused call left a lease");
            try (Leadership leading = election.campaign("v", T)) {
                assertThrows(NullPointerException.class, () -> leading.proclaim((String) null));
                assertThrows(IllegalArgumentException.class, () -> leading.proclaim(new byte[4097]));
                assertEquals("v", election.leader().orElseThrow().valueString());
                assertThrows(NullPointerException.class, () -> leading.onLost(null));
            }
            assertThrows(IllegalArgumentException.class, () -> election.observe().next(Duration.ofSeconds(-1)));
            try (Registration reg = client.register(name + "-svc", "n1", bytes("v"), RegisterOptions.defaults())) {
                assertThrows(NullPointerException.class, () -> reg.update((byte[]) null));
                assertThrows(IllegalArgumentException.class, () -> reg.update(new byte[4097]));
                assertThrows(NullPointerException.class, () -> reg.onLost(null));
                assertEquals("v", client.instances(name + "-svc").get("n1").orElseThrow().valueString());
            }
            assertEquals(List.of(), Etcd.keysUnder(name));
        }
    }

    @Test
    void everyCallOnAClosedClientIsClosed() throws Exception {
        String name = Etcd.uniqueName("recipe-closed");
        EtcdLockClient client = Etcd.client();
        Election election = client.election(name, T);
        DistributedSemaphore sem = client.semaphore(name + "-sem", 2, TTL);
        DistributedReadWriteLock rw = client.rwlock(name + "-rw", TTL);
        Registration reg = client.register(name + "-svc", "n1", bytes("v"), RegisterOptions.defaults());
        ElectionObserver observer = election.observe();
        client.close();
        assertTrue(!reg.isRegistered() && Etcd.keysUnder(name + "-svc/").isEmpty(), "the close left the registration");
        assertThrows(NotHeldException.class, () -> reg.update("w")); // the core: not registered now
        reg.close();
        assertThrows(ClosedException.class, observer::hasNext);
        observer.close();
        assertThrows(ClosedException.class, () -> client.election(name, T));
        assertThrows(ClosedException.class, () -> client.semaphore(name, 2, TTL));
        assertThrows(ClosedException.class, () -> client.rwlock(name, TTL));
        assertThrows(ClosedException.class, () -> client.register(name, "n1", bytes("v"), RegisterOptions.defaults()));
        assertThrows(ClosedException.class, () -> client.instances(name));
        assertThrows(ClosedException.class, () -> client.discover(name));
        assertThrows(ClosedException.class, () -> election.campaign("v", T));
        assertThrows(ClosedException.class, election::leader);
        assertThrows(ClosedException.class, election::observe);
        assertThrows(ClosedException.class, () -> sem.acquire(T));
        assertThrows(ClosedException.class, sem::tryAcquire);
        assertThrows(ClosedException.class, () -> rw.readLock().acquire(T));
        assertThrows(ClosedException.class, () -> rw.writeLock().tryLock());
        assertEquals(List.of(), Etcd.keysUnder(name));
    }
}
