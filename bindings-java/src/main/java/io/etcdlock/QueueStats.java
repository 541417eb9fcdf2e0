package io.etcdlock;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** A task queue's items by state, read at one revision ({@link TaskQueue#stats}). Immutable. */
public final class QueueStats {
    private final long pending;
    private final Map<Integer, Long> pendingByPriority;
    private final long delayed;
    private final long claimed;
    private final long dead;
    private final long revision;

    private QueueStats(long pending, Map<Integer, Long> pendingByPriority, long delayed, long claimed, long dead, long revision) {
        this.pending = pending;
        this.pendingByPriority = pendingByPriority;
        this.delayed = delayed;
        this.claimed = claimed;
        this.dead = dead;
        this.revision = revision;
    }

    /** From the native layer's {@code [pending, delayed, claimed, dead, revision, priority, count...]}. */
    static QueueStats of(long[] v) {
        Map<Integer, Long> byPriority = new LinkedHashMap<>();
        for (int i = 5; i + 1 < v.length; i += 2) {
            byPriority.put((int) v[i], v[i + 1]);
        }
        return new QueueStats(v[0], Collections.unmodifiableMap(byPriority), v[1], v[2], v[3], v[4]);
    }

    /** @return the items claimable now */
    public long pending() {
        return pending;
    }

    /** @return {@link #pending()} by priority, in claim order (the highest priority first) */
    public Map<Integer, Long> pendingByPriority() {
        return pendingByPriority;
    }

    /** @return the items put or given back with a delay that has not passed */
    public long delayed() {
        return delayed;
    }

    /** @return the items a worker holds */
    public long claimed() {
        return claimed;
    }

    /** @return the items in the dead letters */
    public long dead() {
        return dead;
    }

    /** @return the etcd revision the counts are at */
    public long revision() {
        return revision;
    }

    @Override
    public String toString() {
        return "QueueStats{pending=" + pending + " " + pendingByPriority + ", delayed=" + delayed + ", claimed=" + claimed
                + ", dead=" + dead + ", revision=" + revision + "}";
    }
}
