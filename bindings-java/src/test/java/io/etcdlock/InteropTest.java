package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** One queue with `etcdctl lock` (Go's concurrency.Mutex): each waits for the other. */
class InteropTest {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));

    static Process etcdctlLock(String name, String... command) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of(System.getenv("ETCDLOCK_ETCDCTL"),
                "--endpoints=" + Etcd.endpoints(), "lock", name));
        cmd.addAll(List.of(command));
        return new ProcessBuilder(cmd).redirectErrorStream(true).start();
    }

    // covers: LOCK-INTEROP-001 (etcdctl holds, ours waits)
    @Test
    void oursWaitsForEtcdctl() throws Exception {
        String name = Etcd.uniqueName("interop-a");
        try (EtcdLockClient client = Etcd.client()) {
            Process holder = etcdctlLock(name, "sleep", "1.5");
            try {
                assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> Etcd.keysUnder(name + "/").size() == 1), "etcdctl never held");
                DistributedLock lock = client.lock(name, TTL);
                assertTrue(lock.tryAcquire().isEmpty(), "ours took a lock etcdctl holds");
                long t0 = System.nanoTime();
                try (LockGuard held = lock.acquire(Duration.ofSeconds(15))) {
                    assertTrue(System.nanoTime() - t0 > 500_000_000L, "ours did not wait for etcdctl");
                    assertEquals(List.of(held.key()), Etcd.keysUnder(name + "/"));
                }
                assertTrue(holder.waitFor(10, TimeUnit.SECONDS));
                assertEquals(0, holder.exitValue());
            } finally {
                holder.destroyForcibly();
            }
        }
    }

    // covers: LOCK-INTEROP-001 (ours holds, etcdctl waits)
    @Test
    void etcdctlWaitsForOurs() throws Exception {
        String name = Etcd.uniqueName("interop-b");
        try (EtcdLockClient client = Etcd.client()) {
            LockGuard held = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
            Process waiter = etcdctlLock(name, "echo", "etcdctl-got-it");
            try {
                assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> Etcd.keysUnder(name + "/").size() == 2), "etcdctl never queued");
                assertFalse(waiter.waitFor(300, TimeUnit.MILLISECONDS), "etcdctl took a lock ours holds");
                held.close();
                assertTrue(waiter.waitFor(10, TimeUnit.SECONDS), "etcdctl never got the lock");
                String out = new String(waiter.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertTrue(out.contains("etcdctl-got-it"), out);
            } finally {
                waiter.destroyForcibly();
            }
        }
    }
}
