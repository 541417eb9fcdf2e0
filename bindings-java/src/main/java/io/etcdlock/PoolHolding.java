package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Slots held from a {@link Pool} (from {@link Pool#acquire}), on this client's lease, kept alive
 * while held. {@link #close()} releases them, so {@code try (PoolHolding held = pool.acquire(1,
 * timeout)) { ... }} holds them for the block. Like a lock, a holding can be lost (the lease
 * ended: stop using the slots; another holder may get them after the pool's reuse delay):
 * {@link #putIfHeld}, {@link #deleteIfHeld} and {@link #writeIfHeld} are checked by etcd in the
 * same transaction (every slot still this holding's) and after a loss throw
 * {@link NotHeldException}, writing nothing.
 *
 * <p>An acquire with the owner of a live holding returns another {@code PoolHolding} on the same
 * holding: {@link #release()} on either releases it for both, {@link #close()} of one keeps it
 * for the other (the last one closed releases it). Thread-safe.
 */
public final class PoolHolding implements AutoCloseable {
    private final NativeHandle handle;
    /** Keeps the pool, and so its client, alive as long as the holding. */
    private final Pool pool;
    private final List<String> slots;
    private final Map<String, Long> tokens;
    private final long fencingToken;
    private final String owner;
    private final long leaseId;
    private final LostSink lost = new LostSink();
    private final AtomicBoolean released = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The open hold span when traced (Tracing), else null. */
    private volatile Tracing.Hold hold;

    PoolHolding(NativeHandle handle, Pool pool) {
        this.handle = handle;
        this.pool = pool;
        this.slots = List.of(handle.with(Native::poolHeldSlots));
        long[] t = handle.with(Native::poolHeldTokens);
        Map<String, Long> byId = new LinkedHashMap<>();
        for (int i = 0; i < slots.size(); i++) {
            byId.put(slots.get(i), t[i]);
        }
        this.tokens = java.util.Collections.unmodifiableMap(byId);
        this.fencingToken = handle.with(Native::poolHeldFencingToken);
        this.owner = handle.with(Native::poolHeldOwner);
        this.leaseId = handle.with(Native::poolHeldLeaseId);
    }

    /** @return the slot ids held, in the pool's order */
    public List<String> slots() {
        return slots;
    }

    /**
     * @return each slot with its fencing token (its key's create revision, larger for every later
     *     holder of that slot), in the pool's order
     */
    public Map<String, Long> tokens() {
        return tokens;
    }

    /** @return the acquisition's fencing token: larger for every later acquisition from the pool */
    public long fencingToken() {
        return fencingToken;
    }

    /** @return the owner the slots were acquired with, if any */
    public Optional<String> owner() {
        return Optional.ofNullable(owner);
    }

    /** @return the ID of the lease the slots are held on */
    public long leaseId() {
        return leaseId;
    }

    /** @return the pool they were taken from */
    public Pool pool() {
        return pool;
    }

    /**
     * A cheap local check: neither released nor known lost. For writes that must be safe, use
     * {@link #putIfHeld}, checked by etcd.
     *
     * @return whether the slots are still held as far as this process knows
     */
    public boolean isHeld() {
        try {
            return handle.with(Native::poolHeldIsHeld);
        } catch (ClosedException e) {
            return false;
        }
    }

    /** @return why the holding was lost ({@code expired}, {@code revoked}, {@code key_deleted}, {@code closed}), if it was */
    public Optional<String> lostReason() {
        try {
            return Optional.ofNullable(handle.with(Native::poolHeldLostReason));
        } catch (ClosedException e) {
            return Optional.empty();
        }
    }

    /**
     * One call's view of the holding ({@code ok()} while held and not in doubt; the name is the pool's):
     * what a readiness probe answers. Local reads only. Once closed (its native handle freed) it reads released.
     *
     * @return the view, taken now
     */
    public Health health() {
        try {
            return handle.with(Native::poolHeldHealth);
        } catch (ClosedException e) {
            return Health.released(pool.name(), fencingToken, leaseId);
        }
    }

    /**
     * Calls {@code callback} with the reason once the holding is lost (stop using the slots), not
     * when it is released; on an etcdlock callback thread, at once if it is lost already.
     *
     * @param callback called once with the reason
     * @throws NotHeldException if the slots were released
     */
    public void onLost(Consumer<String> callback) {
        try {
            lost.add(callback, () -> handle.run(h -> Native.poolHeldOnLost(h, lost)));
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /**
     * Writes {@code value} at {@code key} only while every slot is still this holding's.
     *
     * @param key the key (not under the pool's own {@code <name>/} prefix)
     * @param value the value
     * @return the revision of the write
     * @throws NotHeldException if the holding was lost or released; nothing is written
     */
    public long putIfHeld(String key, byte[] value) {
        Objects.requireNonNull(value, "value");
        return writeIfHeld(Map.of(key(key), value), List.of());
    }

    /**
     * Deletes {@code key} only while every slot is still this holding's.
     *
     * @param key the key (not under the pool's own {@code <name>/} prefix)
     * @return the revision of the delete
     * @throws NotHeldException if the holding was lost or released; nothing is deleted
     */
    public long deleteIfHeld(String key) {
        return writeIfHeld(Map.of(), List.of(key(key)));
    }

    /**
     * Applies puts and deletes in one transaction, only while every slot is still this holding's.
     *
     * @param puts keys (not under the pool's own {@code <name>/} prefix) and their values
     * @param deletes keys to delete
     * @return the revision of the transaction
     * @throws NotHeldException if the holding was lost or released; nothing is written
     * @throws IllegalArgumentException for no writes, more than 64, an empty key or one under the
     *     pool's prefix
     */
    public long writeIfHeld(Map<String, byte[]> puts, Collection<String> deletes) {
        Objects.requireNonNull(puts, "puts");
        Objects.requireNonNull(deletes, "deletes");
        byte[][] keys = new byte[puts.size()][];
        byte[][] values = new byte[puts.size()][];
        int i = 0;
        for (Map.Entry<String, byte[]> e : puts.entrySet()) {
            keys[i] = bytes(e.getKey());
            values[i++] = Objects.requireNonNull(e.getValue(), "a put's value");
        }
        byte[][] dels = deletes.stream().map(PoolHolding::bytes).toArray(byte[][]::new);
        try {
            return handle.with(h -> Native.poolHeldTxn(h, keys, values, dels));
        } catch (ClosedException e) {
            if (pool.client().isClosed()) {
                throw e;
            }
            throw notHeld();
        }
    }

    /**
     * The {@link Fence} of slot {@code slot}: its key ({@code <pool>/slot/<id>}) at the slot's
     * token, for a database or another service to check ({@link EtcdLockClient#checkFence},
     * {@code io.etcdlock.fencing.JdbcFence}). As the core's, also after the release (it then no
     * longer checks).
     *
     * @param slot a slot this holding holds
     * @return the fence
     * @throws IllegalArgumentException for a slot it does not hold
     */
    public Fence fence(String slot) {
        Objects.requireNonNull(slot, "slot");
        return Fence.parse(handle.with(h -> Native.poolHeldFence(h, slot)));
    }

    /**
     * Gives every slot back at once (each free for the next request, with no reuse delay), also for
     * other handles on this holding. No lost callback runs after this returns.
     *
     * @throws NotHeldException if the slots were already released, or lost
     */
    public void release() {
        released.set(true);
        try {
            Tracing.released(hold, pool.name(), fencingToken, String.join(",", slots), () -> handle.run(Native::poolHeldRelease), () -> lostReason().orElse(null));
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /** Opens the hold span (see {@link Tracing#hold}), linked to the acquire's {@code waited}. */
    void traceHold(Tracing.Span waited) {
        hold = Tracing.hold(waited, Tracing.HOLD, pool.name(), fencingToken, String.join(",", slots), this, lost,
                () -> handle.run(h -> Native.poolHeldOnLost(h, lost)));
    }

    /**
     * Releases the slots unless they were released (or another handle on this holding, from an
     * acquire with its owner, is still open), and frees this handle. Idempotent.
     *
     * @throws LockLostException if the holding was lost before (not all of the block ran with the
     *     slots; inside try-with-resources this is suppressed by an exception the block threw)
     */
    @Override
    public void close() {
        if (closed.getAndSet(true)) {
            return;
        }
        String lostWhy = released.get() ? null : lostReason().orElse(null);
        Tracing.Hold h = hold;
        if (h != null) {
            h.end(lostWhy == null ? "released" : "lost", lostWhy);
        }
        // The native free releases a holding still held when this is its last handle.
        handle.close();
        if (lostWhy != null) {
            throw new LockLostException("the slots " + slots + " of pool " + pool.name() + " were lost before they were closed (" + lostWhy + ")");
        }
    }

    /** Releases without reporting, and frees it (a holding nobody will use). */
    void releaseQuietly() {
        closed.set(true);
        handle.close();
    }

    private NotHeldException notHeld() {
        return new NotHeldException("the slots " + slots + " of pool " + pool.name() + " were closed");
    }

    private static String key(String key) {
        Objects.requireNonNull(key, "key");
        return key;
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
        return "PoolHolding{" + pool.name() + " " + tokens + ", token=" + fencingToken + "}";
    }
}
