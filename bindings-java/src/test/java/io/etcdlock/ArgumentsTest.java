package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Bad input, unreachable and closed clients: refused with a clear exception, nothing sent. */
class ArgumentsTest {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));

    // covers: CONN-BADURL-001
    @Test
    void badEndpoints() {
        assertThrows(IllegalArgumentException.class, () -> ClientOptions.builder().build());
        assertThrows(NullPointerException.class, () -> ClientOptions.builder().endpoints((String) null));
        assertThrows(IllegalArgumentException.class,
                () -> EtcdLockClient.connect(ClientOptions.builder().endpoints("http://[not a url").build()));
        assertThrows(IllegalArgumentException.class,
                () -> EtcdLockClient.connect(ClientOptions.builder().endpoints("").build()));
        assertThrows(NullPointerException.class, () -> EtcdLockClient.connect(null));
        assertThrows(IllegalArgumentException.class, () -> ClientOptions.builder().timeout(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> ClientOptions.builder().tls(null, Path.of("c.pem"), null));
    }

    // covers: CONN-UNREACH-001
    @Test
    void unreachableFailsWithinTheConnectTimeout() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort(); // free once closed: nobody listens there
        }
        long t0 = System.nanoTime();
        UnavailableException e = assertThrows(UnavailableException.class, () -> EtcdLockClient.connect(ClientOptions.builder()
                .endpoints("http://127.0.0.1:" + port).connectTimeout(Duration.ofMillis(500)).build()));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals("UNAVAILABLE", e.kind());
        assertTrue(ms < 3000, "took " + ms + " ms");
    }

    // covers: ERR-BADNAME-001
    @Test
    void badLockNames() {
        try (EtcdLockClient client = Etcd.client()) {
            for (String bad : new String[] {"", "a/", "a\0b"}) {
                assertThrows(IllegalArgumentException.class, () -> client.lock(bad, TTL), bad);
            }
            assertThrows(NullPointerException.class, () -> client.lock(null, TTL));
            assertThrows(NullPointerException.class, () -> client.lock("x", null));
            assertEquals(List.of(), Etcd.keysUnder("a/"));
        }
    }

    // covers: ERR-BADTTL-001
    @Test
    void badTtls() throws Exception {
        assertThrows(IllegalArgumentException.class, () -> LockOptions.ttl(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> LockOptions.ttl(Duration.ofSeconds(-5)));
        assertThrows(NullPointerException.class, () -> LockOptions.ttl(null));
        assertEquals(1, LockOptions.ttl(Duration.ofMillis(200)).ttlSeconds(), "rounded up to a second");
        String name = Etcd.uniqueName("bigttl");
        try (EtcdLockClient client = Etcd.client()) {
            DistributedLock tooLong = client.lock(name, LockOptions.ttl(Duration.ofSeconds(9_000_000_001L)));
            assertThrows(IllegalArgumentException.class, () -> tooLong.acquire(Duration.ofSeconds(1)));
            assertThrows(IllegalArgumentException.class, () -> client.lease(Duration.ZERO));
            assertEquals(List.of(), Etcd.keysUnder(name + "/"));
            assertThrows(IllegalArgumentException.class, () -> client.lock(name, TTL).acquire(Duration.ofSeconds(-1)));
        }
    }

    // covers: ERR-BADKEY-001
    @Test
    void emptyKeys() throws Exception {
        try (EtcdLockClient client = Etcd.client()) {
            assertThrows(IllegalArgumentException.class, () -> client.put("", bytes("v")));
            assertThrows(IllegalArgumentException.class, () -> client.get(""));
            assertThrows(IllegalArgumentException.class, () -> client.delete(""));
            assertThrows(NullPointerException.class, () -> client.put("k", null));
            try (LockGuard held = client.lock(Etcd.uniqueName("badkey"), TTL).acquire(Duration.ofSeconds(5))) {
                assertThrows(IllegalArgumentException.class, () -> held.putIfHeld("", bytes("v")));
            }
        }
    }

    // covers: LOCK-VALUE-001 (the acquire's value; inspection is not in the Java API yet)
    @Test
    void lockValues() throws Exception {
        String name = Etcd.uniqueName("value");
        try (EtcdLockClient client = Etcd.client()) {
            DistributedLock tooBig = client.lock(name, TTL.value(new byte[4097]));
            assertThrows(IllegalArgumentException.class, () -> tooBig.acquire(Duration.ofSeconds(1)));
            assertEquals(List.of(), Etcd.keysUnder(name + "/"));
            byte[] v = new byte[4096];
            java.util.Arrays.fill(v, (byte) 'v');
            try (LockGuard held = client.lock(name, TTL.value(v)).acquire(Duration.ofSeconds(5))) {
                String stored = Etcd.etcdctl("get", "--print-value-only", held.key()).trim();
                assertEquals(new String(v, java.nio.charset.StandardCharsets.US_ASCII), stored);
            }
        }
    }

    // covers: CONN-CLOSED-001
    @Test
    void everyCallAfterCloseFails() throws Exception {
        EtcdLockClient client = Etcd.client();
        DistributedLock lock = client.lock(Etcd.uniqueName("closed"), TTL);
        Lease lease = client.lease(Duration.ofSeconds(10));
        client.close();
        client.close(); // a no-op
        assertTrue(client.isClosed());
        assertThrows(ClosedException.class, () -> client.lock("x", TTL));
        assertThrows(ClosedException.class, () -> lock.acquire(Duration.ofSeconds(1)));
        assertThrows(ClosedException.class, lock::tryAcquire);
        assertThrows(ClosedException.class, () -> lock.acquireAsync(Duration.ofSeconds(1)));
        assertThrows(ClosedException.class, () -> client.put("k", bytes("v")));
        assertThrows(ClosedException.class, () -> client.get("k"));
        assertThrows(ClosedException.class, () -> client.delete("k"));
        assertThrows(ClosedException.class, () -> client.lease(Duration.ofSeconds(10)));
        assertThrows(ClosedException.class, client::metricsText);
        assertFalse(lease.isAlive());
        EtcdLockException e = assertThrows(ClosedException.class, () -> client.get("k"));
        assertEquals("CLOSED", e.kind());
        lease.close();
    }
}
