package io.etcdlock;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway PostgreSQL for the fencing tests, started by the repository's tests/pg_harness.py
 * (initdb in a temp dir, 127.0.0.1 on a free port, as a non-root user) and stopped by its state
 * file. No mock and no skip: without PostgreSQL (scripts/install-deps.sh installs Debian's) the
 * tests fail.
 */
final class Postgres implements AutoCloseable {
    private final Path dir;
    private final Path state;
    /** {@code jdbc:postgresql://127.0.0.1:<port>/postgres?user=etcdlock} */
    final String url;

    private Postgres(Path dir, Path state, String url) {
        this.dir = dir;
        this.state = state;
        this.url = url;
    }

    static Path harness() {
        Path h = Path.of(System.getProperty("user.dir")).resolve("../tests/pg_harness.py").normalize();
        if (!Files.isRegularFile(h)) {
            fail("tests/pg_harness.py not found at " + h);
        }
        return h;
    }

    static Postgres start() throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("etcdlock-java-pg");
        Path state = dir.resolve("pg.json");
        String dsn = run(120, "start", state.toString()).strip();
        // "host=127.0.0.1 port=N user=etcdlock dbname=postgres"
        Map<String, String> kv = new HashMap<>();
        for (String part : dsn.split("\\s+")) {
            int eq = part.indexOf('=');
            if (eq > 0) {
                kv.put(part.substring(0, eq), part.substring(eq + 1));
            }
        }
        if (!kv.keySet().containsAll(java.util.List.of("host", "port", "user", "dbname"))) {
            fail("pg_harness printed no DSN: " + dsn);
        }
        return new Postgres(dir, state, "jdbc:postgresql://" + kv.get("host") + ":" + kv.get("port") + "/" + kv.get("dbname") + "?user=" + kv.get("user"));
    }

    private static String run(int seconds, String cmd, String state) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("python3", harness().toString(), cmd, "--state", state).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("pg_harness " + cmd + " timed out");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            fail("pg_harness " + cmd + " failed (is PostgreSQL installed? scripts/install-deps.sh installs it): " + out);
        }
        return out;
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(url);
    }

    @Override
    public void close() throws IOException {
        try {
            run(60, "stop", state.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while stopping PostgreSQL", e);
        }
        Files.deleteIfExists(state);
        Files.deleteIfExists(dir);
    }
}
