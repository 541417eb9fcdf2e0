package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcdlock.examples.FenceExample;
import io.etcdlock.fencing.JdbcFence;
import io.etcdlock.fencing.StaleFenceException;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fencing at the database: {@link Fence} from a held lock, {@link EtcdLockClient#checkFence}, and
 * {@link JdbcFence} checking and raising the mark inside the writer's own transaction on a real
 * PostgreSQL (tests/pg_harness.py, started here: no mock, no skip) and on SQLite (sqlite-jdbc).
 */
class JdbcFenceTest {
    static Postgres pg;
    static EtcdLockClient client;
    static long cluster;

    @BeforeAll
    static void start() throws Exception {
        pg = Postgres.start();
        client = Etcd.client();
        Matcher m = Pattern.compile("\"cluster_id\":(\\d+)").matcher(Etcd.etcdctl("get", "x", "-w", "json"));
        assertTrue(m.find(), "etcdctl printed no cluster_id");
        cluster = Long.parseUnsignedLong(m.group(1));
        try (Connection conn = pg.connect()) {
            JdbcFence.install(conn);
            JdbcFence.install(conn); // IF NOT EXISTS: twice is fine
            try (Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE ledger (seq BIGSERIAL PRIMARY KEY, resource TEXT, writer TEXT, token BIGINT)");
            }
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        if (pg != null) {
            pg.close();
        }
    }

    /** One transaction: the check, then the write; rolled back on any failure. */
    static void write(Connection conn, Object fence, String writer, String resource) throws SQLException {
        Fence f = fence instanceof Fence x ? x : Fence.parse((String) fence);
        conn.setAutoCommit(false);
        try {
            if (fence instanceof String s) {
                JdbcFence.check(conn, s, resource);
            } else {
                JdbcFence.check(conn, f, resource);
            }
            try (PreparedStatement st = conn.prepareStatement("INSERT INTO ledger (resource, writer, token) VALUES (?, ?, ?)")) {
                st.setString(1, resource == null ? f.resource() : resource);
                st.setString(2, writer);
                st.setLong(3, f.token());
                st.executeUpdate();
            }
            conn.commit();
        } catch (SQLException | RuntimeException e) {
            conn.rollback();
            throw e;
        } finally {
            conn.setAutoCommit(true);
        }
    }

    static List<String> writers(Connection conn, String resource) throws SQLException {
        List<String> out = new ArrayList<>();
        try (PreparedStatement st = conn.prepareStatement("SELECT writer FROM ledger WHERE resource = ? ORDER BY seq")) {
            st.setString(1, resource);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
        }
        return out;
    }

    // covers: FENCE-DB-001
    @Test
    void holdersInTurnCommitAndAnOlderTokenIsRefused() throws Exception {
        String name = Etcd.uniqueName("fence-db");
        DistributedLock lock = client.lock(name, LockOptions.ttl(Duration.ofSeconds(10)));
        try (Connection conn = pg.connect()) {
            Fence first;
            try (LockGuard held = lock.acquire(Duration.ofSeconds(10))) {
                first = held.fence();
                assertEquals(new Fence(Fence.Kind.QUEUE, Etcd.bytes(name), held.fencingToken(), cluster), first);
                write(conn, first, "a", null);
                write(conn, first, "a-again", null); // the same holder's repeated writes pass (>=)
            }
            Fence second;
            try (LockGuard held = lock.acquire(Duration.ofSeconds(10))) {
                second = held.fence();
                assertTrue(second.token() > first.token());
                write(conn, second.toString(), "b", null); // the string form, as another process gets it
            }
            StaleFenceException stale = assertThrows(StaleFenceException.class, () -> write(conn, first, "late", null));
            assertInstanceOf(NotHeldException.class, stale);
            assertEquals("NOT_HELD", stale.kind());
            assertTrue(stale.getMessage().contains("newer holder") && stale.getMessage().contains(String.valueOf(second.token())), stale.getMessage());
            assertFalse(stale.otherCluster());
            assertEquals(name, stale.resource());
            assertEquals(List.of("a", "a-again", "b"), writers(conn, name), "the refused transaction committed");
            // Two resources keep independent marks.
            write(conn, first, "other", name + "-other");
            assertEquals(List.of("other"), writers(conn, name + "-other"));
            // Another cluster's fence is refused, however new its token, naming the reset.
            Fence alien = new Fence(Fence.Kind.QUEUE, Etcd.bytes(name), second.token() + 1000, cluster ^ 1);
            StaleFenceException other = assertThrows(StaleFenceException.class, () -> write(conn, alien, "alien", null));
            assertTrue(other.otherCluster() && other.getMessage().contains("reset the mark")
                    && other.getMessage().contains("DELETE FROM etcdlock_fence WHERE resource = '" + name + "'"), other.getMessage());
            assertEquals(List.of("a", "a-again", "b"), writers(conn, name));
            // The check must run inside the transaction that writes.
            conn.setAutoCommit(true);
            assertThrows(IllegalStateException.class, () -> JdbcFence.check(conn, second));
            conn.setAutoCommit(false);
            assertThrows(IllegalArgumentException.class, () -> JdbcFence.check(conn, second, ""));
            assertThrows(IllegalArgumentException.class, () -> JdbcFence.check(conn, "etcdlock-fence.v1.q.1.0.61", null));
            conn.rollback();
        }
    }

    // covers: FENCE-DB-001
    @Test
    void sqliteRefusesAnOlderTokenToo(@TempDir Path dir) throws Exception {
        String name = Etcd.uniqueName("fence-sqlite");
        DistributedLock lock = client.lock(name, LockOptions.ttl(Duration.ofSeconds(10)));
        try (Connection conn = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("db.sqlite"))) {
            JdbcFence.install(conn);
            try (Statement st = conn.createStatement()) {
                st.execute("CREATE TABLE ledger (seq INTEGER PRIMARY KEY AUTOINCREMENT, resource TEXT, writer TEXT, token BIGINT)");
            }
            Fence old;
            try (LockGuard held = lock.acquire(Duration.ofSeconds(10))) {
                old = held.fence();
                write(conn, old, "a", null);
                write(conn, old, "a2", null);
            }
            Fence next;
            try (LockGuard held = lock.acquire(Duration.ofSeconds(10))) {
                next = held.fence();
                write(conn, next, "b", null);
            }
            assertThrows(StaleFenceException.class, () -> write(conn, old, "late", null));
            assertEquals(List.of("a", "a2", "b"), writers(conn, name));
            write(conn, old, "other", name + "-other");
            StaleFenceException other = assertThrows(StaleFenceException.class,
                    () -> write(conn, new Fence(Fence.Kind.QUEUE, Etcd.bytes(name), next.token() + 1, cluster ^ 1), "alien", null));
            assertTrue(other.otherCluster() && other.getMessage().contains("reset the mark"), other.getMessage());
            assertEquals(List.of("a", "a2", "b"), writers(conn, name));
        }
    }

    // covers: FENCE-PAUSE-001
    @Test
    void aHolderPausedPastItsTtlIsRefusedByTheDatabase() throws Exception {
        String name = Etcd.uniqueName("fence-paused");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "io.etcdlock.FencedHolder", Etcd.endpoints(), name, pg.url)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        try (Connection conn = pg.connect()) {
            Fence a = Fence.parse(line(out, 30));
            signal(child, "STOP");
            try {
                assertTrue(client.checkFence(a));
                try (LockGuard held = client.lock(name, LockOptions.ttl(Duration.ofSeconds(10))).acquire(Duration.ofSeconds(10))) {
                    assertFalse(client.checkFence(a), "an expired holder's fence still checks");
                    Fence b = held.fence();
                    assertTrue(b.token() > a.token());
                    write(conn, b, "next", null);
                }
            } finally {
                signal(child, "CONT");
            }
            OutputStream in = child.getOutputStream();
            in.write("go\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
            assertEquals("refused", line(out, 30));
            assertEquals(List.of("next"), writers(conn, name), "the paused holder's write committed");
        } finally {
            if (!child.waitFor(20, TimeUnit.SECONDS)) {
                child.destroyForcibly();
            }
        }
    }

    static String line(BufferedReader out, int seconds) throws Exception {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (java.io.IOException e) {
                return null;
            }
        }).get(seconds, TimeUnit.SECONDS);
    }

    static void signal(Process p, String sig) throws Exception {
        Process k = new ProcessBuilder("kill", "-" + sig, String.valueOf(p.pid())).start();
        assertTrue(k.waitFor(10, TimeUnit.SECONDS) && k.exitValue() == 0, "kill -" + sig);
    }

    // covers: FENCE-CONCURRENT-001
    @Test
    void eightWritersUnderReadCommittedNeverCommitAStaleToken() throws Exception {
        String name = Etcd.uniqueName("fence-busy");
        List<Long> tokens = new ArrayList<>();
        for (long t = 100; t < 140; t++) {
            tokens.add(t);
        }
        List<Long> committed = Collections.synchronizedList(new ArrayList<>());
        List<Long> refused = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<?>> writers = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                int w = i;
                writers.add(pool.submit(() -> {
                    try (Connection c = pg.connect()) {
                        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                        c.setAutoCommit(false);
                        go.await();
                        for (int k = w; k < tokens.size(); k += 8) {
                            long token = tokens.get(k);
                            try {
                                JdbcFence.check(c, new Fence(Fence.Kind.QUEUE, Etcd.bytes(name), token, cluster));
                                // A window between the check and the commit for the others to race into.
                                Thread.sleep(ThreadLocalRandom.current().nextInt(3));
                                try (PreparedStatement st = c.prepareStatement("INSERT INTO ledger (resource, writer, token) VALUES (?, ?, ?)")) {
                                    st.setString(1, name);
                                    st.setString(2, "w" + w);
                                    st.setLong(3, token);
                                    st.executeUpdate();
                                }
                                c.commit();
                                committed.add(token);
                            } catch (StaleFenceException e) {
                                c.rollback();
                                refused.add(token);
                            }
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : writers) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(tokens.size(), committed.size() + refused.size(), "a write was neither committed nor refused");
        List<Long> inOrder = new ArrayList<>();
        try (Connection conn = pg.connect();
                PreparedStatement st = conn.prepareStatement("SELECT token FROM ledger WHERE resource = ? ORDER BY seq")) {
            st.setString(1, name);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    inOrder.add(rs.getLong(1));
                }
            }
        }
        List<Long> sortedCommitted = new ArrayList<>(committed);
        Collections.sort(sortedCommitted);
        List<Long> sorted = new ArrayList<>(inOrder);
        Collections.sort(sorted);
        assertEquals(sortedCommitted, sorted, "the table holds other writes than those committed");
        // In commit order (the ledger's sequence, taken while the mark's row is locked), tokens never go back.
        assertEquals(sorted, inOrder, "a stale token committed after a newer one: " + inOrder);
        assertTrue(committed.contains(139L), "the newest token was refused");
        System.out.println("FENCE-CONCURRENT-001: " + committed.size() + " committed, " + refused.size() + " refused");
    }

    // covers: FENCE-CHECK-001
    @Test
    void checkFenceIsTrueWhileHeldFalseAfterReleaseExpiryOrForAnotherCluster() throws Exception {
        String name = Etcd.uniqueName("fence-check");
        DistributedLock lock = client.lock(name, LockOptions.ttl(Duration.ofSeconds(10)));
        Fence f;
        try (LockGuard held = lock.acquire(Duration.ofSeconds(10));
                EtcdLockClient waiterClient = Etcd.client()) {
            f = held.fence();
            assertEquals(f, held.fence());
            assertEquals(List.of(Fence.Kind.QUEUE, name, held.fencingToken(), cluster), List.of(f.kind(), f.resource(), f.token(), f.cluster()));
            assertTrue(client.checkFence(f) && client.checkFence(f.toString()));
            assertFalse(client.checkFence(new Fence(f.kind(), f.name(), f.token(), f.cluster() ^ 1)), "another cluster's fence checked");
            // A waiter behind it: released, the next holder's fence checks, the first's does not.
            CompletableFuture<LockGuard> next = waiterClient.lock(name, LockOptions.ttl(Duration.ofSeconds(10))).acquireAsync(Duration.ofSeconds(10));
            assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> Etcd.keysUnder(name + "/").size() == 2));
            held.release();
            assertThrows(NotHeldException.class, held::fence);
            try (LockGuard second = next.get(10, TimeUnit.SECONDS)) {
                Fence g = second.fence();
                assertTrue(g.token() > f.token() && waiterClient.checkFence(g) && client.checkFence(g));
                assertFalse(client.checkFence(f), "a released acquisition's fence checked");
            }
        }
        // Expiry: the holder's lease revoked behind its back.
        try (LockGuard held = lock.acquire(Duration.ofSeconds(10))) {
            Fence g = held.fence();
            assertTrue(client.checkFence(g));
            Etcd.etcdctl("lease", "revoke", Long.toHexString(held.leaseId()));
            assertFalse(client.checkFence(g), "an expired acquisition's fence checked");
        } catch (LockLostException e) {
            // close() reports the loss: expected
        }
        assertThrows(IllegalArgumentException.class, () -> client.checkFence("etcdlock-fence.v1.q.1.1.6"));
        // A write lock's and a leader's fences: the same kind, on their names.
        DistributedReadWriteLock rw = client.rwlock(name + "-rw", LockOptions.ttl(Duration.ofSeconds(10)));
        try (LockGuard w = rw.writeLock().acquire(Duration.ofSeconds(10))) {
            assertTrue(client.checkFence(w.fence()));
        }
        Fence lf;
        try (Leadership leading = client.election(name + "-el", Duration.ofSeconds(10)).campaign("me", Duration.ofSeconds(10))) {
            lf = leading.fence();
            assertEquals(name + "-el", lf.resource());
            assertTrue(client.checkFence(lf));
        }
        assertFalse(client.checkFence(lf));
    }

    @Test
    void aFencesStringFormIsTheOneEveryBindingWritesAndReads() throws Exception {
        // The core's own fixture (core/src/sync/fence/mod.rs).
        Fence f = new Fence(Fence.Kind.QUEUE, Etcd.bytes("accounts/7"), 1234, 0xdead_beef_0102L);
        String s = "etcdlock-fence.v1.q.deadbeef0102.1234.6163636f756e74732f37";
        assertEquals(s, f.toString());
        assertEquals(f, Fence.parse(s));
        Fence k = new Fence(Fence.Kind.KEY, f.name(), f.token(), -1L); // the cluster is unsigned
        assertEquals("etcdlock-fence.v1.k.ffffffffffffffff.1234.6163636f756e74732f37", k.toString());
        assertEquals(k, Fence.parse(k.toString()));
        for (String bad : List.of("", "etcdlock-fence.v1.q.zz.1.61", "etcdlock-fence.v1.x.1.1.61", "etcdlock-fence.v1.q.1.0.61",
                "etcdlock-fence.v1.q.1.1.6", "etcdlock-fence.v1.q.1.1.", "etcdlock-fence.v1.q.1.01.61", "etcdlock-fence.v1.q.1.+1.61",
                "etcdlock-fence.v1.q.1.1.61.62", "etcdlock-fence.v1.q.1.9223372036854775808.61", "etcdlock-fence.v1.q.11111111111111111.1.61")) {
            assertThrows(IllegalArgumentException.class, () -> Fence.parse(bad), bad);
        }
        // A lock's fence through its string form: checks while held, not after.
        String name = Etcd.uniqueName("fence-string");
        try (LockGuard held = client.lock(name, LockOptions.ttl(Duration.ofSeconds(10))).acquire(Duration.ofSeconds(10))) {
            String mine = held.fence().toString();
            assertEquals(held.fence(), Fence.parse(mine));
            assertTrue(client.checkFence(mine));
            held.release();
            assertFalse(client.checkFence(mine));
        }
    }

    /** The README's example (examples/io/etcdlock/examples/FenceExample.java) runs to its end. */
    @Test
    void fenceExampleRuns() throws Exception {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            FenceExample.main(new String[] {Etcd.endpoints()});
        } finally {
            System.setOut(out);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        System.out.print(text);
        assertTrue(text.startsWith("holds: true\nrefused: stale fence for \"readme/accounts/7\""), text);
        assertTrue(text.endsWith("holds: false\nbalance 80\ndone\n"), text);
    }

    /** Every line of the README's database block is a line of the example, in order. */
    @Test
    void theReadmeShowsTheFenceExample() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        int start = readme.indexOf("```java\n", readme.indexOf("## Database access control"));
        assertTrue(start > 0, "no java block in the README's database access control section");
        List<String> block = readme.substring(start + 8, readme.indexOf("```\n", start + 8)).lines().map(String::strip)
                .filter(l -> !l.isEmpty()).collect(Collectors.toList());
        List<String> example = Files.readAllLines(Path.of("examples/io/etcdlock/examples/FenceExample.java")).stream().map(String::strip)
                .collect(Collectors.toList());
        int at = 0;
        for (String line : block) {
            while (at < example.size() && !example.get(at).equals(line)) {
                at++;
            }
            assertTrue(at < example.size(), "the README's line is not in FenceExample.java (in order): " + line);
            at++;
        }
    }
}
