package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One FIFO queue with jetcd's {@code Lock} client (etcd's v3lock service, which runs Go's
 * concurrency.Mutex on the server: the key {@code <name>/<lease hex>} on the caller's lease, granted
 * when no key under {@code <name>/} has a smaller create revision). Each jetcd waiter has its own
 * lease from jetcd's {@code Lease} client; each of ours its own {@link EtcdLockClient}. etcd's state
 * (keys and create revisions) is read with jetcd's KV client. Every wait is bounded.
 */
class JetcdInteropTest {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));
    /** jetcd leases: long enough for any test here, revoked at its end (no keepalive needed). */
    static final long JETCD_LEASE_TTL = 60;
    static final long CALL_TIMEOUT_S = 10;
    static Client jetcd;

    @BeforeAll
    static void connect() {
        jetcd = Client.builder().endpoints(Etcd.endpoints().split(",")).build();
    }

    @AfterAll
    static void close() {
        if (jetcd != null) {
            jetcd.close();
        }
    }

    static ByteSequence bs(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** A jetcd call's result within {@link #CALL_TIMEOUT_S}; fails the test otherwise. */
    static <T> T await(CompletableFuture<T> call, String what) {
        try {
            return call.get(CALL_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            call.cancel(true);
            throw new AssertionError("jetcd " + what + ": no answer in " + CALL_TIMEOUT_S + " s", e);
        } catch (ExecutionException e) {
            throw new AssertionError("jetcd " + what + " failed", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    static long grantLease() {
        return await(jetcd.getLeaseClient().grant(JETCD_LEASE_TTL), "lease grant").getID();
    }

    static void revokeQuietly(long lease) {
        try {
            jetcd.getLeaseClient().revoke(lease).get(CALL_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (Exception e) {
            // Already gone or etcd unreachable: the lease expires with its TTL anyway.
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The queue of lock {@code name}: the keys under {@code name/} with their create revisions, oldest first. */
    static Map<String, Long> queue(String name) {
        GetOption byCreate = GetOption.builder().isPrefix(true)
                .withSortField(GetOption.SortTarget.CREATE).withSortOrder(GetOption.SortOrder.ASCEND).build();
        Map<String, Long> keys = new LinkedHashMap<>();
        for (KeyValue kv : await(jetcd.getKVClient().get(bs(name + "/"), byCreate), "get").getKvs()) {
            keys.put(kv.getKey().toString(StandardCharsets.UTF_8), kv.getCreateRevision());
        }
        return keys;
    }

    static long createRevision(String key) {
        List<KeyValue> kvs = await(jetcd.getKVClient().get(bs(key)), "get").getKvs();
        assertEquals(1, kvs.size(), "no key " + key);
        return kvs.get(0).getCreateRevision();
    }

    static String jetcdKey(String name, long lease) {
        return name + "/" + Long.toHexString(lease);
    }

    // covers: LOCK-INTEROP-JETCD-001 (jetcd holds, ours waits until jetcd's unlock)
    @Test
    void oursWaitsForJetcd() throws Exception {
        String name = Etcd.uniqueName("jetcd-a");
        long lease = grantLease();
        CompletableFuture<LockGuard> ours = null;
        try (EtcdLockClient client = Etcd.client()) {
            LockResponse jheld = await(jetcd.getLockClient().lock(bs(name), lease), "lock");
            String jkey = jheld.getKey().toString(StandardCharsets.UTF_8);
            assertEquals(jetcdKey(name, lease), jkey, "jetcd's lock key is not <name>/<lease hex>");
            long jrev = createRevision(jkey);

            DistributedLock lock = client.lock(name, TTL);
            assertTrue(lock.tryAcquire().isEmpty(), "ours took a lock jetcd holds");
            ours = lock.acquireAsync(Duration.ofSeconds(30));
            CompletableFuture<LockGuard> waiting = ours;
            assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> queue(name).size() == 2), "ours never queued: " + queue(name));
            assertThrows(TimeoutException.class, () -> waiting.get(300, TimeUnit.MILLISECONDS), "ours was granted while jetcd held the lock");
            assertFalse(ours.isDone(), "ours was granted while jetcd held the lock");
            await(jetcd.getLockClient().unlock(jheld.getKey()), "unlock");
            try (LockGuard held = ours.get(CALL_TIMEOUT_S, TimeUnit.SECONDS)) {
                assertEquals(List.of(held.key()), new ArrayList<>(queue(name).keySet()));
                assertEquals(jetcdKey(name, held.leaseId()), held.key(), "our key is not <name>/<lease hex> as jetcd's is");
                assertEquals(createRevision(held.key()), held.fencingToken(), "the fencing token is not the key's create revision");
                assertTrue(held.fencingToken() > jrev, "token " + held.fencingToken() + " not above jetcd's " + jrev);
                // jetcd now waits behind ours in turn.
                long lease2 = grantLease();
                try {
                    CompletableFuture<LockResponse> again = jetcd.getLockClient().lock(bs(name), lease2);
                    assertThrows(TimeoutException.class, () -> again.get(300, TimeUnit.MILLISECONDS), "jetcd took a lock ours holds");
                    again.cancel(true);
                } finally {
                    revokeQuietly(lease2);
                }
            }
            assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> queue(name).isEmpty()), "left behind: " + queue(name));
        } finally {
            if (ours != null) {
                ours.cancel(true);
            }
            revokeQuietly(lease);
        }
    }

    // covers: LOCK-INTEROP-JETCD-001 (ours holds, jetcd waits until our release)
    @Test
    void jetcdWaitsForOurs() throws Exception {
        String name = Etcd.uniqueName("jetcd-b");
        long lease = grantLease();
        CompletableFuture<LockResponse> jwait = null;
        try (EtcdLockClient client = Etcd.client()) {
            LockGuard held = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
            long token = held.fencingToken();
            assertEquals(createRevision(held.key()), token, "the fencing token is not the key's create revision");
            jwait = jetcd.getLockClient().lock(bs(name), lease);
            CompletableFuture<LockResponse> waiting = jwait;
            String jkey = jetcdKey(name, lease);
            assertTrue(Etcd.eventually(Duration.ofSeconds(10), () -> queue(name).containsKey(jkey)), "jetcd never queued: " + queue(name));
            assertEquals(List.of(held.key(), jkey), new ArrayList<>(queue(name).keySet()));
            assertThrows(TimeoutException.class, () -> waiting.get(300, TimeUnit.MILLISECONDS), "jetcd took a lock ours holds");
            held.close();
            LockResponse jheld = jwait.get(CALL_TIMEOUT_S, TimeUnit.SECONDS);
            assertEquals(jkey, jheld.getKey().toString(StandardCharsets.UTF_8));
            long jrev = createRevision(jkey);
            assertTrue(jrev > token, "jetcd's create revision " + jrev + " not above our token " + token);
            // Ours waits behind jetcd in turn.
            assertTrue(client.lock(name, TTL).tryAcquire().isEmpty(), "ours took a lock jetcd holds");
            await(jetcd.getLockClient().unlock(jheld.getKey()), "unlock");
            assertEquals(Map.of(), queue(name));
            try (LockGuard again = client.lock(name, TTL).acquire(Duration.ofSeconds(5))) {
                assertTrue(again.fencingToken() > jrev, "token " + again.fencingToken() + " not above jetcd's " + jrev);
            }
        } finally {
            if (jwait != null) {
                jwait.cancel(true);
            }
            revokeQuietly(lease);
        }
    }

    /** A waiter of either client: joins the queue, waits for its grant, releases. */
    abstract static class Waiter {
        final String id;
        final String lockName;
        /** The queue key and its create revision, seen in etcd when it joined. */
        String key;
        long joinedRevision;

        Waiter(String id, String lockName) {
            this.id = id;
            this.lockName = lockName;
        }

        abstract void join();

        /** Blocks until granted (at most {@code seconds}); the fencing token (ours) or the key's create revision (jetcd). */
        abstract long awaitGrant(long seconds) throws Exception;

        abstract String grantedKey();

        abstract void release();

        abstract void cleanup();
    }

    static final class OurWaiter extends Waiter {
        final EtcdLockClient client = Etcd.client();
        CompletableFuture<LockGuard> pending;
        LockGuard held;

        OurWaiter(String id, String lockName) {
            super(id, lockName);
        }

        @Override
        void join() {
            pending = client.lock(lockName, TTL).acquireAsync(Duration.ofSeconds(60));
        }

        @Override
        long awaitGrant(long seconds) throws Exception {
            held = pending.get(seconds, TimeUnit.SECONDS);
            return held.fencingToken();
        }

        @Override
        String grantedKey() {
            return held.key();
        }

        @Override
        void release() {
            held.release();
        }

        @Override
        void cleanup() {
            if (pending != null) {
                pending.cancel(true);
            }
            client.close();
        }
    }

    static final class JetcdWaiter extends Waiter {
        final long lease = grantLease();
        CompletableFuture<LockResponse> pending;
        ByteSequence heldKey;

        JetcdWaiter(String id, String lockName) {
            super(id, lockName);
        }

        @Override
        void join() {
            pending = jetcd.getLockClient().lock(bs(lockName), lease);
        }

        @Override
        long awaitGrant(long seconds) throws Exception {
            heldKey = pending.get(seconds, TimeUnit.SECONDS).getKey();
            return createRevision(grantedKey());
        }

        @Override
        String grantedKey() {
            return heldKey.toString(StandardCharsets.UTF_8);
        }

        @Override
        void release() {
            await(jetcd.getLockClient().unlock(heldKey), "unlock");
        }

        @Override
        void cleanup() {
            if (pending != null) {
                pending.cancel(true);
            }
            revokeQuietly(lease);
        }
    }

    /** Waits until {@code w}'s queue key is in etcd; records it and its create revision. */
    static void joinAndRecord(Waiter w) {
        Map<String, Long> before = queue(w.lockName);
        w.join();
        String expected = w instanceof JetcdWaiter j ? jetcdKey(w.lockName, j.lease) : null;
        boolean joined = Etcd.eventually(Duration.ofSeconds(10), () -> {
            for (Map.Entry<String, Long> e : queue(w.lockName).entrySet()) {
                if (!before.containsKey(e.getKey()) && (expected == null || expected.equals(e.getKey()))) {
                    w.key = e.getKey();
                    w.joinedRevision = e.getValue();
                    return true;
                }
            }
            return false;
        });
        assertTrue(joined, w.id + " never joined the queue of " + w.lockName + ": " + queue(w.lockName));
    }

    // covers: LOCK-INTEROP-JETCD-001 (a mixed queue of both clients is served in arrival order)
    @Test
    void mixedQueueIsServedInArrivalOrder() throws Exception {
        String name = Etcd.uniqueName("jetcd-mixed");
        // Holder first (jetcd), then the waiters in this order: runs of one client and alternations.
        List<Waiter> waiters = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            JetcdWaiter holder = new JetcdWaiter("jetcd-0", name);
            waiters.add(holder);
            for (String id : List.of("ours-1", "jetcd-1", "jetcd-2", "ours-2", "ours-3", "jetcd-3")) {
                waiters.add(id.startsWith("ours") ? new OurWaiter(id, name) : new JetcdWaiter(id, name));
            }
            joinAndRecord(holder);
            assertEquals(holder.joinedRevision, holder.awaitGrant(CALL_TIMEOUT_S));

            List<Waiter> queued = waiters.subList(1, waiters.size());
            for (Waiter w : queued) {
                joinAndRecord(w);
            }
            // Joined in this order, as etcd numbered them.
            for (int i = 1; i < waiters.size(); i++) {
                assertTrue(waiters.get(i).joinedRevision > waiters.get(i - 1).joinedRevision,
                        waiters.get(i).id + " joined before " + waiters.get(i - 1).id);
            }

            AtomicInteger holders = new AtomicInteger(1); // the jetcd holder
            List<String> grants = Collections.synchronizedList(new ArrayList<>());
            List<String> problems = Collections.synchronizedList(new ArrayList<>());
            List<Future<?>> done = new ArrayList<>();
            for (Waiter w : queued) {
                done.add(pool.submit(() -> {
                    long token;
                    try {
                        token = w.awaitGrant(60);
                    } catch (Exception e) {
                        problems.add(w.id + " was not granted: " + e);
                        return null;
                    }
                    int now = holders.incrementAndGet();
                    grants.add(w.id);
                    if (now != 1) {
                        problems.add(w.id + " granted while " + (now - 1) + " other(s) held the lock");
                    }
                    if (!w.key.equals(w.grantedKey())) {
                        problems.add(w.id + " granted key " + w.grantedKey() + ", joined as " + w.key);
                    }
                    if (token != w.joinedRevision) {
                        problems.add(w.id + ": token " + token + " is not its key's create revision " + w.joinedRevision);
                    }
                    Map<String, Long> q = queue(w.lockName);
                    if (q.isEmpty() || !q.keySet().iterator().next().equals(w.key)) {
                        problems.add(w.id + " granted while not first in the queue: " + q);
                    }
                    Thread.sleep(100);
                    holders.decrementAndGet();
                    w.release();
                    return null;
                }));
            }
            // Nobody is served while the holder holds.
            Thread.sleep(500);
            assertEquals(List.of(), grants, "granted while jetcd-0 held the lock");
            holders.decrementAndGet();
            holder.release();
            for (Future<?> f : done) {
                f.get(90, TimeUnit.SECONDS);
            }
            assertEquals(List.of(), problems);
            List<String> expected = new ArrayList<>();
            queued.forEach(w -> expected.add(w.id));
            assertEquals(expected, grants, "not served in arrival (create revision) order");
            assertEquals(Map.of(), queue(name), "keys left in the queue");
        } finally {
            pool.shutdownNow();
            if (!pool.awaitTermination(20, TimeUnit.SECONDS)) {
                fail("waiter threads still running");
            }
            for (Waiter w : waiters) {
                w.cleanup();
            }
        }
    }
}
