package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** One election with `etcdctl elect` (Go's concurrency.Election). */
@Timeout(60)
class ElectionInteropTest {
    static final Duration TTL = Duration.ofSeconds(10);

    /** An etcdctl process and its output lines, read by a daemon thread. */
    static final class Etcdctl implements AutoCloseable {
        final Process process;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

        Etcdctl(String... args) throws Exception {
            List<String> cmd = new java.util.ArrayList<>(List.of(System.getenv("ETCDLOCK_ETCDCTL"), "--endpoints=" + Etcd.endpoints()));
            cmd.addAll(List.of(args));
            process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            Thread t = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String l = r.readLine(); l != null; l = r.readLine()) {
                        lines.add(l);
                    }
                } catch (java.io.IOException ended) {
                    // the process is gone
                }
            });
            t.setDaemon(true);
            t.start();
        }

        /** Whether it printed {@code line} within 10 s. */
        boolean printed(String line) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            for (String l; (l = lines.poll(end - System.nanoTime(), TimeUnit.NANOSECONDS)) != null;) {
                if (l.equals(line)) {
                    return true;
                }
            }
            return false;
        }

        /** SIGINT: `etcdctl elect` resigns on it. Then waits for the exit. */
        void interrupt() throws Exception {
            new ProcessBuilder("kill", "-INT", Long.toString(process.pid())).start().waitFor(5, TimeUnit.SECONDS);
            assertTrue(process.waitFor(10, TimeUnit.SECONDS), "etcdctl did not exit on SIGINT");
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    // covers: ELECT-INTEROP-001
    @Test
    void etcdctlElectAndOursShareOneElection() throws Exception {
        String name = Etcd.uniqueName("elect-interop");
        try (EtcdLockClient client = Etcd.client()) {
            Election election = client.election(name, TTL);
            // etcdctl leads; ours waits and sees its proposal.
            try (Etcdctl theirs = new Etcdctl("elect", name, "theirs")) {
                assertTrue(theirs.printed("theirs"), "etcdctl never led");
                CompletableFuture<Leadership> ours = election.campaignAsync(Etcd.bytes("ours"), Duration.ofSeconds(20));
                assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> Etcd.keysUnder(name + "/").size() == 2));
                assertEquals("theirs", election.leader().orElseThrow().valueString());
                Thread.sleep(300);
                assertFalse(ours.isDone(), "ours led while etcdctl did");
                theirs.interrupt();
                try (Leadership leading = ours.get(10, TimeUnit.SECONDS)) {
                    // Ours leads: `etcdctl elect -l` prints our proposal, then our proclamation.
                    try (Etcdctl listen = new Etcdctl("elect", "-l", name); Etcdctl next = new Etcdctl("elect", name, "theirs-2")) {
                        assertTrue(listen.printed("ours"), "etcdctl elect -l did not print our leader");
                        leading.proclaim("ours, proclaimed");
                        assertTrue(listen.printed("ours, proclaimed"), "etcdctl elect -l missed the proclamation");
                        assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> Etcd.keysUnder(name + "/").size() == 2));
                        assertTrue(next.lines.stream().noneMatch("theirs-2"::equals), "etcdctl led while ours did");
                        leading.resign();
                        assertTrue(next.printed("theirs-2"), "etcdctl did not lead after ours resigned");
                        assertEquals("theirs-2", election.leader().orElseThrow().valueString());
                        next.interrupt();
                    }
                }
            }
            assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> Etcd.keysUnder(name + "/").isEmpty()));
        }
    }
}
