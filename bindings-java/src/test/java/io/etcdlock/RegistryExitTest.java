package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A JVM that exits without closing its registrations deregisters them (the loader's shutdown
 * hook closes its client), not after their 30 s TTL.
 */
@Timeout(60)
class RegistryExitTest {
    // covers: REG-EXIT-001
    @Test
    void registrationsAreGoneRightAfterEachExit() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> services = new ArrayList<>();
        List<Process> children = new ArrayList<>();
        // Several runs at once, ending both ways.
        for (int run = 0; run < 4; run++) {
            String svc = Etcd.uniqueName("reg-exit-" + run);
            services.add(svc);
            children.add(new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "io.etcdlock.RegistrantExit",
                    Etcd.endpoints(), svc, run % 2 == 0 ? "exit" : "return").redirectErrorStream(true).start());
        }
        for (int run = 0; run < children.size(); run++) {
            Process child = children.get(run);
            assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child JVM did not exit");
            String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, child.exitValue(), out);
            assertTrue(out.contains("registered 5"), out);
            // Right after the exit, well within the TTL.
            assertEquals(List.of(), Etcd.keysUnder(services.get(run) + "/"), "run " + run + " left instances");
        }
    }
}
