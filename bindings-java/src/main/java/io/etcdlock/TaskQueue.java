package io.etcdlock;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A work queue in etcd whose claims live and die with the worker's lease (from
 * {@link EtcdLockClient#queue}; creating it sends nothing). Items are durable until acked. A
 * claim is a key on this client's lease, kept alive while the {@link Task} is held: a worker that
 * dies, freezes past the TTL or is cut off loses its claim when etcd ends its lease, and the item
 * is claimable again. Thread-safe: any number of threads may put and claim through one instance;
 * waiting workers are served in the order they began, and only the first watches for new items.
 *
 * <pre>{@code
 * TaskQueue q = client.queue("jobs/resize", QueueOptions.ttl(Duration.ofSeconds(10)).maxAttempts(5));
 * q.put(bytes("img-17"), PutOptions.defaults().id("img-17"));
 * try (Task task = q.claim(Duration.ofSeconds(5))) {      // acked at the end of the block
 *     task.putIfHeld("results/" + task.id(), resize(task.payload()));
 * }
 * }</pre>
 */
public final class TaskQueue {
    private final NativeHandle handle;
    private final String name;
    /** Keeps the client (closed when collected) alive as long as its queues. */
    private final EtcdLockClient client;

    TaskQueue(NativeHandle handle, String name, EtcdLockClient client) {
        this.handle = handle;
        this.name = name;
        this.client = client;
    }

    /** @return the queue's name (its keys are under {@code <name>/}) */
    public String name() {
        return name;
    }

    /**
     * Adds an item with a random id, priority 0, no delay.
     *
     * @param payload at most 1,564,672 bytes (etcd's default request limit less room for keys)
     * @return its id
     * @throws IllegalArgumentException if the payload is too large (nothing written)
     */
    public String put(byte[] payload) {
        return put(payload, PutOptions.defaults());
    }

    /**
     * Adds an item. With an id, a put of an item that exists (pending, claimed, delayed or dead)
     * changes nothing and returns the id.
     *
     * @param payload at most 1,564,672 bytes
     * @param options its id, priority and delay
     * @return its id
     * @throws IllegalArgumentException for a payload too large, a bad id or a delay beyond etcd's
     *     largest TTL (nothing written)
     */
    public String put(byte[] payload, PutOptions options) {
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(options, "options");
        return handle.with(q -> Native.queuePut(q, payload, options.id, options.priority, options.delayMs));
    }

    /**
     * Claims the oldest available item of the highest priority, waiting at most {@code timeout}.
     *
     * @param timeout how long to wait; {@link Duration#ZERO} tries once (as {@link #tryClaim})
     * @return the claimed task: ack it (or close it), or nack it
     * @throws LockTimeoutException when the timeout passes with no item (nothing left behind)
     * @throws EtcdLockException kind {@code WOULD_BLOCK} when a zero timeout finds none
     * @throws InterruptedException when interrupted while waiting (nothing left behind)
     */
    public Task claim(Duration timeout) throws InterruptedException {
        long ms = DistributedLock.millis(timeout);
        notInterrupted();
        return start(ms).await();
    }

    /**
     * Claims the next item, waiting until one comes.
     *
     * @return the claimed task
     * @throws InterruptedException when interrupted while waiting (nothing left behind)
     */
    public Task claim() throws InterruptedException {
        notInterrupted();
        return start(-1).await();
    }

    /**
     * Claims an item only if one is available now.
     *
     * @return the claimed task, or empty when none is available
     */
    public Optional<Task> tryClaim() {
        try {
            return Optional.of(claim(Duration.ZERO));
        } catch (EtcdLockException e) {
            if ("WOULD_BLOCK".equals(e.kind())) {
                return Optional.empty();
            }
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EtcdLockException("CANCELLED", "interrupted");
        }
    }

    /**
     * Claims the next item without blocking a thread. Cancelling the future (or completing it
     * from outside, e.g. {@code orTimeout}) gives up the wait, leaving nothing behind; a task
     * claimed just before the cancel is given back. Completed on an etcdlock callback thread.
     *
     * @param timeout how long to wait; {@link Duration#ZERO} tries once
     * @return the claimed task, or {@link LockTimeoutException} (etc.) as the exceptional outcome
     */
    public CompletableFuture<Task> claimAsync(Duration timeout) {
        return new CallFuture<>(start(DistributedLock.millis(timeout)), t -> t);
    }

    /**
     * Counts the items by state, at one revision.
     *
     * @return pending (by priority), delayed, claimed and dead items
     */
    public QueueStats stats() {
        return QueueStats.of(handle.with(Native::queueStats));
    }

    /**
     * The dead letters: items past their last delivery.
     *
     * @return them, in id order
     */
    public List<DeadTask> dead() {
        return List.copyOf(Arrays.asList(handle.with(Native::queueDead)));
    }

    /**
     * Puts a dead item back at the end of its priority, its attempts at 0.
     *
     * @param id the dead item's id
     * @return false if no dead item has that id
     */
    public boolean requeueDead(String id) {
        Objects.requireNonNull(id, "id");
        return handle.with(q -> Native.queueRequeueDead(q, id));
    }

    /**
     * Deletes a dead item.
     *
     * @param id the dead item's id
     * @return false if no dead item has that id
     */
    public boolean deleteDead(String id) {
        Objects.requireNonNull(id, "id");
        return handle.with(q -> Native.queueDeleteDead(q, id));
    }

    /** Starts a claim; bad arguments and a closed client throw here, with nothing sent. */
    private NativeCall<Task> start(long timeoutMs) {
        Tracing.Span span = Tracing.begin(Tracing.TASK_CLAIM, name);
        return NativeCall.start(t -> {
            Task task = new Task(new NativeHandle(t, Native::taskFree, "task"), this);
            if (span != null) {
                span.attr("etcdlock.task_id", task.id());
                Tracing.acquired(span, task.fencingToken());
            }
            return task;
        }, Task::giveBackQuietly, call -> handle.with(q -> Native.queueClaim(q, timeoutMs, call)), "claim", span);
    }

    EtcdLockClient client() {
        return client;
    }

    private static void notInterrupted() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for a task");
        }
    }

    @Override
    public String toString() {
        return "TaskQueue{" + name + "}";
    }
}
