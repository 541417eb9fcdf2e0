package io.etcdlock;

/** Authentication or permission failure. Kind {@code AUTH}. */
public class AuthException extends EtcdLockException {
    private static final long serialVersionUID = 1L;

    /** @param message what happened */
    public AuthException(String message) {
        super("AUTH", message);
    }
}
