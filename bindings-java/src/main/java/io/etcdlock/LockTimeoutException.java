package io.etcdlock;

/** The lock was not acquired within the timeout given to the acquire; the queue key is gone. Kind {@code LOCK_TIMEOUT}. */
public class LockTimeoutException extends EtcdLockException {
    private static final long serialVersionUID = 1L;

    /** @param message what happened */
    public LockTimeoutException(String message) {
        super("LOCK_TIMEOUT", message);
    }
}
