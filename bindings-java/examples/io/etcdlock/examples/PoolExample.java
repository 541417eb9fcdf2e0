package io.etcdlock.examples;

import io.etcdlock.ClientOptions;
import io.etcdlock.DistributedSemaphore;
import io.etcdlock.EtcdLockClient;
import io.etcdlock.LockGuard;
import io.etcdlock.LockOptions;
import io.etcdlock.Pool;
import io.etcdlock.PoolHolding;
import io.etcdlock.PoolOptions;
import io.etcdlock.SlotInfo;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

/**
 * The README's pool example: three GPUs handed out one at a time (each with its fencing token and
 * a write fenced by the slot), a Snowflake-style worker id from a pool of 1024 numbered slots, the
 * slots as etcd has them, and a semaphore request for two permits at once. Run it with the etcd
 * endpoints as the first argument (default http://127.0.0.1:2379).
 */
public final class PoolExample {
    public static void main(String[] args) throws Exception {
        String endpoints = args.length > 0 ? args[0] : "http://127.0.0.1:2379";
        String run = UUID.randomUUID().toString().substring(0, 8);
        try (EtcdLockClient client = EtcdLockClient.connect(ClientOptions.builder()
                .endpoints(endpoints.split(",")).timeout(Duration.ofSeconds(5)).build())) {
            Pool gpus = client.pool("example/gpus-" + run, PoolOptions.slots("gpu0", "gpu1", "gpu2").reuseDelay(Duration.ofSeconds(5)));
            try (PoolHolding held = gpus.acquire(1, Duration.ofSeconds(5))) { // released at the end of the block
                String gpu = held.slots().get(0);
                System.out.println("using " + gpu + ", token " + held.tokens().get(gpu));
                // Written only while the slot is held (NotHeldException once it is lost).
                held.putIfHeld("example/jobs-" + run + "/7/device", gpu.getBytes(StandardCharsets.UTF_8));
                try (PoolHolding two = gpus.acquire(2, "job-8", Duration.ofSeconds(5))) { // an owner: a retry gets the same two
                    System.out.println("job-8 uses " + two.slots());
                }
            }
            for (SlotInfo s : gpus.slots()) {
                System.out.println(s.id() + " " + s.state());
            }

            // A Snowflake worker id: a dead worker's id is not handed out again for 30 s.
            Pool ids = client.pool("example/workers-" + run, PoolOptions.size(1024).reuseDelay(Duration.ofSeconds(30)));
            try (PoolHolding worker = ids.acquire(1, Duration.ofSeconds(5))) {
                int workerId = Integer.parseInt(worker.slots().get(0));
                System.out.println("worker id " + workerId);
            }

            DistributedSemaphore encoders = client.semaphore("example/encoders-" + run, 4, LockOptions.ttl(Duration.ofSeconds(10)));
            try (LockGuard permits = encoders.withCount(2).acquire(Duration.ofSeconds(5))) { // two of the four at once
                System.out.println("encoding with 2 permits, token " + permits.fencingToken());
            }
            client.delete("example/jobs-" + run + "/7/device");
            System.out.println("done");
        }
    }
}
