package io.etcdlock;

import java.time.Duration;
import java.util.Objects;

/** Durations handed to the native layer in milliseconds. */
final class Durations {
    private Durations() {}

    /**
     * A non-negative duration in milliseconds, a sub-millisecond one rounded up to 1, one too long
     * for a {@code long} of milliseconds at {@link Long#MAX_VALUE} (the native layer refuses it
     * where a bound applies).
     */
    static long millis(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative, got " + d);
        }
        try {
            long ms = d.toMillis();
            return ms == 0 && !d.isZero() ? 1 : ms;
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }
}
