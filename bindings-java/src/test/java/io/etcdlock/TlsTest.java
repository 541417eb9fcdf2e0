package io.etcdlock;

import static io.etcdlock.Etcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * TLS from PEM files against a member that requires client certificates (started by test.sh:
 * ETCDLOCK_MTLS_ENDPOINT, certificates in ETCDLOCK_CERT_DIR).
 */
class TlsTest {
    static String endpoint() {
        String e = System.getenv("ETCDLOCK_MTLS_ENDPOINT");
        if (e == null || e.isEmpty()) {
            fail("ETCDLOCK_MTLS_ENDPOINT is not set: run bindings-java/test.sh");
        }
        return e;
    }

    static Path cert(String file) {
        return Path.of(System.getenv("ETCDLOCK_CERT_DIR"), file);
    }

    static EtcdLockClient connect(String endpoint, Path ca, Path cert, Path key) {
        return EtcdLockClient.connect(ClientOptions.builder().endpoints(endpoint).timeout(Duration.ofSeconds(5))
                .tls(ca, cert, key).build());
    }

    // covers: TLS-MTLS-001 (PEM files)
    @Test
    void clientCertificateSignedByTheCa() throws Exception {
        try (EtcdLockClient client = connect(endpoint(), cert("ca.pem"), cert("client.pem"), cert("client.key"))) {
            String name = Etcd.uniqueName("tls");
            try (LockGuard held = client.lock(name, LockOptions.ttl(Duration.ofSeconds(10))).acquire(Duration.ofSeconds(5))) {
                held.putIfHeld(name + "-data", bytes("over mTLS"));
            }
            assertEquals("over mTLS", Etcd.text(client.get(name + "-data").orElseThrow()));
            client.delete(name + "-data");
        }
    }

    // covers: TLS-MTLS-001 (without a certificate, with one from another CA)
    @Test
    void missingOrForeignClientCertificateIsRefusedAtOnce() {
        Path[][] cases = {{null, null}, {cert("stranger.pem"), cert("stranger.key")}};
        for (Path[] c : cases) {
            long t0 = System.nanoTime();
            AuthException e = assertThrows(AuthException.class, () -> connect(endpoint(), cert("ca.pem"), c[0], c[1]));
            assertTrue(System.nanoTime() - t0 < 4_500_000_000L, "not at once");
            assertTrue(e.getMessage().contains("certificate"), e.getMessage());
        }
    }

    // covers: TLS-ARGS-001 (files; PEM strings are not in the Java API yet)
    @Test
    void unreadableOrMalformedPemIsRefusedNamingTheFile() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> connect(endpoint(), Path.of("/nonexistent/no-such-ca.pem"), null, null));
        assertTrue(e.getMessage().contains("no-such-ca.pem"), e.getMessage());
        Path garbage = Files.createTempFile("javatest-garbage-", ".pem");
        try {
            Files.writeString(garbage, "not a certificate\n");
            e = assertThrows(IllegalArgumentException.class, () -> connect(endpoint(), garbage, null, null));
            assertTrue(e.getMessage().contains(garbage.getFileName().toString()), e.getMessage());
        } finally {
            Files.delete(garbage);
        }
        // TLS options with an http:// endpoint.
        assertThrows(IllegalArgumentException.class, () -> connect(Etcd.endpoints().split(",")[0], cert("ca.pem"), null, null));
    }
}
