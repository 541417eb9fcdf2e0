package io.etcdlock;

/** The client (or the object's owner) was closed. Kind {@code CLOSED}. */
public class ClosedException extends EtcdLockException {
    private static final long serialVersionUID = 1L;

    /** @param message what happened */
    public ClosedException(String message) {
        super("CLOSED", message);
    }
}
