package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Key-value calls and leases. */
class KvLeaseTest {
    static EtcdLockClient client;

    @BeforeAll
    static void connect() {
        client = Etcd.client();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    // covers: KV-BASIC-001
    @Test
    void putGetDelete() {
        String key = Etcd.uniqueName("kv");
        assertEquals(Optional.empty(), client.get(key));
        long r1 = client.put(key, bytes("héllo"));
        assertEquals("héllo", Etcd.text(client.get(key).orElseThrow()));
        byte[] binary = {0, 1, (byte) 0xff, 0};
        long r2 = client.put(key, binary);
        assertTrue(r2 > r1);
        assertArrayEquals(binary, client.get(key).orElseThrow());
        assertTrue(client.delete(key));
        assertFalse(client.delete(key));
        assertEquals(Optional.empty(), client.get(key));
    }

    // covers: LEASE-TTL-001
    @Test
    void shortTtlIsRaisedToTheServerMinimum() {
        try (Lease lease = client.lease(Duration.ofSeconds(1))) {
            assertEquals(2, lease.ttlSeconds());
            assertTrue(lease.isAlive());
        }
    }

    // covers: LEASE-REVOKE-001
    @Test
    void revokeDeletesAttachedKeysAndIsIdempotent() {
        String key = Etcd.uniqueName("leased");
        Lease lease = client.lease(Duration.ofSeconds(30));
        client.put(key, bytes("v"), lease);
        assertEquals(List.of(key), Etcd.keysUnder(key));
        List<String> reasons = new CopyOnWriteArrayList<>();
        lease.onLost(reasons::add);
        lease.revoke();
        assertEquals(List.of(), Etcd.keysUnder(key));
        assertFalse(lease.isAlive());
        lease.revoke();
        assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> reasons.equals(List.of("revoked"))), reasons.toString());
        lease.close();
        lease.close();
    }

    // covers: LEASE-LOST-001
    @Test
    void leaseRevokedByEtcdctl() throws Exception {
        // A short TTL: the keepalive that learns of the revoke comes every third of it.
        try (Lease lease = client.lease(Duration.ofSeconds(3))) {
            List<String> reasons = new CopyOnWriteArrayList<>();
            lease.onLost(reasons::add);
            Etcd.etcdctl("lease", "revoke", Long.toHexString(lease.id()));
            assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> !reasons.isEmpty()), "onLost was not called");
            assertFalse(lease.isAlive());
            Thread.sleep(1500);
            assertFalse(lease.isAlive(), "alive again");
            assertEquals(1, reasons.size(), reasons.toString());
        }
    }

    @Test
    void keptAlivePastItsTtl() throws Exception {
        try (Lease lease = client.lease(Duration.ofSeconds(2))) {
            String key = Etcd.uniqueName("alive");
            client.put(key, bytes("v"), lease);
            Thread.sleep(3500);
            assertTrue(lease.isAlive());
            assertEquals(List.of(key), Etcd.keysUnder(key));
        }
    }
}
