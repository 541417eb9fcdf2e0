package io.etcdlock;

/**
 * The JNI entry points of libetcdlock_jni (bindings-java/src/*.rs). Handles are pointers owned by
 * {@link NativeHandle}; every method may throw what {@link Errors#of} makes of a core error.
 */
final class Native {
    static {
        NativeLoader.load();
    }

    private Native() {}

    /** Makes sure the library is loaded (and its exit hook installed). */
    static void init() {}

    static native long clientConnect(String[] endpoints, long connectMs, long requestMs, String user, String password,
            String caFile, String certFile, String keyFile);

    static native void clientClose(long client);

    static native boolean clientIsClosed(long client);

    static native void clientFree(long client);

    static native String clientMetricsText(long client);

    static native void shutdown(long timeoutMs);

    static native long put(long client, byte[] key, byte[] value, long lease);

    static native byte[] get(long client, byte[] key);

    static native boolean delete(long client, byte[] key);

    static native long leaseGrant(long client, long ttlSeconds);

    static native long leaseId(long lease);

    static native long leaseTtl(long lease);

    static native boolean leaseIsAlive(long lease);

    static native String leaseLostReason(long lease);

    static native void leaseOnLost(long lease, LostSink sink);

    static native void leaseRevoke(long lease);

    static native void leaseFree(long lease);

    /** Returns a cancel token handle; the outcome goes to {@code call.done} once, later. */
    static native long lockAcquire(long client, String name, long ttlSeconds, long timeoutMs, byte[] value, AcquireCall call);

    static native void cancel(long token);

    static native void cancelFree(long token);

    static native long guardFencingToken(long guard);

    static native long guardLeaseId(long guard);

    static native boolean guardIsHeld(long guard);

    static native boolean guardIsReleased(long guard);

    static native byte[] guardKey(long guard);

    static native String guardLostReason(long guard);

    static native long guardPut(long guard, byte[] key, byte[] value);

    static native void guardOnLost(long guard, LostSink sink);

    static native void guardRelease(long guard);

    static native void guardFree(long guard);
}
