package io.etcdlock;

/** etcd could not be reached (or had no leader) in time, or its TLS certificate was not accepted. Kind {@code UNAVAILABLE}. */
public class UnavailableException extends EtcdLockException {
    private static final long serialVersionUID = 1L;

    /** @param message what happened */
    public UnavailableException(String message) {
        super("UNAVAILABLE", message);
    }
}
