package io.etcdlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A fair semaphore on etcd (from {@link EtcdLockClient#semaphore}): at most {@link #permits()}
 * holders of the name at once, served in arrival order across every process and binding. Each
 * acquisition takes one permit as a {@link LockGuard} (its own fencing token, fenced writes,
 * lost callbacks; {@code close()} gives the permit back). Every participant of a name must give
 * the same number of permits (another number is {@link IllegalArgumentException} before it
 * waits). Creating it sends nothing. Thread-safe.
 */
public final class DistributedSemaphore {
    private final DistributedLock permit;
    private final int permits;

    DistributedSemaphore(DistributedLock permit, int permits) {
        this.permit = permit;
        this.permits = permits;
    }

    /** @return the semaphore's name */
    public String name() {
        return permit.name();
    }

    /** @return how many may hold at once */
    public int permits() {
        return permits;
    }

    /**
     * Waits for a permit, at most {@code timeout}.
     *
     * @param timeout how long to wait; {@link Duration#ZERO} tries once
     * @return the held permit
     * @throws LockTimeoutException when the timeout passes (nothing left behind)
     * @throws IllegalArgumentException when another participant holds or waits with another count
     * @throws InterruptedException when interrupted while waiting (nothing left behind)
     */
    public LockGuard acquire(Duration timeout) throws InterruptedException {
        return permit.acquire(timeout);
    }

    /**
     * Waits for a permit without a time limit.
     *
     * @return the held permit
     * @throws InterruptedException when interrupted while waiting (nothing left behind)
     */
    public LockGuard acquire() throws InterruptedException {
        return permit.acquire();
    }

    /**
     * Takes a permit only if one is free and nobody waits; leaves nothing behind otherwise.
     *
     * @return the held permit, or empty
     */
    public Optional<LockGuard> tryAcquire() {
        return permit.tryAcquire();
    }

    /**
     * Waits for a permit without blocking a thread; {@code cancel()} leaves the queue (a permit
     * granted just before is given back).
     *
     * @param timeout how long to wait; {@link Duration#ZERO} tries once
     * @return the held permit, or the failure as the exceptional outcome
     */
    public CompletableFuture<LockGuard> acquireAsync(Duration timeout) {
        return permit.acquireAsync(timeout);
    }

    @Override
    public String toString() {
        return "DistributedSemaphore{" + name() + ", permits=" + permits + "}";
    }
}
