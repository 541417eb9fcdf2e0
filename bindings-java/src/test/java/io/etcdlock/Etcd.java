package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The etcd the tests run against (started by test.sh with tests/etcd_harness.py; its endpoints in
 * ETCDLOCK_ENDPOINTS, etcdctl in ETCDLOCK_ETCDCTL), and raw access to it through etcdctl, which
 * sees etcd's state independently of the code under test. Missing variables fail the tests: a
 * suite that did not run must not look green.
 */
final class Etcd {
    private Etcd() {}

    static String endpoints() {
        String e = System.getenv("ETCDLOCK_ENDPOINTS");
        if (e == null || e.isEmpty()) {
            fail("ETCDLOCK_ENDPOINTS is not set: run bindings-java/test.sh, which starts etcd");
        }
        return e;
    }

    static EtcdLockClient client() {
        return EtcdLockClient.connect(ClientOptions.builder().endpoints(endpoints().split(","))
                .timeout(Duration.ofSeconds(5)).build());
    }

    /** A lock name no other test uses. */
    static String uniqueName(String what) {
        return "java-test/" + what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Runs etcdctl against the test etcd; its stdout. Fails the test on a non-zero exit or after 20 s. */
    static String etcdctl(String... args) {
        String bin = System.getenv("ETCDLOCK_ETCDCTL");
        if (bin == null || bin.isEmpty()) {
            fail("ETCDLOCK_ETCDCTL is not set: run bindings-java/test.sh");
        }
        List<String> cmd = new ArrayList<>(List.of(bin, "--endpoints=" + endpoints()));
        cmd.addAll(Arrays.asList(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail("etcdctl timed out: " + cmd);
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), "etcdctl " + cmd + " failed: " + out);
            return out;
        } catch (IOException e) {
            throw new AssertionError("cannot run etcdctl", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** The keys under {@code prefix}, read by etcdctl. */
    static List<String> keysUnder(String prefix) {
        List<String> keys = new ArrayList<>();
        for (String line : etcdctl("get", "--prefix", "--keys-only", prefix).split("\n")) {
            if (!line.isBlank()) {
                keys.add(line.trim());
            }
        }
        return keys;
    }

    /** The IDs of the leases etcd has, read by etcdctl (which prints them in zero-padded hex). */
    static List<Long> leases() {
        List<Long> ids = new ArrayList<>();
        for (String line : etcdctl("lease", "list").split("\n")) {
            if (line.startsWith("found")) {
                continue;
            }
            if (!line.isBlank()) {
                ids.add(Long.parseUnsignedLong(line.trim(), 16));
            }
        }
        return ids;
    }

    /** Waits for {@code condition}, at most {@code limit} (polling every 20 ms). */
    static boolean eventually(Duration limit, BooleanSupplier condition) {
        long end = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < end) {
            if (condition.getAsBoolean()) {
                return true;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return condition.getAsBoolean();
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
