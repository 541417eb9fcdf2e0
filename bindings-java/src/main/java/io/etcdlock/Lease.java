package io.etcdlock;

import java.util.Optional;
import java.util.function.Consumer;

/**
 * A lease, kept alive in the background until revoked or closed (from {@link EtcdLockClient#lease}).
 * Keys put with it ({@link EtcdLockClient#put(String, byte[], Lease)}) are deleted when it ends.
 * Thread-safe. {@link #close()} revokes it.
 */
public final class Lease implements AutoCloseable {
    private final NativeHandle handle;
    private final long id;
    private final long ttlSeconds;
    private final LostSink lost = new LostSink();

    Lease(NativeHandle handle) {
        this.handle = handle;
        this.id = handle.with(Native::leaseId);
        this.ttlSeconds = handle.with(Native::leaseTtl);
    }

    /** @return the lease ID (what {@code etcdctl lease list} shows, in hex) */
    public long id() {
        return id;
    }

    /** @return the TTL the server granted, in seconds (it may raise a short one to its minimum) */
    public long ttlSeconds() {
        return ttlSeconds;
    }

    /**
     * A cheap local check: not revoked or lost, and the conservative local deadline has not passed.
     *
     * @return whether the lease is alive as far as this process knows
     */
    public boolean isAlive() {
        try {
            return handle.with(Native::leaseIsAlive);
        } catch (ClosedException e) {
            return false;
        }
    }

    /** @return why the lease was lost ({@code expired}, {@code revoked}, {@code closed}), if it was */
    public Optional<String> lostReason() {
        try {
            return Optional.ofNullable(handle.with(Native::leaseLostReason));
        } catch (ClosedException e) {
            return Optional.of("revoked");
        }
    }

    /**
     * Calls {@code callback} with the reason once the lease is lost (revoked, expired, or its
     * client closed), on an etcdlock callback thread; at once if it is lost already.
     *
     * @param callback called once with the reason
     */
    public void onLost(Consumer<String> callback) {
        lost.add(callback, () -> handle.run(l -> Native.leaseOnLost(l, lost)));
    }

    /** Revokes the lease, deleting every key attached to it. Idempotent. */
    public void revoke() {
        if (!handle.isClosed()) {
            handle.run(Native::leaseRevoke);
        }
    }

    /** Revokes the lease (unless its client is closed) and frees it. Idempotent. */
    @Override
    public void close() {
        handle.close();
    }

    NativeHandle handle() {
        return handle;
    }

    @Override
    public String toString() {
        return "Lease{" + Long.toHexString(id) + ", ttl=" + ttlSeconds + "s}";
    }
}
