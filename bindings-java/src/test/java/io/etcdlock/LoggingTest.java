package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/** The core's log records on the SLF4J logger "etcdlock"; silence without a provider or without SLF4J. */
class LoggingTest {
    static List<RecordingLogProvider.Rec> about(String lock) {
        return RecordingLogProvider.RECORDS.stream().filter(r -> lock.equals(r.fields().get("lock")))
                .collect(Collectors.toList());
    }

    // covers: OBS-EVENT-001
    @Test
    void aLostLockIsAWarningAndCyclesAreDebugRecords() throws Exception {
        String lostName = Etcd.uniqueName("log-lost");
        String okName = Etcd.uniqueName("log-ok");
        try (EtcdLockClient client = Etcd.client()) {
            LockGuard lost = client.lock(lostName, LockOptions.ttl(Duration.ofSeconds(10))).acquire(Duration.ofSeconds(5));
            Etcd.etcdctl("del", lost.key());
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> about(lostName).stream().anyMatch(r -> r.level() == Level.WARN)),
                    "no WARN record for the lost lock: " + about(lostName));
            RecordingLogProvider.Rec warn = about(lostName).stream().filter(r -> r.level() == Level.WARN).findFirst().orElseThrow();
            assertTrue(warn.message().startsWith("lock lost"), warn.message());
            assertEquals("lock", warn.fields().get("area"));
            assertEquals(lost.fencingToken(), warn.fields().get("token"));
            assertEquals("key_deleted", warn.fields().get("reason"));
            assertTrue(warn.fields().get("held_ms") instanceof Long, warn.fields().toString());
            // The text carries the fields too, for plain-text logs.
            assertTrue(warn.message().contains("lock=" + lostName) && warn.message().contains("reason=key_deleted"), warn.message());
            assertEquals("etcdlock-log", warn.thread());

            long token;
            try (LockGuard ok = client.lock(okName, LockOptions.ttl(Duration.ofSeconds(10))).acquire(Duration.ofSeconds(5))) {
                token = ok.fencingToken();
            }
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> about(okName).stream().anyMatch(
                    r -> r.message().startsWith("lock released"))), "no release record: " + about(okName));
            List<RecordingLogProvider.Rec> ok = about(okName);
            RecordingLogProvider.Rec acquired = ok.stream().filter(r -> r.message().startsWith("lock acquired")).findFirst()
                    .orElseThrow(() -> new AssertionError("no acquisition record: " + ok));
            assertEquals(Level.DEBUG, acquired.level());
            assertEquals(token, acquired.fields().get("token"));
            RecordingLogProvider.Rec released = ok.stream().filter(r -> r.message().startsWith("lock released")).findFirst().orElseThrow();
            assertEquals(Level.DEBUG, released.level());
            assertEquals(token, released.fields().get("token"));
            Thread.sleep(300);
            assertTrue(about(okName).stream().noneMatch(r -> r.message().startsWith("lock lost")), "a released lock reported lost");
        }
    }

    /** A program run in its own JVM: a lock lost (a WARN record in the core) and a lock cycle. */
    static final String PROGRAM = String.join("\n",
            "import io.etcdlock.*;",
            "import java.time.Duration;",
            "public class Quiet {",
            "  public static void main(String[] a) throws Exception {",
            "    try (EtcdLockClient c = EtcdLockClient.connect(ClientOptions.builder().endpoints(a[0]).build())) {",
            "      LockGuard g = c.lock(a[1], LockOptions.ttl(Duration.ofSeconds(10))).acquire(Duration.ofSeconds(5));",
            "      c.delete(g.key());",
            "      for (int i = 0; i < 250 && g.isHeld(); i++) Thread.sleep(20);",
            "      c.lock(a[1], LockOptions.ttl(Duration.ofSeconds(10))).acquire(Duration.ofSeconds(5)).close();",
            "      Thread.sleep(300);",
            "    }",
            "    System.out.println(\"done\");",
            "  }",
            "}", "");

    static String run(Path source, String classpath) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-cp", classpath, source.toString(), Etcd.endpoints().split(",")[0],
                Etcd.uniqueName("quiet")).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the child JVM did not exit");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    static String location(Class<?> c) throws Exception {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    // covers: OBS-EVENT-001 (nothing printed without an SLF4J provider, nor without slf4j-api)
    @Test
    void silentWithoutAProviderAndWithoutSlf4j() throws Exception {
        Path dir = Files.createTempDirectory("etcdlock-quiet-");
        Path source = dir.resolve("Quiet.java");
        try {
            Files.writeString(source, PROGRAM);
            String classes = location(EtcdLockClient.class); // target/classes: no test provider there
            assertEquals("done\n", run(source, classes + ":" + location(LoggerFactory.class)), "slf4j-api, no provider");
            assertEquals("done\n", run(source, classes), "no slf4j-api at all");
        } finally {
            Files.deleteIfExists(source);
            Files.deleteIfExists(dir);
        }
    }
}
