package io.etcdlock;

import java.time.Duration;

/**
 * A child JVM for RegistryExitTest: registers instances {@code n0..n4} of service args[1] (TTL
 * 30 s), closes nothing, prints "registered", then ends by System.exit (args[2] = "exit") or by
 * returning from main.
 */
public final class RegistrantExit {
    private RegistrantExit() {}

    public static void main(String[] args) throws Exception {
        EtcdLockClient client = EtcdLockClient.connect(ClientOptions.builder().endpoints(args[0].split(",")).build());
        for (int i = 0; i < 5; i++) {
            client.register(args[1], "n" + i, new byte[] {1}, RegisterOptions.ttl(Duration.ofSeconds(30)));
        }
        System.out.println("registered " + client.instances(args[1]).instances().size());
        System.out.flush();
        if (args[2].equals("exit")) {
            System.exit(0);
        }
    }
}
