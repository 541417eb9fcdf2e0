package io.etcdlock;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * How {@link EtcdLockClient#once} triggers a once-per-period job: the period (at least 1 s), the
 * TTL of the claim's lease (kept alive while the job runs; default 10 s), the trigger time (now by
 * default; its nearest period boundary is the slot) and how many periods a done mark is kept (at
 * least 2; default 3). Immutable.
 */
public final class OnceOptions {
    final long everyMs;
    final long ttlSeconds;
    final Instant at;
    final int keepPeriods;

    private OnceOptions(long everyMs, long ttlSeconds, Instant at, int keepPeriods) {
        this.everyMs = everyMs;
        this.ttlSeconds = ttlSeconds;
        this.at = at;
        this.keepPeriods = keepPeriods;
    }

    /**
     * @param every the period, at least 1 s (checked by {@link EtcdLockClient#once})
     * @return options for that period: a 10 s claim TTL, triggered now, done marks kept 3 periods
     * @throws IllegalArgumentException if {@code every} is negative
     */
    public static OnceOptions every(Duration every) {
        return new OnceOptions(Durations.millis(every, "every"), 10, null, 3);
    }

    /**
     * @param ttl the claim's lease TTL, rounded up to whole seconds; positive
     * @return options with that TTL, the rest the same
     * @throws IllegalArgumentException if {@code ttl} is zero or negative
     */
    public OnceOptions ttl(Duration ttl) {
        return new OnceOptions(everyMs, LockOptions.ttl(Objects.requireNonNull(ttl, "ttl")).ttlSeconds(), at, keepPeriods);
    }

    /**
     * @param at the trigger time (not before 1970, checked by {@link EtcdLockClient#once}): its
     *     nearest period boundary is the slot, so hosts whose clocks differ by less than half a
     *     period pick the same one
     * @return options with that trigger time, the rest the same
     */
    public OnceOptions at(Instant at) {
        return new OnceOptions(everyMs, ttlSeconds, Objects.requireNonNull(at, "at"), keepPeriods);
    }

    /**
     * @param n how many periods a done mark is kept: at least 2 (checked by {@link EtcdLockClient#once})
     * @return options with that many, the rest the same
     */
    public OnceOptions keepPeriods(int n) {
        return new OnceOptions(everyMs, ttlSeconds, at, n);
    }

    @Override
    public String toString() {
        return "OnceOptions{every=" + everyMs + "ms, ttl=" + ttlSeconds + "s, at=" + (at == null ? "now" : at) + ", keepPeriods="
                + keepPeriods + "}";
    }
}
