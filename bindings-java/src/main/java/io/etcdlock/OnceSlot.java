package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The period's slot of a once-per-period job, won by this caller ({@link EtcdLockClient#once}):
 * run the job, then {@link #done()}; or {@link #release()} when it failed, to let the next trigger
 * in the period run it. {@link #close()} marks it done unless it was done or released, so
 * {@code try (OnceSlot s = won.get()) { ... }} marks the period done at the end of the block
 * (release it in the block when the job fails). A slot nobody closed is released when it is
 * garbage collected, and so is one whose winner dies. The job's writes go through
 * {@link #putIfHeld} / {@link #deleteIfHeld}, fenced by the claim. Thread-safe.
 */
public final class OnceSlot implements AutoCloseable {
    private final NativeHandle handle;
    private final String name;
    /** Keeps the client (closed when collected) alive as long as the slot. */
    private final EtcdLockClient client;
    private final long slot;
    private final long fencingToken;
    /** The claim's view when it was made: its lock's name and lease, for {@link #health} once closed. */
    private final Health claimed;
    private final LostSink lost = new LostSink();
    private final AtomicBoolean ended = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    OnceSlot(NativeHandle handle, String name, EtcdLockClient client) {
        this.handle = handle;
        this.name = name;
        this.client = client;
        this.slot = handle.with(Native::slotIndex);
        this.fencingToken = handle.with(Native::slotFencingToken);
        this.claimed = handle.with(Native::slotHealth);
    }

    /** @return the job's name */
    public String name() {
        return name;
    }

    /** @return the slot's index: its period boundary is {@code slot * every} after the epoch */
    public long slot() {
        return slot;
    }

    /** @return the claim's fencing token: larger for every later claim */
    public long fencingToken() {
        return fencingToken;
    }

    /** @return whether the claim is still held as far as this process knows (neither done, released nor lost) */
    public boolean isHeld() {
        try {
            return handle.with(Native::slotIsHeld);
        } catch (ClosedException e) {
            return false;
        }
    }

    /** @return why the claim was lost, if it was */
    public Optional<String> lostReason() {
        try {
            return Optional.ofNullable(handle.with(Native::slotLostReason));
        } catch (ClosedException e) {
            return Optional.empty();
        }
    }

    /**
     * One call's view of the claim ({@code ok()} while held and not in doubt; the name is the slot's lock, {@code <job>/slot/<n>}):
     * what a readiness probe answers. Local reads only. Once closed (its native handle freed) it reads released.
     *
     * @return the view, taken now
     */
    public Health health() {
        try {
            return handle.with(Native::slotHealth);
        } catch (ClosedException e) {
            return Health.released(claimed.name(), fencingToken, claimed.leaseId());
        }
    }

    /**
     * Calls {@code callback} with the reason once the claim is lost while the job runs (another
     * trigger may run it now); on an etcdlock callback thread, at once if it is lost already.
     *
     * @param callback called once with the reason
     * @throws NotHeldException if the slot was done or released
     */
    public void onLost(Consumer<String> callback) {
        try {
            lost.add(callback, () -> handle.run(s -> Native.slotOnLost(s, lost)));
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /**
     * Writes {@code value} at {@code key} only while the claim holds: etcd checks it in the same
     * transaction as the write, so a winner that was cut off, and whose period another trigger
     * took over, writes nothing.
     *
     * @param key the key (not under the job's own {@code <name>/} prefix)
     * @param value the value
     * @return the revision of the write
     * @throws NotHeldException if the claim was lost, or the slot done or released; nothing is written
     * @throws IllegalArgumentException for an empty key or one under the job's own prefix
     */
    public long putIfHeld(String key, byte[] value) {
        byte[] k = key(key);
        Objects.requireNonNull(value, "value");
        return write(s -> Native.slotPut(s, k, value));
    }

    /**
     * Deletes {@code key} only while the claim holds.
     *
     * @param key the key (not under the job's own {@code <name>/} prefix)
     * @return the revision of the delete
     * @throws NotHeldException if the claim was lost, or the slot done or released; nothing is deleted
     */
    public long deleteIfHeld(String key) {
        byte[] k = key(key);
        return write(s -> Native.slotDelete(s, k));
    }

    private long write(NativeHandle.Call<Long> call) {
        try {
            return handle.with(call);
        } catch (ClosedException e) {
            if (client.isClosed()) {
                throw e;
            }
            throw notHeld();
        }
    }

    private static byte[] key(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("a key must not be empty");
        }
        return key.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Marks the period's job done and ends the claim, in one transaction that applies only while
     * the claim holds: later triggers in the period get nothing.
     *
     * @throws NotHeldException if the claim was lost (the next trigger runs the job again) or
     *     already ended; nothing marked
     */
    public void done() {
        ended.set(true);
        run(Native::slotDone);
    }

    /**
     * Ends the claim without marking the job done (it failed): the next trigger in this period
     * runs it.
     *
     * @throws NotHeldException if the claim was lost or already ended
     */
    public void release() {
        ended.set(true);
        run(Native::slotRelease);
    }

    /**
     * Marks the period done unless the slot was done or released, and frees it. Idempotent.
     *
     * @throws LockLostException if the claim was lost before (nothing marked: another trigger may
     *     run the job; suppressed in try-with-resources by an exception the block threw)
     */
    @Override
    public void close() {
        if (closed.getAndSet(true)) {
            return;
        }
        String lostWhy = null;
        try {
            if (!ended.get()) {
                try {
                    done();
                } catch (NotHeldException e) {
                    lostWhy = lostReason().orElse("not held");
                } catch (ClosedException e) {
                    // The client closed first: the claim ended with its lease.
                }
            }
        } finally {
            handle.close();
        }
        if (lostWhy != null) {
            throw new LockLostException("the slot " + slot + " of " + name + " was lost before it was closed (" + lostWhy + "): not marked done");
        }
    }

    private void run(java.util.function.LongConsumer call) {
        try {
            handle.run(call);
        } catch (ClosedException e) {
            if (client.isClosed()) {
                throw e;
            }
            throw notHeld();
        }
    }

    private NotHeldException notHeld() {
        return new NotHeldException("the slot " + slot + " of " + name + " was closed");
    }

    @Override
    public String toString() {
        return "OnceSlot{" + name + " #" + slot + ", token=" + fencingToken + "}";
    }
}
