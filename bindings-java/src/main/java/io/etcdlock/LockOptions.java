package io.etcdlock;

import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * How a {@link DistributedLock} holds: the TTL of the lease its queue key is bound to (kept
 * alive in the background while the process runs; when the process dies the lock is freed within
 * the TTL), and an optional value stored in the queue key (who holds or waits).
 */
public final class LockOptions {
    final long ttlSeconds;
    final byte[] value;
    /** A semaphore's permits (set by {@link EtcdLockClient#semaphore}); 0 otherwise. */
    final long permits;
    /** How many of a semaphore's permits an acquire takes (set by {@link DistributedSemaphore#withCount}). */
    final int count;

    private LockOptions(long ttlSeconds, byte[] value, long permits, int count) {
        this.ttlSeconds = ttlSeconds;
        this.value = value;
        this.permits = permits;
        this.count = count;
    }

    /**
     * @param ttl the lease TTL, rounded up to whole seconds (etcd's unit); positive
     * @return options with that TTL and no value
     * @throws IllegalArgumentException if {@code ttl} is zero or negative
     */
    public static LockOptions ttl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, got " + ttl);
        }
        long s = ttl.getSeconds() + (ttl.getNano() > 0 ? 1 : 0);
        return new LockOptions(s, new byte[0], 0, 1);
    }

    /**
     * @param value stored in the queue key while waiting and holding (at most 4096 bytes), for
     *     inspection tools to show; empty by default, as {@code etcdctl lock} stores
     * @return options with this value and the same TTL
     */
    public LockOptions value(byte[] value) {
        return new LockOptions(ttlSeconds, Objects.requireNonNull(value, "value").clone(), permits, count);
    }

    /** The same options for a semaphore of {@code n} permits. */
    LockOptions permits(long n) {
        return new LockOptions(ttlSeconds, value, n, count);
    }

    /** The same options for an acquire of {@code k} of a semaphore's permits at once. */
    LockOptions count(int k) {
        return new LockOptions(ttlSeconds, value, permits, k);
    }

    /** @return the TTL in seconds */
    public long ttlSeconds() {
        return ttlSeconds;
    }

    @Override
    public String toString() {
        return "LockOptions{ttl=" + ttlSeconds + "s, value=" + Arrays.toString(value) + "}";
    }
}
