package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A claimed item of a {@link TaskQueue}. Its claim lives on the worker's lease, kept alive while
 * the task is held; {@link #ack()} ends it by deleting the item, {@link #nack()} by giving it back.
 * {@link #close()} acks unless it was acked or nacked, so {@code try (Task t = q.claim(d)) { ... }}
 * acks at the end of the block: to give the item back when the work fails, nack it in the block
 * (close then only frees it). A task nobody closed is given back when it is garbage collected.
 *
 * <p>Like a lock, a claim can be lost (the lease ended: the item may be someone else's now).
 * {@link #putIfHeld}, {@link #deleteIfHeld}, {@link #ack()} and {@link #nack()} are checked by etcd
 * in the same transaction: after a loss they throw {@link NotHeldException} and change nothing.
 * Thread-safe.
 */
public final class Task implements AutoCloseable {
    private final NativeHandle handle;
    /** Keeps the queue, and so its client, alive as long as the task. */
    private final TaskQueue queue;
    private final String id;
    private final byte[] payload;
    private final int priority;
    private final int attempts;
    private final long fencingToken;
    /** The claim's view when it was made: its lock's name and lease, for {@link #health} once closed. */
    private final Health claimed;
    private final LostSink lost = new LostSink();
    private final AtomicBoolean ended = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    Task(NativeHandle handle, TaskQueue queue) {
        this.handle = handle;
        this.queue = queue;
        this.id = handle.with(Native::taskId);
        this.payload = handle.with(Native::taskPayload);
        this.priority = handle.with(Native::taskPriority);
        this.attempts = handle.with(Native::taskAttempts);
        this.fencingToken = handle.with(Native::taskFencingToken);
        this.claimed = handle.with(Native::taskHealth);
    }

    /** @return the item's id */
    public String id() {
        return id;
    }

    /** @return the item's payload (a copy) */
    public byte[] payload() {
        return payload.clone();
    }

    /** @return the item's priority */
    public int priority() {
        return priority;
    }

    /** @return the item's deliveries so far, this one included (1 the first time) */
    public int attempts() {
        return attempts;
    }

    /** @return the claim's fencing token (its key's create revision): larger for every later claim of any item */
    public long fencingToken() {
        return fencingToken;
    }

    /**
     * This claim's {@link Fence}, as {@link LockGuard#fence()} is a lock's: a fence on the claim's
     * lock ({@code <queue>/claim/<item's slot>}) at {@link #fencingToken()}, for a database or
     * another service to refuse a stale delivery's write ({@code io.etcdlock.fencing.JdbcFence},
     * {@link EtcdLockClient#checkFence}). Every later claim of the item has a larger token, so
     * once the item was given back and claimed again, this claim's late writes are refused. Reads
     * the etcd cluster's ID on a client's first fence.
     *
     * @return the fence
     * @throws NotHeldException if the claim was acked, nacked or lost, or the task closed
     */
    public Fence fence() {
        try {
            return Fence.parse(handle.with(Native::taskFence));
        } catch (ClosedException e) {
            if (queue.client().isClosed()) {
                throw e;
            }
            throw notHeld();
        }
    }

    /** @return the queue it was claimed from */
    public TaskQueue queue() {
        return queue;
    }

    /**
     * A cheap local check: neither acked, nacked nor lost. For writes that must be safe, use
     * {@link #putIfHeld}, checked by etcd.
     *
     * @return whether the claim is still held as far as this process knows
     */
    public boolean isHeld() {
        try {
            return handle.with(Native::taskIsHeld);
        } catch (ClosedException e) {
            return false;
        }
    }

    /** @return why the claim was lost ({@code expired}, {@code revoked}, {@code key_deleted}, {@code closed}), if it was */
    public Optional<String> lostReason() {
        try {
            return Optional.ofNullable(handle.with(Native::taskLostReason));
        } catch (ClosedException e) {
            return Optional.empty();
        }
    }

    /**
     * One call's view of the claim ({@code ok()} while held and not in doubt; the name is its lock's, {@code <queue>/claim/<slot>}):
     * what a readiness probe answers. Local reads only. Once closed (its native handle freed) it reads released.
     *
     * @return the view, taken now
     */
    public Health health() {
        try {
            return handle.with(Native::taskHealth);
        } catch (ClosedException e) {
            return Health.released(claimed.name(), fencingToken, claimed.leaseId());
        }
    }

    /**
     * Calls {@code callback} with the reason once the claim is lost, not when the task is acked or
     * nacked; on an etcdlock callback thread, at once if it is lost already.
     *
     * @param callback called once with the reason
     * @throws NotHeldException if the task was acked or nacked
     */
    public void onLost(Consumer<String> callback) {
        try {
            lost.add(callback, () -> handle.run(t -> Native.taskOnLost(t, lost)));
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /**
     * Writes {@code value} at {@code key} only while the claim holds: etcd checks it in the same
     * transaction as the write.
     *
     * @param key the key (not under the queue's own {@code <name>/} prefix)
     * @param value the value
     * @return the revision of the write
     * @throws NotHeldException if the claim was lost, or the task acked or nacked; nothing is written
     */
    public long putIfHeld(String key, byte[] value) {
        byte[] k = key(key);
        Objects.requireNonNull(value, "value");
        return withHandle(t -> Native.taskPut(t, k, value));
    }

    /**
     * Deletes {@code key} only while the claim holds.
     *
     * @param key the key (not under the queue's own {@code <name>/} prefix)
     * @return the revision of the delete
     * @throws NotHeldException if the claim was lost, or the task acked or nacked; nothing is deleted
     */
    public long deleteIfHeld(String key) {
        byte[] k = key(key);
        return withHandle(t -> Native.taskDelete(t, k));
    }

    /**
     * Acks: deletes the item and its claim in one transaction that applies only while the claim
     * holds.
     *
     * @return the revision of the ack
     * @throws NotHeldException if the claim was lost (the item is claimable again) or the task was
     *     already acked or nacked; nothing changed
     */
    public long ack() {
        return ack(Map.of(), List.of());
    }

    /**
     * Acks with writes of your own in the same transaction: the result is stored and the item
     * acked together, only while the claim holds, or neither.
     *
     * @param puts keys (not under the queue's own {@code <name>/} prefix) and their values
     * @param deletes keys to delete
     * @return the revision of the ack
     * @throws NotHeldException if the claim was lost or the task already ended; nothing is written
     * @throws IllegalArgumentException for an empty key or one under the queue's prefix
     */
    public long ack(Map<String, byte[]> puts, Collection<String> deletes) {
        Objects.requireNonNull(puts, "puts");
        Objects.requireNonNull(deletes, "deletes");
        byte[][] keys = new byte[puts.size()][];
        byte[][] values = new byte[puts.size()][];
        int i = 0;
        for (Map.Entry<String, byte[]> e : puts.entrySet()) {
            keys[i] = key(e.getKey());
            values[i++] = Objects.requireNonNull(e.getValue(), "a put's value");
        }
        byte[][] dels = deletes.stream().map(Task::key).toArray(byte[][]::new);
        ended.set(true);
        Tracing.Span span = Tracing.begin(Tracing.TASK_ACK, queue.name());
        if (span == null) {
            return withHandle(t -> Native.taskAck(t, keys, values, dels));
        }
        span.attr("etcdlock.task_id", id()).attr("etcdlock.fencing_token", fencingToken());
        try {
            long rev = withHandle(t -> Native.taskAck(t, keys, values, dels));
            Tracing.ok(span, "acked");
            return rev;
        } catch (RuntimeException e) {
            Tracing.failed(span, e, false);
            throw e;
        }
    }

    /**
     * Gives the item back, claimable at once (or, after its last delivery, to the dead letters).
     *
     * @throws NotHeldException if the claim was lost, or the task already acked or nacked
     */
    public void nack() {
        nack(Duration.ZERO);
    }

    /**
     * Gives the item back, not claimable before {@code delay} (timed by an etcd lease: whole
     * seconds, rounded up); after its last delivery it goes to the dead letters instead.
     *
     * @param delay how long before it can be claimed again; {@link Duration#ZERO} for at once
     * @throws NotHeldException if the claim was lost, or the task already acked or nacked
     * @throws IllegalArgumentException for a negative delay or one beyond etcd's largest TTL
     */
    public void nack(Duration delay) {
        long ms = Durations.millis(delay, "delay");
        ended.set(true);
        withHandle(t -> {
            Native.taskNack(t, ms);
            return 0L;
        });
    }

    /**
     * Acks the task unless it was acked or nacked, and frees it. Idempotent.
     *
     * @throws LockLostException if the claim was lost before (the item was not acked and will be
     *     delivered again; inside try-with-resources this is suppressed by an exception the block threw)
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
                    ack();
                } catch (NotHeldException e) {
                    lostWhy = lostReason().orElse("not held");
                } catch (ClosedException e) {
                    // The client closed first: its claims ended with its leases.
                }
            }
        } finally {
            handle.close();
        }
        if (lostWhy != null) {
            throw new LockLostException("the claim of task " + id + " was lost before it was closed (" + lostWhy + "): it was not acked");
        }
    }

    /** Gives it back without reporting, and frees it (a task nobody will work on). */
    void giveBackQuietly() {
        try {
            if (!ended.getAndSet(true)) {
                withHandle(t -> {
                    Native.taskNack(t, 0);
                    return 0L;
                });
            }
        } catch (RuntimeException e) {
            // Lost meanwhile: it is claimable again anyway.
        } finally {
            closed.set(true);
            handle.close();
        }
    }

    private long withHandle(NativeHandle.Call<Long> call) {
        try {
            return handle.with(call);
        } catch (ClosedException e) {
            if (queue.client().isClosed()) {
                throw e;
            }
            throw notHeld();
        }
    }

    private NotHeldException notHeld() {
        return new NotHeldException("the task " + id + " was closed");
    }

    private static byte[] key(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("a key must not be empty");
        }
        return key.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "Task{" + id + ", attempts=" + attempts + ", token=" + fencingToken + "}";
    }
}
