package io.etcdlock;

import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * How a {@link TaskQueue} delivers: the TTL of the lease a claim lives on (kept alive while the
 * task is held: how long a dead worker's item stays claimed; default 10 s), how many deliveries
 * an item gets before it goes to the dead letters (default 5), optionally how long a claim may
 * last ({@link #maxProcessing(Duration)}; default: no limit), and an optional worker value stored
 * in each claim's key (a host, a pid: who works on what, for {@code etcdlock status}).
 * Immutable.
 */
public final class QueueOptions {
    final long ttlSeconds;
    final int maxAttempts;
    /** In milliseconds; -1 for no limit. */
    final long maxProcessingMs;
    final byte[] worker;

    private QueueOptions(long ttlSeconds, int maxAttempts, long maxProcessingMs, byte[] worker) {
        this.ttlSeconds = ttlSeconds;
        this.maxAttempts = maxAttempts;
        this.maxProcessingMs = maxProcessingMs;
        this.worker = worker;
    }

    /** @return a 10 s TTL, 5 deliveries at most, no limit on a claim's life, no worker value */
    public static QueueOptions defaults() {
        return new QueueOptions(10, 5, -1, new byte[0]);
    }

    /**
     * @param ttl the claims' lease TTL, rounded up to whole seconds; positive
     * @return options with that TTL and the default deliveries
     * @throws IllegalArgumentException if {@code ttl} is zero or negative
     */
    public static QueueOptions ttl(Duration ttl) {
        return defaults().withTtl(ttl);
    }

    /**
     * @param ttl the claims' lease TTL, rounded up to whole seconds; positive
     * @return options with that TTL, the rest the same
     * @throws IllegalArgumentException if {@code ttl} is zero or negative
     */
    public QueueOptions withTtl(Duration ttl) {
        return new QueueOptions(LockOptions.ttl(Objects.requireNonNull(ttl, "ttl")).ttlSeconds(), maxAttempts, maxProcessingMs, worker);
    }

    /**
     * @param n deliveries before an item goes to the dead letters: at least 1 (checked by
     *     {@link EtcdLockClient#queue})
     * @return options with that limit, the rest the same
     */
    public QueueOptions maxAttempts(int n) {
        return new QueueOptions(ttlSeconds, n, maxProcessingMs, worker);
    }

    /**
     * Limits how long a claim lasts: {@code limit} after a task was claimed its claim ends, held or
     * not (its key is deleted, {@link Task#onLost} callbacks get {@code key_deleted},
     * {@link Task#isHeld} turns false, its ack throws {@link NotHeldException}, and the item is
     * claimable again), so a hung handler cannot keep an item while this process keeps its lease
     * alive.
     *
     * @param limit how long a claim may last, more than zero (checked by
     *     {@link EtcdLockClient#queue}); a sub-millisecond one is rounded up to 1 ms
     * @return options with that limit, the rest the same
     * @throws IllegalArgumentException if {@code limit} is negative
     */
    public QueueOptions maxProcessing(Duration limit) {
        return new QueueOptions(ttlSeconds, maxAttempts, Durations.millis(limit, "maxProcessing"), worker);
    }

    /**
     * @param worker stored in each claim's key, at most 4096 bytes (checked by
     *     {@link EtcdLockClient#queue})
     * @return options with this worker value, the rest the same
     */
    public QueueOptions worker(byte[] worker) {
        return new QueueOptions(ttlSeconds, maxAttempts, maxProcessingMs, Objects.requireNonNull(worker, "worker").clone());
    }

    /** @return the TTL in seconds */
    public long ttlSeconds() {
        return ttlSeconds;
    }

    /** @return the deliveries an item gets at most */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** @return how long a claim may last, or empty for no limit */
    public Optional<Duration> maxProcessing() {
        return maxProcessingMs < 0 ? Optional.empty() : Optional.of(Duration.ofMillis(maxProcessingMs));
    }

    @Override
    public String toString() {
        return "QueueOptions{ttl=" + ttlSeconds + "s, maxAttempts=" + maxAttempts
                + (maxProcessingMs < 0 ? "" : ", maxProcessing=" + maxProcessingMs + "ms") + ", worker=" + Arrays.toString(worker) + "}";
    }
}
