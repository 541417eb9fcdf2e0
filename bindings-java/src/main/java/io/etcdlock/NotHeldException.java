package io.etcdlock;

/** The operation needs a held lock and it is not held (released or lost); nothing was written. Kind {@code NOT_HELD}. */
public class NotHeldException extends EtcdLockException {
    private static final long serialVersionUID = 1L;

    /** @param message what happened */
    public NotHeldException(String message) {
        super("NOT_HELD", message);
    }
}
