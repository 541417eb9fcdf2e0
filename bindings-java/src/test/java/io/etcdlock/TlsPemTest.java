package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static io.etcdlock.Etcd.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * TLS from PEM text and the server name (test.sh starts the members: ETCDLOCK_MTLS_ENDPOINT
 * requires client certificates; ETCDLOCK_OTHERNAME_ENDPOINT's certificate names only
 * other.invalid; certificates in ETCDLOCK_CERT_DIR).
 */
class TlsPemTest {
    static String pem(String file) throws Exception {
        return Files.readString(TlsTest.cert(file));
    }

    static ClientOptions.Builder mtls(String endpoint) throws Exception {
        return ClientOptions.builder().endpoints(endpoint).timeout(Duration.ofSeconds(5))
                .tlsPem(pem("ca.pem"), pem("client.pem"), pem("client.key"));
    }

    static String otherName() {
        String e = System.getenv("ETCDLOCK_OTHERNAME_ENDPOINT");
        if (e == null || e.isEmpty()) {
            fail("ETCDLOCK_OTHERNAME_ENDPOINT is not set: run bindings-java/test.sh");
        }
        return e;
    }

    /** Put/get, a lock with a guarded write, and a watch that sees a change. */
    static void works(EtcdLockClient c, String p) throws Exception {
        c.put(p + "/k", bytes("v"));
        assertEquals("v", text(c.get(p + "/k").orElseThrow()));
        try (LockGuard held = c.lock(p + "/lock", LockOptions.ttl(Duration.ofSeconds(5))).acquire(Duration.ofSeconds(5))) {
            assertTrue(held.putIfHeld(p + "/fenced", bytes("f")) > 0);
        }
        try (Watch w = c.watch(p + "/w")) {
            long rev = c.put(p + "/w", bytes("1"));
            assertEquals(rev, w.next(Duration.ofSeconds(5)).orElseThrow().revision());
        }
    }

    // covers: TLS-CA-001, TLS-MTLS-001 (PEM text: by IP and by DNS name; a lease kept alive past its TTL)
    @Test
    void pemTextByIpAndByDnsName() throws Exception {
        String ip = TlsTest.endpoint();
        assertTrue(ip.startsWith("https://127.0.0.1:"), ip);
        String p = Etcd.uniqueName("tls-pem");
        try (EtcdLockClient c = EtcdLockClient.connect(mtls(ip).build())) {
            works(c, p);
            // The keepalive stream runs over TLS too: a 2 s lease lives 3 s.
            try (Lease lease = c.lease(Duration.ofSeconds(2))) {
                c.put(p + "/leased", bytes("l"), lease);
                Thread.sleep(3000);
                assertTrue(lease.isAlive(), "lease lost: " + lease.lostReason());
                assertEquals("l", text(c.get(p + "/leased").orElseThrow()));
            }
            assertTrue(c.get(p + "/leased").isEmpty(), "close() revokes: its key is gone");
        }
        String dns = ip.replace("127.0.0.1", "localhost");
        try (EtcdLockClient c = EtcdLockClient.connect(mtls(dns).build())) {
            works(c, p + "-dns");
        }
        // The CA as a file, the client certificate as PEM text, by DNS name.
        try (EtcdLockClient c = EtcdLockClient.connect(ClientOptions.builder().endpoints(dns).timeout(Duration.ofSeconds(5))
                .tls(TlsTest.cert("ca.pem"), TlsTest.cert("client.pem"), TlsTest.cert("client.key")).build())) {
            works(c, p + "-file");
        }
        // Without a client certificate, or with one from another CA: refused at once, naming it.
        for (String[] c : new String[][] {{null, null}, {pem("stranger.pem"), pem("stranger.key")}}) {
            long t0 = System.nanoTime();
            AuthException e = assertThrows(AuthException.class, () -> EtcdLockClient.connect(ClientOptions.builder()
                    .endpoints(ip).timeout(Duration.ofSeconds(5)).tlsPem(pem("ca.pem"), c[0], c[1]).build()));
            assertTrue(System.nanoTime() - t0 < 4_500_000_000L, "not at once");
            assertTrue(e.getMessage().contains("certificate"), e.getMessage());
        }
    }

    // covers: TLS-NAME-001
    @Test
    void aCertificateForAnotherNameNeedsServerName() throws Exception {
        long t0 = System.nanoTime();
        UnavailableException e = assertThrows(UnavailableException.class, () -> EtcdLockClient.connect(ClientOptions
                .builder().endpoints(otherName()).timeout(Duration.ofSeconds(5)).tlsPem(pem("ca.pem"), null, null).build()));
        assertTrue(System.nanoTime() - t0 < 4_500_000_000L, "not at once");
        assertTrue(e.getMessage().toLowerCase().matches("(?s).*server_?name.*"), e.getMessage());
        ClientOptions named = ClientOptions.builder().endpoints(otherName()).timeout(Duration.ofSeconds(5))
                .tlsPem(pem("ca.pem"), null, null).serverName("other.invalid").build();
        assertTrue(named.toString().contains("serverName=other.invalid"), named.toString());
        try (EtcdLockClient c = EtcdLockClient.connect(named)) {
            works(c, Etcd.uniqueName("tls-other-name"));
        }
    }

    // covers: TLS-BADCERT-001
    @Test
    void aCertificateTheCaDidNotSignOrTheWrongSchemeFailInTime() throws Exception {
        // The same member with the CA that signed its certificate works (so the refusal below is the CA's).
        EtcdLockClient.connect(mtls(TlsTest.endpoint()).build()).close();
        long t0 = System.nanoTime();
        UnavailableException e = assertThrows(UnavailableException.class, () -> EtcdLockClient.connect(ClientOptions
                .builder().endpoints(TlsTest.endpoint()).timeout(Duration.ofSeconds(5))
                .tlsPem(pem("other.pem"), pem("client.pem"), pem("client.key")).build()));
        assertTrue(System.nanoTime() - t0 < 4_500_000_000L, "not at once");
        assertTrue(e.getMessage().contains("certificate"), e.getMessage());
        String tlsPort = TlsTest.endpoint().substring(TlsTest.endpoint().lastIndexOf(':') + 1);
        String plain = Etcd.endpoints().split(",")[0];
        String plainPort = plain.substring(plain.lastIndexOf(':') + 1);
        String[][] cases = {{"http://127.0.0.1:" + tlsPort, null}, {"https://127.0.0.1:" + plainPort, "ca"}};
        for (String[] c : cases) {
            ClientOptions.Builder b = ClientOptions.builder().endpoints(c[0]).timeout(Duration.ofSeconds(2));
            if (c[1] != null) {
                b.tlsPem(pem("ca.pem"), null, null);
            }
            ClientOptions o = b.build();
            long t1 = System.nanoTime();
            UnavailableException u = assertThrows(UnavailableException.class, () -> EtcdLockClient.connect(o));
            assertTrue(System.nanoTime() - t1 < 10_000_000_000L, c[0]);
            // The message names the problem ("does the member require TLS? use https://", "TLS handshake failed").
            assertTrue(u.getMessage().matches("(?s).*\\bTLS\\b.*"), u.getMessage());
        }
    }

    // covers: TLS-ARGS-001 (PEM text; http:// mixed with https://)
    @Test
    void malformedPemAndMixedSchemesAreRefusedWithoutShowingSecrets() throws Exception {
        String secret = "-----BEGIN PRIVATE KEY-----\nU0VDUkVULUtFWS1URVhU\n-----END PRIVATE KEY-----\n";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EtcdLockClient.connect(
                ClientOptions.builder().endpoints(TlsTest.endpoint()).tlsPem("not a certificate\n", null, null).build()));
        assertTrue(e.getMessage().contains("ca") && e.getMessage().contains("PEM"), e.getMessage());
        assertFalse(e.getMessage().contains("not a certificate"), e.getMessage());
        ClientOptions withSecret = ClientOptions.builder().endpoints(TlsTest.endpoint())
                .tlsPem(pem("ca.pem"), pem("client.pem"), secret).build();
        e = assertThrows(IllegalArgumentException.class, () -> EtcdLockClient.connect(withSecret));
        assertTrue(e.getMessage().contains("key"), e.getMessage());
        assertFalse(e.getMessage().contains("U0VDUkVU"), "the key's text in a message: " + e.getMessage());
        assertFalse(withSecret.toString().contains("U0VDUkVU"), withSecret.toString());
        assertFalse(withSecret.toString().contains("BEGIN"), withSecret.toString());
        // TLS options with an http:// endpoint; http:// mixed with https://.
        assertThrows(IllegalArgumentException.class, () -> EtcdLockClient.connect(ClientOptions.builder()
                .endpoints(Etcd.endpoints().split(",")[0]).tlsPem(pem("ca.pem"), null, null).build()));
        assertThrows(IllegalArgumentException.class, () -> EtcdLockClient.connect(ClientOptions.builder()
                .endpoints(TlsTest.endpoint(), Etcd.endpoints().split(",")[0]).tlsPem(pem("ca.pem"), null, null).build()));
        // Builder checks: a certificate without its key, an empty or null server name.
        assertThrows(IllegalArgumentException.class, () -> ClientOptions.builder().tlsPem(null, pem("client.pem"), null));
        assertThrows(IllegalArgumentException.class, () -> ClientOptions.builder().serverName(""));
        assertThrows(NullPointerException.class, () -> ClientOptions.builder().serverName(null));
        assertThrows(IllegalArgumentException.class, () -> EtcdLockClient.connect(ClientOptions.builder()
                .endpoints(TlsTest.endpoint()).serverName("not a name!").build()));
    }
}
