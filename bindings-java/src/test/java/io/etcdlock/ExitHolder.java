package io.etcdlock;

import java.time.Duration;

/**
 * A child JVM for ExitTest: takes a lock (TTL 60 s) and a lease, closes nothing, prints the lock's
 * key and lease, then ends by System.exit (args[2] = "exit") or by returning from main.
 */
public final class ExitHolder {
    private ExitHolder() {}

    public static void main(String[] args) throws Exception {
        EtcdLockClient client = EtcdLockClient.connect(ClientOptions.builder().endpoints(args[0].split(",")).build());
        LockGuard held = client.lock(args[1], LockOptions.ttl(Duration.ofSeconds(60))).acquire(Duration.ofSeconds(10));
        Lease lease = client.lease(Duration.ofSeconds(60));
        client.put(args[1] + "-leased", new byte[] {1}, lease);
        System.out.println("held " + held.key() + " " + held.leaseId() + " " + lease.id());
        System.out.flush();
        if (args[2].equals("exit")) {
            System.exit(0);
        }
    }
}
