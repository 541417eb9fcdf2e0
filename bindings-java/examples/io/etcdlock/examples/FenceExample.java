package io.etcdlock.examples;

import io.etcdlock.ClientOptions;
import io.etcdlock.DistributedLock;
import io.etcdlock.EtcdLockClient;
import io.etcdlock.Fence;
import io.etcdlock.LockGuard;
import io.etcdlock.LockOptions;
import io.etcdlock.fencing.JdbcFence;
import io.etcdlock.fencing.StaleFenceException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * The README's database access control example: two holders of a lock debit an account through
 * their fences, and the first holder's late write is refused by the database. SQLite in memory
 * (sqlite-jdbc on the class path); with PostgreSQL's JDBC driver the same code. Run it with the
 * etcd endpoints as the first argument (default http://127.0.0.1:2379).
 */
public final class FenceExample {
    private FenceExample() {}

    /** One transaction: the fence check first, then the write. */
    static void debit(Connection db, Fence fence, int amount) throws SQLException {
        db.setAutoCommit(false);                                 // the check runs in the transaction that writes
        try {
            JdbcFence.check(db, fence);                          // StaleFenceException (a NotHeldException) if a newer holder wrote
            try (PreparedStatement st = db.prepareStatement("UPDATE accounts SET balance = balance - ? WHERE id = 7")) {
                st.setInt(1, amount);
                st.executeUpdate();
            }
            db.commit();
        } catch (SQLException | RuntimeException e) {
            db.rollback();                                       // nothing of the transaction is written
            throw e;
        }
    }

    public static void main(String[] args) throws Exception {
        String endpoints = args.length > 0 ? args[0] : "http://127.0.0.1:2379";
        try (EtcdLockClient client = EtcdLockClient.connect(ClientOptions.builder().endpoints(endpoints.split(",")).build());
                Connection db = DriverManager.getConnection("jdbc:sqlite::memory:")) {
            JdbcFence.install(db);                               // CREATE TABLE IF NOT EXISTS etcdlock_fence
            try (Statement st = db.createStatement()) {
                st.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance INTEGER)");
                st.execute("INSERT INTO accounts VALUES (7, 100)");
            }
            DistributedLock lock = client.lock("readme/accounts/7", LockOptions.ttl(Duration.ofSeconds(10)));
            Fence old;
            try (LockGuard held = lock.acquire(Duration.ofSeconds(5))) {
                old = held.fence();                              // etcdlock-fence.v1.q.<cluster hex>.<token>.<name hex>
                debit(db, old, 5);
                debit(db, Fence.parse(old.toString()), 5);       // the same holder again (>=); the string form, e.g. from a header
                System.out.println("holds: " + client.checkFence(old)); // one linearizable read: advisory
            }
            try (LockGuard held = lock.acquire(Duration.ofSeconds(5))) {
                debit(db, held.fence(), 10);                     // the next holder raises the mark
            }
            try {
                debit(db, old, 1000);                            // the first holder, late: refused, nothing written
            } catch (StaleFenceException e) {
                System.out.println("refused: " + e.getMessage());
            }
            System.out.println("holds: " + client.checkFence(old));
            try (Statement st = db.createStatement(); ResultSet rs = st.executeQuery("SELECT balance FROM accounts")) {
                rs.next();
                System.out.println("balance " + rs.getInt(1));   // 80
            }
            System.out.println("done");
        }
    }
}
