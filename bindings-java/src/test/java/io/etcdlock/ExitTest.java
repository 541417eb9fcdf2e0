package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A JVM that exits without closing anything revokes what it held (the loader's shutdown hook),
 * as the other bindings do at exit: its lock is free at once, not after the 60 s TTL.
 */
class ExitTest {
    void exitsWith(String how) throws Exception {
        String name = Etcd.uniqueName("exit-" + how);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "io.etcdlock.ExitHolder",
                Etcd.endpoints(), name, how).redirectErrorStream(true).start();
        assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child JVM did not exit");
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, child.exitValue(), out);
        String[] held = out.lines().filter(l -> l.startsWith("held ")).findFirst().orElseThrow().split(" ");
        assertEquals(name + "/" + Long.toHexString(Long.parseLong(held[2])), held[1]);
        // Right after the exit, well within the TTL.
        assertEquals(List.of(), Etcd.keysUnder(name));
        List<Long> leases = Etcd.leases();
        assertFalse(leases.contains(Long.parseLong(held[2])), "the lock's lease outlived the JVM");
        assertFalse(leases.contains(Long.parseLong(held[3])), "the lease outlived the JVM");
    }

    @Test
    void systemExitRevokes() throws Exception {
        exitsWith("exit");
    }

    @Test
    void endOfMainRevokes() throws Exception {
        exitsWith("return");
    }
}
