package io.etcdlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** LockGuard.releaseAsync, the async counterpart of release (beside acquireAsync's tests). */
class LockAsyncReleaseTest extends TwoClients {
    static final LockOptions TTL = LockOptions.ttl(Duration.ofSeconds(10));
    /** The exception a future completed with. */
    static Throwable failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        return e.getCause();
    }

    @Test
    void acquireAsyncThenReleaseAsyncFreesTheLock() throws Exception {
        String name = Etcd.uniqueName("release-async");
        LockGuard held = client.lock(name, TTL).acquireAsync(Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS);
        assertEquals(List.of(held.key()), Etcd.keysUnder(name + "/"));
        CompletableFuture<Void> released = held.releaseAsync();
        assertNotNull(released);
        assertNull(released.get(10, TimeUnit.SECONDS));
        assertFalse(held.isHeld());
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
        Optional<LockGuard> next = other.lock(name, TTL).tryAcquire();
        assertTrue(next.isPresent(), "another client could not take the released lock");
        next.get().close();
        // As after release(): close is quiet and idempotent, a release is NotHeld.
        held.close();
        held.close();
        assertThrows(NotHeldException.class, held::release);
    }

    // covers: LOCK-RELEASE-001 (released twice, through releaseAsync)
    @Test
    void secondReleaseAsyncFailsAsASecondReleaseThrows() throws Exception {
        String name = Etcd.uniqueName("release-async-twice");
        LockGuard sync = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
        sync.release();
        RuntimeException second = assertThrows(RuntimeException.class, sync::release);
        assertInstanceOf(NotHeldException.class, second);
        sync.close();

        LockGuard async = client.lock(name, TTL).acquireAsync(Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS);
        assertNull(async.releaseAsync().get(10, TimeUnit.SECONDS));
        Throwable again = failure(async.releaseAsync());
        assertEquals(second.getClass(), again.getClass());
        assertEquals("NOT_HELD", ((EtcdLockException) again).kind());

        // release() then releaseAsync(): the same NotHeld, as the future's outcome.
        LockGuard mixed = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
        mixed.release();
        assertEquals(second.getClass(), failure(mixed.releaseAsync()).getClass());
        // After close() too (the guard is freed): NotHeld, never thrown by the call itself.
        mixed.close();
        assertEquals(second.getClass(), failure(mixed.releaseAsync()).getClass());
    }

    // covers: LOCK-RELEASE-001 (release after loss, through releaseAsync)
    @Test
    void releaseAsyncOfALostLockOrAClosedClientFailsAsReleaseDoes() throws Exception {
        String name = Etcd.uniqueName("release-async-lost");
        LockGuard lostSync = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
        Etcd.etcdctl("del", lostSync.key());
        assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> !lostSync.isHeld()));
        RuntimeException thrown = assertThrows(RuntimeException.class, lostSync::release);
        lostSync.close();
        LockGuard lostAsync = client.lock(name, TTL).acquire(Duration.ofSeconds(5));
        Etcd.etcdctl("del", lostAsync.key());
        assertTrue(Etcd.eventually(Duration.ofSeconds(5), () -> !lostAsync.isHeld()));
        assertEquals(thrown.getClass(), failure(lostAsync.releaseAsync()).getClass());
        lostAsync.close();

        EtcdLockClient closing = Etcd.client();
        LockGuard a = closing.lock(Etcd.uniqueName("release-async-closed"), TTL).acquire(Duration.ofSeconds(5));
        LockGuard b = closing.lock(Etcd.uniqueName("release-async-closed"), TTL).acquire(Duration.ofSeconds(5));
        closing.close();
        RuntimeException closedSync = assertThrows(RuntimeException.class, a::release);
        assertEquals(closedSync.getClass(), failure(b.releaseAsync()).getClass());
        a.close();
        b.close();
    }

    @Test
    void releaseAsyncReturnsAFutureWithoutWaitingForTheRelease() throws Exception {
        String name = Etcd.uniqueName("release-async-thread");
        LockGuard held = client.lock(name, TTL).acquireAsync(Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS);
        AtomicReference<CompletableFuture<Void>> returned = new AtomicReference<>();
        Thread caller = new Thread(() -> returned.set(held.releaseAsync()));
        caller.start();
        caller.join(10_000);
        assertFalse(caller.isAlive(), "releaseAsync did not return");
        CompletableFuture<Void> released = returned.get();
        assertNotNull(released);
        // Completed within a bound.
        released.orTimeout(10, TimeUnit.SECONDS).join();
        assertEquals(List.of(), Etcd.keysUnder(name + "/"));
        held.close();
    }
}
