package io.etcdlock;

/**
 * How a {@link Watch} starts: from a revision (default: the changes made after the watch is
 * confirmed) and with or without each event's previous value. Immutable; each method returns a
 * new instance.
 *
 * <pre>{@code
 * client.watchPrefix("jobs/", WatchOptions.startRevision(rev).prevKv(true));
 * }</pre>
 */
public final class WatchOptions {
    private static final WatchOptions DEFAULTS = new WatchOptions(0, false);
    final long startRevision;
    final boolean prevKv;

    private WatchOptions(long startRevision, boolean prevKv) {
        this.startRevision = startRevision;
        this.prevKv = prevKv;
    }

    /** @return the defaults: from now, no previous values */
    public static WatchOptions defaults() {
        return DEFAULTS;
    }

    /**
     * @param revision the first revision to deliver (history is replayed from there); positive
     * @return options starting there
     * @throws IllegalArgumentException if {@code revision} is not positive
     */
    public static WatchOptions startRevision(long revision) {
        return DEFAULTS.fromRevision(revision);
    }

    /**
     * @param revision the first revision to deliver; positive
     * @return these options, starting at {@code revision}
     * @throws IllegalArgumentException if {@code revision} is not positive
     */
    public WatchOptions fromRevision(long revision) {
        if (revision <= 0) {
            throw new IllegalArgumentException("start revision must be positive, got " + revision);
        }
        return new WatchOptions(revision, prevKv);
    }

    /**
     * @param prevKv whether each event carries the key's previous value ({@link WatchEvent#prevValue()})
     * @return these options with that setting
     */
    public WatchOptions prevKv(boolean prevKv) {
        return new WatchOptions(startRevision, prevKv);
    }

    /** @return the start revision, 0 for "from now" */
    public long startRevision() {
        return startRevision;
    }

    /** @return whether events carry the previous value */
    public boolean prevKv() {
        return prevKv;
    }

    @Override
    public String toString() {
        return "WatchOptions{start=" + (startRevision == 0 ? "now" : startRevision) + ", prevKv=" + prevKv + "}";
    }
}
