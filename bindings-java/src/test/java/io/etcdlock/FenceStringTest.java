package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A fence's string form crossing languages: Java's fences read by Python's parser, fences Python
 * makes from their parts parsed and checked here, and the same malformed strings refused by both.
 * Python's side is its pure-Python parser ({@code etcdlock.fencing._fence}, which
 * {@code etcdlock.Fence} is), loaded from the source tree: it needs no native module, so the test
 * does not depend on the Python binding being built or installed first (as Node's fencing test).
 */
class FenceStringTest {
    /** Strings that are not fences (Java's own list, and what a lax parser would take: a sign, {@code _}, spaces, more than 64 bits). */
    static final List<String> MALFORMED = List.of("", "etcdlock-fence.v1.q.zz.1.61", "etcdlock-fence.v1.x.1.1.61", "etcdlock-fence.v1.q.1.0.61",
            "etcdlock-fence.v1.q.1.1.6", "etcdlock-fence.v1.q.1.1.", "etcdlock-fence.v1.q.1.01.61", "etcdlock-fence.v1.q.1.+1.61",
            "etcdlock-fence.v1.q.1.1.61.62", "etcdlock-fence.v1.q.1.9223372036854775808.61", "etcdlock-fence.v1.q.11111111111111111.1.61",
            "etcdlock-fence.v1.q.+1.1.61", "etcdlock-fence.v1.q.-1.1.61", "etcdlock-fence.v1.q.1_0.1.61", "etcdlock-fence.v1.q. 1.1.61",
            "etcdlock-fence.v1.q..1.61", "etcdlock-fence.v1.q.1.1.6 1", "etcdlock-fence.v1.q.1.1_2.61", "etcdlock-fence.v1.q.1.1.61\n");

    static Path pythonFence() {
        Path p = Path.of(System.getProperty("user.dir")).resolve("../bindings-python/python/etcdlock/fencing/_fence.py").normalize();
        if (!Files.isRegularFile(p)) {
            fail("Python's fence parser not found at " + p);
        }
        return p;
    }

    /** Runs {@code program} in python3 with Python's {@code Fence} in scope; its stdout lines. */
    static List<String> python(String program, String... args) throws Exception {
        String head = "import importlib.util, sys\n"
                + "spec = importlib.util.spec_from_file_location('etcdlock_fence', sys.argv[1])\n"
                + "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); Fence = m.Fence\n"
                + "args = sys.argv[2:]\n";
        List<String> cmd = new ArrayList<>(List.of("python3", "-c", head + program, pythonFence().toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put("PYTHONIOENCODING", "utf-8");
        Process p = pb.start();
        p.getOutputStream().close();
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> {
            try {
                return p.getInputStream().readAllBytes();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("python3 did not finish in 30 s");
        }
        assertEquals(0, p.exitValue(), "python3 failed (its stderr is above)");
        return new String(out.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8).lines().toList();
    }

    // covers: FENCE-STRING-001
    @Test
    void fencesCrossBetweenJavaAndPythonAndBothRefuseTheSameMalformedStrings() throws Exception {
        String name = Etcd.uniqueName("fence-string") + "/é";
        try (EtcdLockClient client = Etcd.client()) {
            LockGuard held = client.lock(name, LockOptions.ttl(Duration.ofSeconds(10))).acquire(Duration.ofSeconds(10));
            Fence f = held.fence();
            // Java -> Python: the parts Python reads (the name in hex: any bytes), and the string it writes back.
            List<String> read = python("f = Fence.parse(args[0])\nprint(f.kind); print(f.name.hex()); print(f.token); print(f.cluster); print(str(f)); print(f.resource)",
                    f.toString());
            assertEquals(List.of("q", HexFormat.of().formatHex(Etcd.bytes(name)), String.valueOf(f.token()), Long.toUnsignedString(f.cluster()), f.toString()),
                    read.subList(0, 5));
            assertEquals(name, read.get(5), "Python's resource (printed as UTF-8)");
            // Python -> Java: a fence Python makes from its parts (etcdlock.Fence(kind, name, token, cluster)), parsed and checked here.
            String made = python("print(Fence('q', args[0].encode(), int(args[1]), int(args[2])))", name, String.valueOf(f.token()),
                    Long.toUnsignedString(f.cluster())).get(0);
            Fence parsed = Fence.parse(made);
            assertEquals(f, parsed, made);
            assertEquals(f.toString(), made);
            assertTrue(client.checkFence(made), "a Python-made fence of the holder did not check");
            // A cluster ID with the top bit set (unsigned in both): the same string both ways.
            String high = python("print(Fence('k', b'slot', 7, 2**64 - 2))").get(0);
            assertEquals(new Fence(Fence.Kind.KEY, Etcd.bytes("slot"), 7, -2L), Fence.parse(high));
            assertEquals(List.of(high), python("print(Fence.parse(args[0]))", high));
            held.release();
            assertFalse(client.checkFence(made), "a released holder's fence checked");
            assertFalse(client.checkFence(parsed));
            // What either parser refuses, the other refuses too.
            for (String bad : MALFORMED) {
                assertThrows(IllegalArgumentException.class, () -> Fence.parse(bad), bad);
                assertThrows(IllegalArgumentException.class, () -> client.checkFence(bad), bad);
            }
            List<String> verdicts = python("for s in args:\n    try:\n        Fence.parse(s); print('parsed ' + repr(s))\n    except ValueError:\n        print('refused')",
                    MALFORMED.toArray(String[]::new));
            List<String> refused = MALFORMED.stream().map(s -> "refused").toList();
            assertEquals(refused, verdicts, "Python's parser took a string Java refuses");
        }
    }
}
