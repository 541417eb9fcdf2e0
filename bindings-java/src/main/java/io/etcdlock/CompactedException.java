package io.etcdlock;

/**
 * A watch's start revision (or the revision it had to resume from) was compacted away: the
 * history it needed is gone, and the watch has ended. Kind {@code COMPACTED}.
 */
public class CompactedException extends EtcdLockException {
    private static final long serialVersionUID = 1L;
    /** The revision etcd's history starts at now; 0 when etcd did not say. */
    private final long compactRevision;

    /** @param message what happened */
    public CompactedException(String message) {
        this(message, 0);
    }

    /**
     * @param message what happened
     * @param compactRevision the revision etcd's history starts at now (0: unknown)
     */
    public CompactedException(String message, long compactRevision) {
        super("COMPACTED", message);
        this.compactRevision = compactRevision;
    }

    /**
     * @return the compact revision: the oldest revision a watch can start from now (0 when
     *     etcd did not say)
     */
    public long compactRevision() {
        return compactRevision;
    }
}
