package io.etcdlock;

/** Maps the core's error kinds to exceptions (called by the native layer too). */
final class Errors {
    private Errors() {}

    /** The exception for a core error of {@code kind} (the native layer throws what this returns). */
    static RuntimeException of(String kind, String message) {
        switch (kind) {
            case "INVALID_ARGUMENT":
                return new IllegalArgumentException(message);
            case "LOCK_TIMEOUT":
                return new LockTimeoutException(message);
            case "LOCK_LOST":
                return new LockLostException(message);
            case "NOT_HELD":
                return new NotHeldException(message);
            case "UNAVAILABLE":
                return new UnavailableException(message);
            case "AUTH":
                return new AuthException(message);
            case "COMPACTED":
                return new CompactedException(message);
            case "CLOSED":
                return new ClosedException(message);
            default:
                return new EtcdLockException(kind, message);
        }
    }

    /** A COMPACTED error with the revision etcd's history starts at (called by the native layer). */
    static RuntimeException compacted(String message, long compactRevision) {
        return new CompactedException(message, compactRevision);
    }

    /**
     * The same failure as {@code e}, made on the calling thread, so that its stack trace shows
     * the caller's frames (an acquire's outcome is made on a runtime thread); {@code e} is its cause.
     */
    static RuntimeException again(Throwable e) {
        RuntimeException fresh;
        if (e instanceof CompactedException) {
            fresh = compacted(e.getMessage(), ((CompactedException) e).compactRevision());
        } else if (e instanceof EtcdLockException) {
            fresh = of(((EtcdLockException) e).kind(), e.getMessage());
        } else if (e instanceof IllegalArgumentException) {
            fresh = new IllegalArgumentException(e.getMessage());
        } else if (e instanceof RuntimeException) {
            return (RuntimeException) e;
        } else {
            return new EtcdLockException("INTERNAL", String.valueOf(e));
        }
        fresh.initCause(e);
        return fresh;
    }
}
