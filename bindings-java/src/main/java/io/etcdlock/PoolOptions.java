package io.etcdlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link Pool} is: its slot ids ({@link #slots(String...)}, or {@link #size(int)} slots
 * named {@code "0"} to {@code "n-1"}), the TTL of the lease holdings live on (kept alive while
 * held; default 10 s) and how long a slot whose holder died rests before it is handed out again
 * ({@link #reuseDelay(Duration)}; default zero: at once). Every participant of a pool must give
 * the same slots and reuse delay. The rules on ids (1 to 1024 of them, each 1 to 128 bytes without
 * {@code /} or a newline, no duplicates) are checked by {@link EtcdLockClient#pool}. Immutable.
 */
public final class PoolOptions {
    /** The ids; null for {@link #size}'s numbered slots. */
    final String[] slots;
    final int size;
    final long ttlSeconds;
    final long reuseDelayMs;

    private PoolOptions(String[] slots, int size, long ttlSeconds, long reuseDelayMs) {
        this.slots = slots;
        this.size = size;
        this.ttlSeconds = ttlSeconds;
        this.reuseDelayMs = reuseDelayMs;
    }

    /**
     * @param ids the slot ids, in the pool's order
     * @return a pool of these slots, TTL 10 s, no reuse delay
     */
    public static PoolOptions slots(String... ids) {
        Objects.requireNonNull(ids, "ids");
        return slots(Arrays.asList(ids));
    }

    /**
     * @param ids the slot ids, in the pool's order (no null)
     * @return a pool of these slots, TTL 10 s, no reuse delay
     */
    public static PoolOptions slots(Collection<String> ids) {
        Objects.requireNonNull(ids, "ids");
        String[] copy = ids.toArray(new String[0]);
        for (String id : copy) {
            Objects.requireNonNull(id, "a slot id");
        }
        return new PoolOptions(copy, copy.length, 10, 0);
    }

    /**
     * @param n the number of slots, named {@code "0"} to {@code "n-1"} (1 to 1024, checked by
     *     {@link EtcdLockClient#pool})
     * @return a pool of {@code n} numbered slots, TTL 10 s, no reuse delay
     */
    public static PoolOptions size(int n) {
        return new PoolOptions(null, n, 10, 0);
    }

    /**
     * @param ttl the TTL of the lease holdings live on, rounded up to whole seconds; positive
     * @return options with that TTL, the rest the same
     * @throws IllegalArgumentException if {@code ttl} is zero or negative
     */
    public PoolOptions ttl(Duration ttl) {
        return new PoolOptions(slots, size, LockOptions.ttl(Objects.requireNonNull(ttl, "ttl")).ttlSeconds(), reuseDelayMs);
    }

    /**
     * How long a slot whose holder died (its lease ended) rests before it is handed out again,
     * timed by an etcd lease (whole seconds, rounded up; at least etcd's minimum lease TTL of about
     * 2 s unless zero). A released slot is free at once.
     *
     * @param delay the rest; {@link Duration#ZERO} for none
     * @return options with that delay, the rest the same
     * @throws IllegalArgumentException if {@code delay} is negative
     */
    public PoolOptions reuseDelay(Duration delay) {
        return new PoolOptions(slots, size, ttlSeconds, Durations.millis(delay, "reuseDelay"));
    }

    /** @return the slot ids, in the pool's order */
    public List<String> slotIds() {
        if (slots != null) {
            return List.of(slots);
        }
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            ids.add(Integer.toString(i));
        }
        return List.copyOf(ids);
    }

    /** @return the TTL in seconds */
    public long ttlSeconds() {
        return ttlSeconds;
    }

    /** @return how long a dead holder's slot rests */
    public Duration reuseDelay() {
        return Duration.ofMillis(reuseDelayMs);
    }

    @Override
    public String toString() {
        return "PoolOptions{" + (slots != null ? "slots=" + Arrays.toString(slots) : "size=" + size) + ", ttl=" + ttlSeconds
                + "s, reuseDelay=" + reuseDelayMs + "ms}";
    }
}
