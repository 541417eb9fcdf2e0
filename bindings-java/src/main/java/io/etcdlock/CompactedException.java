package io.etcdlock;

/** The watch's start revision was compacted away. Kind {@code COMPACTED}. */
public class CompactedException extends EtcdLockException {
    private static final long serialVersionUID = 1L;

    /** @param message what happened */
    public CompactedException(String message) {
        super("COMPACTED", message);
    }
}
