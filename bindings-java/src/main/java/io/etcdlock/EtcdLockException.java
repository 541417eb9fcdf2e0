package io.etcdlock;

/**
 * An etcdlock failure. Unchecked. {@link #kind()} is the core's error kind, the same string in
 * every binding (Node's {@code err.code}, the C {@code ETCDLOCK_E_*} names without the prefix):
 * {@code UNAVAILABLE}, {@code TIMEOUT}, {@code LOCK_TIMEOUT}, {@code WOULD_BLOCK}, {@code LOCK_LOST},
 * {@code NOT_HELD}, {@code COMPACTED}, {@code CANCELLED}, {@code CLOSED}, {@code AUTH},
 * {@code WRONG_CONTEXT}, {@code INTERNAL}. Bad input ({@code INVALID_ARGUMENT}) is an
 * {@link IllegalArgumentException} instead, as Java code expects.
 */
public class EtcdLockException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    /** The core's error kind. */
    private final String kind;

    /**
     * @param kind the core's error kind, e.g. {@code "UNAVAILABLE"}
     * @param message what happened
     */
    public EtcdLockException(String kind, String message) {
        super(message);
        this.kind = kind;
    }

    /** @return the core's error kind, e.g. {@code "LOCK_TIMEOUT"} */
    public String kind() {
        return kind;
    }
}
