package io.etcdlock;

/** The lock (or its lease) was lost: it is not, or no longer, held. Kind {@code LOCK_LOST}. */
public class LockLostException extends EtcdLockException {
    private static final long serialVersionUID = 1L;

    /** @param message what happened */
    public LockLostException(String message) {
        super("LOCK_LOST", message);
    }
}
