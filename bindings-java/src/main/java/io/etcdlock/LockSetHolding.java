package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Every member of a {@link LockSet}, held together (from {@link LockSet#acquire}), on this
 * client's lease, kept alive while held. {@link #close()} releases them in one transaction, so
 * {@code try (LockSetHolding locks = set.acquire(timeout)) { ... }} holds them for the block. The
 * set is lost when any member is (its lease ended, its key deleted): {@link #putIfHeld},
 * {@link #deleteIfHeld} and {@link #writeIfHeld} are checked by etcd in the same transaction
 * (every member's key still at the set's token) and after a loss throw {@link NotHeldException},
 * writing nothing. Thread-safe.
 */
public final class LockSetHolding implements AutoCloseable {
    private final NativeHandle handle;
    /** Keeps the set, and so its client, alive as long as the holding. */
    private final LockSet set;
    private final long fencingToken;
    private final long leaseId;
    private final List<String> names;
    private final List<String> keys;
    private final LostSink lost = new LostSink();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The open hold span when traced (Tracing), else null. */
    private volatile Tracing.Hold hold;

    LockSetHolding(NativeHandle handle, LockSet set) {
        this.handle = handle;
        this.set = set;
        this.fencingToken = handle.with(Native::lockSetHeldFencingToken);
        this.leaseId = handle.with(Native::lockSetHeldLeaseId);
        this.names = List.of(handle.with(h -> Native.lockSetHeldNames(h, false)));
        this.keys = List.of(handle.with(h -> Native.lockSetHeldNames(h, true)));
    }

    /**
     * @return the set's fencing token: the create revision every member's key shares, larger than
     *     every earlier holder's token of each member name
     */
    public long fencingToken() {
        return fencingToken;
    }

    /** @return the member names, in the set's order */
    public List<String> names() {
        return names;
    }

    /** @return each member's queue key in etcd ({@code <name>/<lease id hex>[-n]}), in the set's order */
    public List<String> keys() {
        return keys;
    }

    /** @return the ID of the lease every member's key is on */
    public long leaseId() {
        return leaseId;
    }

    /** @return the set it holds */
    public LockSet lockSet() {
        return set;
    }

    /**
     * A cheap local check: not released, and no member known lost. For writes that must be safe,
     * use {@link #putIfHeld}, checked by etcd.
     *
     * @return whether every member is still held as far as this process knows
     */
    public boolean isHeld() {
        try {
            return handle.with(Native::lockSetHeldIsHeld);
        } catch (ClosedException e) {
            return false;
        }
    }

    /** @return why the set was lost (its first member lost: {@code expired}, {@code revoked}, {@code key_deleted}, {@code closed}), if it was */
    public Optional<String> lostReason() {
        try {
            return Optional.ofNullable(handle.with(Native::lockSetHeldLostReason));
        } catch (ClosedException e) {
            return Optional.empty();
        }
    }

    /**
     * One call's view of the set ({@code ok()} while held and not in doubt; the name is the member names joined by {@code ,}):
     * what a readiness probe answers. Local reads only. Once closed (its native handle freed) it reads released.
     *
     * @return the view, taken now
     */
    public Health health() {
        try {
            return handle.with(Native::lockSetHeldHealth);
        } catch (ClosedException e) {
            return Health.released(String.join(",", names), fencingToken, leaseId);
        }
    }

    /**
     * Calls {@code callback} with the reason once any member is lost (stop: the set no longer
     * holds), not when the set is released; on an etcdlock callback thread, at once if it is lost
     * already. Callbacks never run after {@link #release}.
     *
     * @param callback called once with the reason
     * @throws NotHeldException if the set was released (lost or not)
     */
    public void onLost(Consumer<String> callback) {
        try {
            if (handle.with(Native::lockSetHeldIsReleased)) {
                throw notHeld();
            }
            lost.add(callback, () -> handle.run(h -> Native.lockSetHeldOnLost(h, lost)));
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /**
     * Writes {@code value} at {@code key} only while every member is held.
     *
     * @param key the key (not under a member's {@code <name>/} prefix)
     * @param value the value
     * @return the revision of the write
     * @throws NotHeldException if the set was lost or released; nothing is written
     */
    public long putIfHeld(String key, byte[] value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        return writeIfHeld(Map.of(key, value), List.of());
    }

    /**
     * Deletes {@code key} only while every member is held.
     *
     * @param key the key (not under a member's {@code <name>/} prefix)
     * @return the revision of the delete
     * @throws NotHeldException if the set was lost or released; nothing is deleted
     */
    public long deleteIfHeld(String key) {
        return writeIfHeld(Map.of(), List.of(Objects.requireNonNull(key, "key")));
    }

    /**
     * Applies puts and deletes in one transaction, only while every member is held.
     *
     * @param puts keys (not under a member's {@code <name>/} prefix) and their values
     * @param deletes keys to delete
     * @return the revision of the transaction
     * @throws NotHeldException if the set was lost or released; nothing is written
     * @throws IllegalArgumentException for no writes, more than 127, an empty key or one under a
     *     member's prefix
     */
    public long writeIfHeld(Map<String, byte[]> puts, Collection<String> deletes) {
        Objects.requireNonNull(puts, "puts");
        Objects.requireNonNull(deletes, "deletes");
        byte[][] putKeys = new byte[puts.size()][];
        byte[][] values = new byte[puts.size()][];
        int i = 0;
        for (Map.Entry<String, byte[]> e : puts.entrySet()) {
            putKeys[i] = bytes(e.getKey());
            values[i++] = Objects.requireNonNull(e.getValue(), "a put's value");
        }
        byte[][] dels = deletes.stream().map(LockSetHolding::bytes).toArray(byte[][]::new);
        try {
            return handle.with(h -> Native.lockSetHeldTxn(h, putKeys, values, dels));
        } catch (ClosedException e) {
            if (set.client().isClosed()) {
                throw e;
            }
            throw notHeld();
        }
    }

    /**
     * Member {@code name}'s {@link Fence}: its queue key at the set's token, for a database or
     * another service to check ({@link EtcdLockClient#checkFence}, {@code io.etcdlock.fencing.JdbcFence}).
     *
     * @param name a member's name
     * @return the fence
     * @throws NotHeldException once the set was released or lost
     * @throws IllegalArgumentException for a name that is not a member
     */
    public Fence fence(String name) {
        Objects.requireNonNull(name, "name");
        try {
            return Fence.parse(handle.with(h -> Native.lockSetHeldFence(h, name)));
        } catch (ClosedException e) {
            if (set.client().isClosed()) {
                throw e;
            }
            throw notHeld();
        }
    }

    /**
     * Releases every member in one transaction (each key deleted only if it is still this set's),
     * so the set is never released in part. No lost callback runs after this returns.
     *
     * @throws NotHeldException if it was already released, or a member was lost (every key still
     *     the set's is deleted either way)
     */
    public void release() {
        try {
            traced(() -> handle.run(Native::lockSetHeldRelease));
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /** Opens the hold span (see {@link Tracing#hold}), linked to the acquire's {@code waited}. */
    void traceHold(Tracing.Span waited) {
        hold = Tracing.hold(waited, Tracing.HOLD, set.spanName(), fencingToken, null, this, lost, () -> handle.run(h -> Native.lockSetHeldOnLost(h, lost)));
    }

    private void traced(Runnable release) {
        Tracing.released(hold, set.spanName(), fencingToken, null, release, () -> lostReason().orElse(null));
    }

    /**
     * Releases the set if it was not released yet, and frees it. Idempotent.
     *
     * @throws LockLostException if a member was lost before (not all of the block ran under the
     *     set; inside try-with-resources this is suppressed by an exception the block threw)
     */
    @Override
    public void close() {
        if (closed.getAndSet(true)) {
            return;
        }
        String lostWhy = null;
        try {
            if (!handle.with(Native::lockSetHeldIsReleased)) {
                try {
                    traced(() -> handle.run(Native::lockSetHeldRelease));
                } catch (NotHeldException e) {
                    lostWhy = handle.with(Native::lockSetHeldLostReason);
                } catch (ClosedException e) {
                    // The client closed first: its leases were revoked, nothing is left to release.
                }
            }
        } finally {
            handle.close();
        }
        if (lostWhy != null) {
            throw new LockLostException("the lock set " + names + " was lost before it was closed (" + lostWhy + ")");
        }
    }

    /** Releases without reporting, and frees it (a holding nobody will use). */
    void releaseQuietly() {
        try {
            close();
        } catch (RuntimeException e) {
            // Lost meanwhile: nothing to release.
        }
    }

    private NotHeldException notHeld() {
        return new NotHeldException("the lock set " + names + " was closed");
    }

    private static byte[] bytes(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("a key must not be empty");
        }
        return key.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "LockSetHolding{" + names + ", token=" + fencingToken + "}";
    }
}
