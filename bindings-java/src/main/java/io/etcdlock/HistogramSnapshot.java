package io.etcdlock;

import java.util.List;

/**
 * A histogram of durations read at one moment (in {@link Metrics}).
 *
 * @param count how many durations were recorded
 * @param sum their sum, in seconds
 * @param buckets cumulative buckets by increasing upper bound; {@code count} is the {@code +Inf} one
 */
public record HistogramSnapshot(long count, double sum, List<Bucket> buckets) {
    /**
     * @param count as above
     * @param sum as above
     * @param buckets as above
     */
    public HistogramSnapshot {
        buckets = List.copyOf(buckets);
    }

    /**
     * One cumulative bucket.
     *
     * @param upperBound its upper bound, in seconds (Prometheus {@code le})
     * @param count how many durations were at most {@code upperBound}
     */
    public record Bucket(double upperBound, long count) {}
}
