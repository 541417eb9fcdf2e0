package io.etcdlock;

import java.time.Duration;

/**
 * A child JVM for PoolTest: holds the one slot of pool args[1] (TTL 2 s, reuse delay 3 s), prints
 * "held <slot> <slot token> <acquisition token>", then waits to be killed.
 */
public final class PoolHolder {
    private PoolHolder() {}

    public static void main(String[] args) throws Exception {
        EtcdLockClient client = EtcdLockClient.connect(ClientOptions.builder().endpoints(args[0].split(",")).build());
        Pool pool = client.pool(args[1], PoolOptions.slots("w0").ttl(Duration.ofSeconds(2)).reuseDelay(Duration.ofSeconds(3)));
        PoolHolding held = pool.acquire(1, Duration.ofSeconds(15));
        System.out.println("held " + held.slots().get(0) + " " + held.tokens().get("w0") + " " + held.fencingToken());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
