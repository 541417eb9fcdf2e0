package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A held distributed lock (from {@link DistributedLock#acquire}). Thread-safe. {@link #close()}
 * releases it, so {@code try (LockGuard held = lock.acquire(timeout)) { ... }} holds it for the
 * block. Holding can end without a release: when the lease expires (the process was cut off from
 * etcd longer than the TTL), the key is deleted, or the client closes. Write through
 * {@link #putIfHeld} to make writes that must happen only under the lock safe against that.
 */
public final class LockGuard implements AutoCloseable {
    private final NativeHandle handle;
    private final String name;
    private final long fencingToken;
    private final long leaseId;
    private final String key;
    private final LostSink lost = new LostSink();
    private final AtomicBoolean closed = new AtomicBoolean();

    LockGuard(NativeHandle handle, String name) {
        this.handle = handle;
        this.name = name;
        this.fencingToken = handle.with(Native::guardFencingToken);
        this.leaseId = handle.with(Native::guardLeaseId);
        this.key = new String(handle.with(Native::guardKey), StandardCharsets.UTF_8);
    }

    /** @return the lock's name */
    public String name() {
        return name;
    }

    /**
     * @return the fencing token: strictly greater than every earlier holder's token for this name
     *     (the queue key's create revision), to pass to a resource that rejects stale holders
     */
    public long fencingToken() {
        return fencingToken;
    }

    /** @return this holder's queue key in etcd, {@code <name>/<lease id hex>[-n]} */
    public String key() {
        return key;
    }

    /** @return the ID of the lease the lock is held with */
    public long leaseId() {
        return leaseId;
    }

    /**
     * A cheap local check: not released, not lost, and the lease's conservative local deadline has
     * not passed. For writes that must be safe, use {@link #putIfHeld}, checked by etcd.
     *
     * @return whether the lock is still held as far as this process knows
     */
    public boolean isHeld() {
        try {
            return handle.with(Native::guardIsHeld);
        } catch (ClosedException e) {
            return false;
        }
    }

    /** @return why the lock was lost ({@code expired}, {@code revoked}, {@code key_deleted}, {@code closed}), if it was */
    public Optional<String> lostReason() {
        try {
            return Optional.ofNullable(handle.with(Native::guardLostReason));
        } catch (ClosedException e) {
            return Optional.empty();
        }
    }

    /**
     * Writes {@code value} at {@code key} only while this lock is held: etcd checks that the
     * lock's key is still this holder's in the same transaction as the write.
     *
     * @param key the key (not under the lock's own {@code <name>/} prefix)
     * @param value the value
     * @return the revision of the write
     * @throws NotHeldException if the lock is not held (released, lost, or taken over); nothing is written
     */
    public long putIfHeld(String key, byte[] value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        try {
            return handle.with(g -> Native.guardPut(g, k, value));
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /** Runs a native call on the guard; a freed guard is {@link NotHeldException}. */
    long withHandle(NativeHandle.Call<Long> call) {
        try {
            return handle.with(call);
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /**
     * Calls {@code callback} with the reason ({@code expired}, {@code revoked}, {@code key_deleted},
     * {@code closed}) once the lock is lost, not when it is released; on an etcdlock callback
     * thread, at once if it is lost already. Callbacks added after {@link #release} never run.
     *
     * @param callback called once with the reason
     * @throws NotHeldException if the lock was released
     */
    public void onLost(Consumer<String> callback) {
        try {
            if (handle.with(Native::guardIsReleased) && handle.with(Native::guardLostReason) == null) {
                throw notHeld();
            }
            lost.add(callback, () -> handle.run(g -> Native.guardOnLost(g, lost)));
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /**
     * Releases the lock: deletes its key only if it is still this holder's (never a later
     * holder's). No lost callback runs after this returns.
     *
     * @throws NotHeldException if it was already released, or lost
     */
    public void release() {
        try {
            handle.run(Native::guardRelease);
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /**
     * Releases the lock if it was not released yet, and frees it. Idempotent.
     *
     * @throws LockLostException if the lock was lost before (not all of the block ran under it;
     *     inside try-with-resources this is suppressed by an exception the block threw)
     */
    @Override
    public void close() {
        if (closed.getAndSet(true)) {
            return;
        }
        String lostWhy = null;
        try {
            if (!handle.with(Native::guardIsReleased)) {
                try {
                    handle.run(Native::guardRelease);
                } catch (NotHeldException e) {
                    lostWhy = handle.with(Native::guardLostReason);
                } catch (ClosedException e) {
                    // The client closed first: its leases were revoked, nothing is left to release.
                }
            }
        } finally {
            handle.close();
        }
        if (lostWhy != null) {
            throw new LockLostException("the lock " + name + " was lost before it was closed (" + lostWhy + ")");
        }
    }

    /** Releases without reporting (a lock nobody will use: a cancelled or interrupted acquire's). */
    void releaseQuietly() {
        try {
            close();
        } catch (RuntimeException e) {
            // Lost meanwhile: nothing to release.
        }
    }

    private NotHeldException notHeld() {
        return new NotHeldException("the lock " + name + " was released");
    }

    @Override
    public String toString() {
        return "LockGuard{" + key + ", token=" + fencingToken + "}";
    }
}
