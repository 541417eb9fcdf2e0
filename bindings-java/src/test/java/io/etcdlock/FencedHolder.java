package io.etcdlock;

import io.etcdlock.fencing.JdbcFence;
import io.etcdlock.fencing.StaleFenceException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;

/**
 * A child JVM for JdbcFenceTest's paused holder (FENCE-PAUSE-001): holds lock args[1] (TTL 2 s),
 * opens a PostgreSQL connection (args[2], a JDBC URL), prints its fence, waits for a line on
 * stdin (SIGSTOPped meanwhile, past its TTL), then writes through its fence in one transaction
 * and prints "committed" or "refused".
 */
public final class FencedHolder {
    private FencedHolder() {}

    public static void main(String[] args) throws Exception {
        EtcdLockClient client = EtcdLockClient.connect(ClientOptions.builder().endpoints(args[0].split(",")).build());
        LockGuard held = client.lock(args[1], LockOptions.ttl(Duration.ofSeconds(2))).acquire(Duration.ofSeconds(15));
        Connection conn = DriverManager.getConnection(args[2]);
        conn.setAutoCommit(false);
        Fence fence = held.fence();
        System.out.println(fence);
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine(); // frozen meanwhile
        try {
            JdbcFence.check(conn, fence);
            try (PreparedStatement st = conn.prepareStatement("INSERT INTO ledger (resource, writer, token) VALUES (?, 'paused', ?)")) {
                st.setString(1, args[1]);
                st.setLong(2, fence.token());
                st.executeUpdate();
            }
            conn.commit();
            System.out.println("committed");
        } catch (StaleFenceException e) {
            conn.rollback();
            System.out.println("refused");
        }
        System.out.flush();
        conn.close();
        System.exit(0);
    }
}
