package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;

/** One acquisition in a lock's queue, as {@link EtcdLockClient#inspect} read it. Immutable. */
public final class QueueEntry {
    private final byte[] key;
    private final long fencingToken;
    private final long leaseId;
    private final long ttlSeconds;
    private final byte[] value;
    private final String mode;

    private QueueEntry(byte[] key, long fencingToken, long leaseId, long ttlSeconds, byte[] value, String mode) {
        this.key = key;
        this.fencingToken = fencingToken;
        this.leaseId = leaseId;
        this.ttlSeconds = ttlSeconds;
        this.value = value;
        this.mode = mode;
    }

    /** Made by the native layer (bindings-java/src/inspect.rs); {@code ttl} -1 = the lease is gone. */
    static QueueEntry of(byte[] key, long fencingToken, long leaseId, long ttl, byte[] value, String mode) {
        return new QueueEntry(key, fencingToken, leaseId, ttl, value, mode);
    }

    /** @return the queue key, {@code <name>/<lease hex>[-n]} (what {@link LockGuard#key()} gives its holder) */
    public String key() {
        return new String(key, StandardCharsets.UTF_8);
    }

    /** @return the key's create revision: the fencing token it has, or will have once it holds */
    public long fencingToken() {
        return fencingToken;
    }

    /** @return the lease the key is bound to */
    public long leaseId() {
        return leaseId;
    }

    /** @return the seconds the lease has left on the server; empty if it is gone (the key with it) */
    public OptionalLong ttlSeconds() {
        return ttlSeconds < 0 ? OptionalLong.empty() : OptionalLong.of(ttlSeconds);
    }

    /**
     * @return the value the acquire attached ({@link LockOptions#value(byte[])}) as a copy; empty
     *     for none, and for {@code etcdctl lock} or Go's {@code concurrency.Mutex}
     */
    public byte[] value() {
        return value.clone();
    }

    /**
     * @return {@code "read"} or {@code "write"} for a read-write lock's key, {@code "permits=N"}
     *     for a semaphore's of N, {@code ""} for a lock's or an election's
     */
    public String mode() {
        return mode;
    }

    /** @return the key, token, lease and TTL (not the value) */
    @Override
    public String toString() {
        return "QueueEntry{" + key() + ", token=" + fencingToken + ", lease=" + Long.toHexString(leaseId) + ", ttl="
                + (ttlSeconds < 0 ? "gone" : ttlSeconds + "s") + (mode.isEmpty() ? "" : ", " + mode) + "}";
    }
}
