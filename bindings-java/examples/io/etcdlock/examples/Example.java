package io.etcdlock.examples;

import io.etcdlock.ClientOptions;
import io.etcdlock.DistributedLock;
import io.etcdlock.EtcdLockClient;
import io.etcdlock.LockGuard;
import io.etcdlock.LockOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The README's example: a lock held for a block, a fenced write, a lost callback, an async
 * acquire and async release. Run it with the etcd endpoints as the first argument (default http://127.0.0.1:2379).
 */
public final class Example {
    public static void main(String[] args) throws Exception {
        String endpoints = args.length > 0 ? args[0] : "http://127.0.0.1:2379";
        try (EtcdLockClient client = EtcdLockClient.connect(ClientOptions.builder()
                .endpoints(endpoints.split(",")).timeout(Duration.ofSeconds(5)).build())) {
            DistributedLock lock = client.lock("example/orders", LockOptions.ttl(Duration.ofSeconds(10)));
            try (LockGuard held = lock.acquire(Duration.ofSeconds(5))) { // LockTimeoutException
                held.onLost(reason -> System.err.println("lost the lock: " + reason));
                long token = held.fencingToken();
                // Written only while the lock is still ours (NotHeldException otherwise).
                held.putIfHeld("example/orders-last", ("token " + token).getBytes(StandardCharsets.UTF_8));
                System.out.println("held with fencing token " + token);
            }
            CompletableFuture<LockGuard> later = lock.acquireAsync(Duration.ofSeconds(5));
            try (LockGuard held = later.get()) {
                System.out.println("held again with fencing token " + held.fencingToken());
            }
            // Without blocking a thread: the release starts when the acquire completes.
            lock.acquireAsync(Duration.ofSeconds(5))
                    .thenCompose(held -> held.releaseAsync()) // NotHeldException if it was lost meanwhile
                    .get();
            client.delete("example/orders-last");
            System.out.println("done");
        }
    }
}
