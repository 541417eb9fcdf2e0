package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcdlock.fencing.JdbcFence;
import io.etcdlock.fencing.StaleFenceException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A claimed task's {@link Task#fence()}: on the claim's lock, checked by etcd while claimed, and
 * written through the database's mark (SQLite, sqlite-jdbc) so that a delivery given back and
 * claimed again refuses the first delivery's late write.
 */
class TaskFenceTest {
    /** One transaction: the fence's check, then the ledger's row; rolled back if refused. */
    static void write(Connection db, Fence fence, String writer) throws SQLException {
        db.setAutoCommit(false);
        try {
            JdbcFence.check(db, fence);
            try (PreparedStatement st = db.prepareStatement("INSERT INTO ledger (writer, token) VALUES (?, ?)")) {
                st.setString(1, writer);
                st.setLong(2, fence.token());
                st.executeUpdate();
            }
            db.commit();
        } catch (SQLException | RuntimeException e) {
            db.rollback();
            throw e;
        } finally {
            db.setAutoCommit(true);
        }
    }

    static List<String> writers(Connection db) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement st = db.createStatement(); ResultSet rs = st.executeQuery("SELECT writer FROM ledger ORDER BY seq")) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    // covers: FENCE-TASK-001
    @Test
    void aClaimsFenceChecksWhileClaimedAndALaterClaimRefusesTheEarlierOneAtTheDatabase(@TempDir Path dir) throws Exception {
        String qname = Etcd.uniqueName("fence-q");
        try (EtcdLockClient client = Etcd.client();
                Connection db = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("tasks.sqlite"))) {
            JdbcFence.install(db);
            try (Statement st = db.createStatement()) {
                st.execute("CREATE TABLE ledger (seq INTEGER PRIMARY KEY AUTOINCREMENT, writer TEXT, token BIGINT)");
            }
            TaskQueue q = client.queue(qname, QueueOptions.ttl(Duration.ofSeconds(10)));
            q.put(Etcd.bytes("job"), PutOptions.defaults().id("job"));

            Task first = q.claim(Duration.ofSeconds(5));
            Fence f1 = first.fence();
            assertEquals(first.fencingToken(), f1.token());
            assertEquals(Fence.Kind.QUEUE, f1.kind());
            assertTrue(f1.resource().startsWith(qname + "/claim/"), f1.resource());
            assertEquals(f1, first.fence());
            assertTrue(client.checkFence(f1));
            write(db, f1, "first");
            write(db, f1, "first-again"); // the same delivery writes again (>=)
            first.nack();
            assertThrows(NotHeldException.class, first::fence);
            assertFalse(client.checkFence(f1), "a nacked claim's fence checked");

            Task second = q.claim(Duration.ofSeconds(5));
            assertEquals(2, second.attempts());
            Fence f2 = second.fence();
            assertEquals(f1.resource(), f2.resource(), "another item's claim lock");
            assertTrue(f2.token() > f1.token());
            assertTrue(client.checkFence(f2.toString()));
            write(db, f2, "second");
            // The first delivery's late write: refused by the database, nothing of it committed.
            StaleFenceException stale = assertThrows(StaleFenceException.class, () -> write(db, f1, "late"));
            assertInstanceOf(NotHeldException.class, stale);
            assertEquals(f1.resource(), stale.resource());
            assertEquals(List.of("first", "first-again", "second"), writers(db));
            second.ack();
            assertThrows(NotHeldException.class, second::fence);
            assertFalse(client.checkFence(f2), "an acked claim's fence checked");
            second.close();
            assertThrows(NotHeldException.class, second::fence);
            first.close();

            // A claim lost behind its back (its lease revoked): no fence either.
            q.put(Etcd.bytes("job2"), PutOptions.defaults().id("job2"));
            Task third = q.claim(Duration.ofSeconds(5));
            Fence f3 = third.fence();
            Etcd.etcdctl("lease", "revoke", Long.toHexString(leaseOf(third)));
            assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> !third.isHeld()), "the revoked claim still held");
            assertThrows(NotHeldException.class, third::fence);
            assertFalse(client.checkFence(f3));
            assertThrows(LockLostException.class, third::close);
        }
    }

    /** The lease a claim lives on: the last part of its key, {@code <claim lock>/<lease hex>}. */
    static long leaseOf(Task task) {
        String lock = task.fence().resource();
        List<String> keys = Etcd.keysUnder(lock + "/");
        assertEquals(1, keys.size(), "claim keys under " + lock + ": " + keys);
        return Long.parseUnsignedLong(keys.get(0).substring(lock.length() + 1), 16);
    }
}
