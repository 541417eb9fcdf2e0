package io.etcdlock.examples;

import io.etcdlock.ClientOptions;
import io.etcdlock.EtcdLockClient;
import io.etcdlock.Fence;
import io.etcdlock.LockOptions;
import io.etcdlock.LockSet;
import io.etcdlock.LockSetHolding;
import io.etcdlock.SetMember;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The README's lock set example: two accounts locked together (one token, writes fenced by both,
 * a member's fence checked), and a job's set reading a config, writing its own name and taking
 * one of a semaphore's permits. Run it with the etcd endpoints as the first argument (default
 * http://127.0.0.1:2379).
 */
public final class LockSetExample {
    public static void main(String[] args) throws Exception {
        String endpoints = args.length > 0 ? args[0] : "http://127.0.0.1:2379";
        String run = UUID.randomUUID().toString().substring(0, 8);
        try (EtcdLockClient client = EtcdLockClient.connect(ClientOptions.builder()
                .endpoints(endpoints.split(",")).timeout(Duration.ofSeconds(5)).build())) {
            String acct1 = "example/acct-" + run + "/1", acct2 = "example/acct-" + run + "/2";
            LockOptions ttl = LockOptions.ttl(Duration.ofSeconds(10));
            LockSet accounts = client.lockSet(SetMember.names(acct1, acct2), ttl); // any order: no deadlock
            try (LockSetHolding locks = accounts.acquire(Duration.ofSeconds(5))) { // both, or LockTimeoutException
                System.out.println("holding " + locks.names().size() + " names, token " + locks.fencingToken());
                // Written only while both are held (NotHeldException once one is lost).
                locks.putIfHeld("example/ledger-" + run + "/1", "95".getBytes(StandardCharsets.UTF_8));
                Fence fence = locks.fence(acct1);              // for a database or a service to check
                System.out.println("fence holds: " + client.checkFence(fence));
            }                                                  // released here, in one Txn

            // Members may read a read-write lock, write one, or take a semaphore's permit:
            LockSet job = client.lockSet(List.of(SetMember.read("example/cfg-" + run), SetMember.write("example/jobs-" + run + "/a"),
                    SetMember.permit("example/licenses-" + run, 4)), ttl);
            Optional<LockSetHolding> running = job.tryAcquire(); // empty when a member is busy: nothing kept
            if (running.isPresent()) {
                try (LockSetHolding held = running.get()) {
                    System.out.println("job running with " + held.names());
                }
            }
            client.delete("example/ledger-" + run + "/1");
            System.out.println("done");
        }
    }
}
