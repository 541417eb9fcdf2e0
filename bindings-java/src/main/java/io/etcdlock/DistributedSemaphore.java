package io.etcdlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A fair semaphore on etcd (from {@link EtcdLockClient#semaphore}): at most {@link #permits()}
 * permits of the name taken at once, served in arrival order across every process and binding.
 * Each acquisition takes one permit (or {@link #withCount} of them at once) as a
 * {@link LockGuard} (its own fencing token, fenced writes, lost callbacks; {@code close()} gives
 * the permits back). Every participant of a name must give the same number of permits (another
 * number is {@link IllegalArgumentException} before it waits). Creating it sends nothing.
 * Thread-safe.
 *
 * <pre>{@code
 * DistributedSemaphore encoders = client.semaphore("encoders", 4, LockOptions.ttl(Duration.ofSeconds(10)));
 * try (LockGuard two = encoders.withCount(2).acquire(Duration.ofSeconds(5))) {  // two of the four
 *     encode(two.fencingToken());
 * }
 * }</pre>
 */
public final class DistributedSemaphore {
    private final DistributedLock permit;
    private final int permits;
    private final int count;

    DistributedSemaphore(DistributedLock permit, int permits) {
        this(permit, permits, 1);
    }

    private DistributedSemaphore(DistributedLock permit, int permits, int count) {
        this.permit = permit;
        this.permits = permits;
        this.count = count;
    }

    /**
     * The same semaphore, whose acquisitions take {@code count} permits at once: one key, one
     * fencing token, released together. Admission stays in arrival order with a head-of-line rule:
     * a request for {@code count} waits at the head until that many permits are free, and later
     * requests (for one permit too) wait behind it, so it is never starved by smaller ones.
     * Sends nothing.
     *
     * @param count 1 to {@link #permits()}
     * @return a semaphore handle taking {@code count} permits per acquisition
     * @throws IllegalArgumentException if {@code count} is not 1 to {@link #permits()}
     */
    public DistributedSemaphore withCount(int count) {
        return new DistributedSemaphore(permit.with(permit.options().count(count)), permits, count);
    }

    /** @return how many permits each acquisition takes (1 unless {@link #withCount}) */
    public int count() {
        return count;
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
     * Waits for a permit ({@link #count()} of them), at most {@code timeout}.
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
        return "DistributedSemaphore{" + name() + ", permits=" + permits + (count == 1 ? "" : ", count=" + count) + "}";
    }
}
