package io.etcdlock.fencing;

import io.etcdlock.Fence;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Objects;

/**
 * Fencing at the database, on your own JDBC connection and transaction: a high-water mark per
 * resource (the lock's name by default), checked and raised by one statement inside the caller's
 * transaction, before its writes, so that the writes commit only if no newer holder of the lock
 * has written. PostgreSQL (the PostgreSQL JDBC driver) and SQLite 3.35 or later (sqlite-jdbc):
 * both run the same {@code INSERT .. ON CONFLICT .. DO UPDATE .. WHERE .. RETURNING}. The drivers
 * are not dependencies of etcdlock: bring your own.
 *
 * <pre>{@code
 * JdbcFence.install(conn);                           // once: CREATE TABLE IF NOT EXISTS etcdlock_fence
 * try (LockGuard held = lock.acquire(Duration.ofSeconds(5))) {
 *     conn.setAutoCommit(false);
 *     try {
 *         JdbcFence.check(conn, held.fence());       // StaleFenceException if a newer holder wrote
 *         try (PreparedStatement st = conn.prepareStatement("UPDATE accounts SET balance = balance - 5 WHERE id = 7")) {
 *             st.executeUpdate();
 *         }
 *         conn.commit();
 *     } catch (SQLException | RuntimeException e) {
 *         conn.rollback();
 *         throw e;
 *     }
 * }
 * }</pre>
 *
 * <p>The mark is {@code >=}: the same holder's repeated writes pass. A fence of another etcd
 * cluster is refused with a message saying an operator must reset the mark (a restored etcd's
 * revisions are not comparable). Under PostgreSQL's READ COMMITTED the check's row lock on the
 * mark makes a concurrent check wait for this transaction to end and then judge the committed
 * mark; SQLite runs one writer at a time. The same table and statement as every other etcdlock
 * binding's helpers (docs/design.md, "Fencing at the database").
 */
public final class JdbcFence {
    /** The table the marks are kept in. */
    public static final String TABLE = "etcdlock_fence";

    /** Creates the table of marks (resource, cluster, token) if it is not there. */
    public static final String DDL = "CREATE TABLE IF NOT EXISTS " + TABLE + " (\n"
            + "    resource TEXT PRIMARY KEY,\n"
            + "    cluster  TEXT NOT NULL,\n"
            + "    token    BIGINT NOT NULL\n"
            + ")";

    /**
     * The check, with three parameters: the resource, the fence's cluster ID in lower-case hex
     * and its token. Inserts the mark, or raises it to the token if the fence is of the same
     * cluster and not older: one row back when the fence may write, none when it is stale (or of
     * another cluster).
     */
    public static final String CHECK = "INSERT INTO " + TABLE + " (resource, cluster, token) VALUES (?, ?, ?)\n"
            + "ON CONFLICT (resource) DO UPDATE SET token = excluded.token\n"
            + "WHERE " + TABLE + ".cluster = excluded.cluster AND " + TABLE + ".token <= excluded.token\n"
            + "RETURNING token";

    /** The mark of a resource (one parameter), read to say why a fence was refused. */
    private static final String MARK = "SELECT cluster, token FROM " + TABLE + " WHERE resource = ?";

    private JdbcFence() {}

    /**
     * Creates the table of marks if it is not there (in the connection's current transaction,
     * when auto-commit is off: commit it).
     *
     * @param conn a PostgreSQL or SQLite connection
     * @throws SQLException from the driver; {@link SQLFeatureNotSupportedException} for another database
     */
    public static void install(Connection conn) throws SQLException {
        supported(conn);
        try (Statement st = conn.createStatement()) {
            st.execute(DDL);
        }
    }

    /**
     * {@link #check(Connection, Fence, String)} for the lock's own name as the resource.
     *
     * @param conn the connection, in the transaction that writes (auto-commit off)
     * @param fence the writer's fence
     * @return the mark: the fence's token
     * @throws StaleFenceException if a newer holder has written (or the fence is of another
     *     etcd cluster): roll the transaction back
     * @throws SQLException from the driver
     */
    public static long check(Connection conn, Fence fence) throws SQLException {
        return check(conn, fence, null);
    }

    /**
     * {@link #check(Connection, Fence, String)} for a fence's string form.
     *
     * @param conn the connection, in the transaction that writes (auto-commit off)
     * @param fence the writer's fence, {@code etcdlock-fence.v1.<q|k>.<cluster hex>.<token>.<name hex>}
     * @param resource the resource the mark is kept for; {@code null} for the fence's lock name
     * @return the mark: the fence's token
     * @throws IllegalArgumentException if {@code fence} is not a fence
     * @throws StaleFenceException if a newer holder has written (or the fence is of another
     *     etcd cluster): roll the transaction back
     * @throws SQLException from the driver
     */
    public static long check(Connection conn, String fence, String resource) throws SQLException {
        return check(conn, Fence.parse(fence), resource);
    }

    /**
     * In the caller's transaction, first (before its writes): throws {@link StaleFenceException}
     * unless {@code fence} may write {@code resource}, and raises the resource's mark to the
     * fence's token. The mark's row stays locked until the transaction ends.
     *
     * @param conn the connection, in the transaction that writes: auto-commit off (a check
     *     committed on its own would protect nothing)
     * @param fence the writer's fence ({@code LockGuard.fence()}, or parsed from its string form)
     * @param resource the resource the mark is kept for; {@code null} for the fence's lock name
     * @return the mark: the fence's token
     * @throws StaleFenceException if a newer holder has written (or the fence is of another
     *     etcd cluster): roll the transaction back
     * @throws IllegalStateException if the connection is in auto-commit mode
     * @throws IllegalArgumentException if {@code resource} is empty
     * @throws SQLException from the driver; {@link SQLFeatureNotSupportedException} for a
     *     database other than PostgreSQL and SQLite
     */
    public static long check(Connection conn, Fence fence, String resource) throws SQLException {
        Objects.requireNonNull(conn, "conn");
        Objects.requireNonNull(fence, "fence");
        String res = resource == null ? fence.resource() : resource;
        if (res.isEmpty()) {
            throw new IllegalArgumentException("resource must not be empty");
        }
        supported(conn);
        if (conn.getAutoCommit()) {
            throw new IllegalStateException("JdbcFence.check runs in the transaction that writes: "
                    + "conn.setAutoCommit(false) first (a check committed on its own protects nothing)");
        }
        String cluster = fence.clusterHex();
        try (PreparedStatement st = conn.prepareStatement(CHECK)) {
            st.setString(1, res);
            st.setString(2, cluster);
            st.setLong(3, fence.token());
            try (ResultSet rs = st.executeQuery()) {
                if (rs.next()) {
                    return rs.getLong(1);
                }
            }
        }
        throw refused(conn, fence, res);
    }

    /** Why the database refused {@code fence} for {@code res}, from the mark it has (or none). */
    private static StaleFenceException refused(Connection conn, Fence fence, String res) throws SQLException {
        String markCluster = null;
        Long markToken = null;
        try (PreparedStatement st = conn.prepareStatement(MARK)) {
            st.setString(1, res);
            try (ResultSet rs = st.executeQuery()) {
                if (rs.next()) {
                    markCluster = rs.getString(1);
                    markToken = rs.getLong(2);
                }
            }
        }
        String cluster = fence.clusterHex();
        if (markCluster != null && !markCluster.equals(cluster)) {
            return new StaleFenceException("the fence for \"" + res + "\" is of etcd cluster " + cluster
                    + ", but the mark was set by cluster " + markCluster
                    + ": tokens of two clusters are not comparable (was etcd restored or replaced?); an operator must reset the mark: "
                    + "DELETE FROM " + TABLE + " WHERE resource = '" + res.replace("'", "''") + "'", res, true);
        }
        return new StaleFenceException("stale fence for \"" + res + "\": token " + fence.token()
                + ", but a newer holder wrote with token " + (markToken == null ? "?" : markToken), res, false);
    }

    /** Fails unless the check's statement and reasoning hold for the connection's database. */
    private static void supported(Connection conn) throws SQLException {
        String product = Objects.requireNonNull(conn, "conn").getMetaData().getDatabaseProductName();
        String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
        if (p.contains("postgresql") || p.contains("sqlite")) {
            return;
        }
        throw new SQLFeatureNotSupportedException("JdbcFence supports PostgreSQL and SQLite, not " + product
                + " (docs/design.md, \"Fencing at the database\", says what another database needs)");
    }
}
