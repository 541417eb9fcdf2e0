package io.etcdlock;

import java.time.Duration;
import java.util.Objects;

/**
 * How {@link TaskQueue#put} adds an item: its id (random if none: with an id, a put of an item
 * that exists changes nothing), its priority (higher first; in one priority, the order etcd
 * committed the puts) and a delay before it can be claimed. Immutable.
 */
public final class PutOptions {
    final String id;
    final int priority;
    final long delayMs;

    private PutOptions(String id, int priority, long delayMs) {
        this.id = id;
        this.priority = priority;
        this.delayMs = delayMs;
    }

    /** @return a random id, priority 0, no delay */
    public static PutOptions defaults() {
        return new PutOptions(null, 0, 0);
    }

    /**
     * @param id the item's id: 1 to 256 bytes of UTF-8, no newline, no NUL (checked by the put)
     * @return options with this id, the rest the same
     */
    public PutOptions id(String id) {
        return new PutOptions(Objects.requireNonNull(id, "id"), priority, delayMs);
    }

    /**
     * @param priority higher is claimed first
     * @return options with this priority, the rest the same
     */
    public PutOptions priority(int priority) {
        return new PutOptions(id, priority, delayMs);
    }

    /**
     * @param delay not claimable before this long (timed by an etcd lease: whole seconds,
     *     rounded up); {@link Duration#ZERO} for none
     * @return options with this delay, the rest the same
     * @throws IllegalArgumentException if {@code delay} is negative
     */
    public PutOptions delay(Duration delay) {
        return new PutOptions(id, priority, Durations.millis(delay, "delay"));
    }

    @Override
    public String toString() {
        return "PutOptions{id=" + id + ", priority=" + priority + ", delay=" + delayMs + "ms}";
    }
}
