package io.etcdlock;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A pool of named slots in etcd (from {@link EtcdLockClient#pool} or
 * {@link EtcdLockClient#joinPool}; creating it sends nothing): an acquire gets slot ids that nobody
 * else holds (a worker id, a GPU, a test cluster), with a fencing token per slot, for as long as
 * this client's lease lives. Requests are served in the order etcd committed them; a request for
 * several slots waits at the head until that many are free and later ones wait behind it (no
 * starvation). A slot whose holder died is not handed out again before the pool's reuse delay; a
 * released one is free at once. The first acquire stores the definition; a participant that gives
 * other slots or another reuse delay gets {@link IllegalArgumentException} (the message says how
 * to change them). Thread-safe.
 *
 * <pre>{@code
 * Pool gpus = client.pool("gpus", PoolOptions.slots("gpu0", "gpu1", "gpu2").reuseDelay(Duration.ofSeconds(5)));
 * try (PoolHolding held = gpus.acquire(1, Duration.ofSeconds(5))) {   // released at the end of the block
 *     String gpu = held.slots().get(0);
 *     held.putIfHeld("jobs/7/device", gpu.getBytes(UTF_8));            // only while the slot is held
 * }
 * }</pre>
 */
public final class Pool {
    private final NativeHandle handle;
    private final String name;
    /** Keeps the client (closed when collected) alive as long as its pools. */
    private final EtcdLockClient client;

    Pool(NativeHandle handle, String name, EtcdLockClient client) {
        this.handle = handle;
        this.name = name;
        this.client = client;
    }

    /** @return the pool's name (its keys are under {@code <name>/}) */
    public String name() {
        return name;
    }

    /**
     * Takes {@code count} slots, waiting at most {@code timeout}.
     *
     * @param count 1 to the pool's size (at most 30)
     * @param timeout how long to wait; {@link Duration#ZERO} tries once (as {@link #tryAcquire})
     * @return the holding: close it (or release it) to give the slots back
     * @throws LockTimeoutException when the timeout passes (nothing left behind)
     * @throws EtcdLockException kind {@code WOULD_BLOCK} when a zero timeout finds too few free
     * @throws IllegalArgumentException for a count out of bounds, or a definition other than the
     *     pool's
     * @throws InterruptedException when interrupted while waiting (nothing left behind)
     */
    public PoolHolding acquire(int count, Duration timeout) throws InterruptedException {
        return acquire(count, null, timeout);
    }

    /**
     * Takes {@code count} slots for {@code owner}, waiting at most {@code timeout}: while this client
     * holds slots acquired from this pool with the same owner, returns that holding again (a new
     * handle on it: the same slots and tokens) instead of taking more, so a retried call gets what
     * it already has.
     *
     * @param count 1 to the pool's size (at most 30)
     * @param owner who takes them (at most 4096 bytes; stored in the slot keys); null for none
     * @param timeout how long to wait; {@link Duration#ZERO} tries once
     * @return the holding
     * @throws LockTimeoutException when the timeout passes (nothing left behind)
     * @throws InterruptedException when interrupted while waiting (nothing left behind)
     */
    public PoolHolding acquire(int count, String owner, Duration timeout) throws InterruptedException {
        long ms = DistributedLock.millis(timeout);
        notInterrupted();
        return start(count, owner, ms).await();
    }

    /**
     * Takes {@code count} slots, waiting without a time limit.
     *
     * @param count 1 to the pool's size (at most 30)
     * @return the holding
     * @throws InterruptedException when interrupted while waiting (nothing left behind)
     */
    public PoolHolding acquire(int count) throws InterruptedException {
        notInterrupted();
        return start(count, null, -1).await();
    }

    /**
     * Takes {@code count} slots only if that many are free and nobody waits.
     *
     * @param count 1 to the pool's size (at most 30)
     * @return the holding, or empty
     */
    public Optional<PoolHolding> tryAcquire(int count) {
        try {
            return Optional.of(start(count, null, 0).awaitUninterruptibly());
        } catch (EtcdLockException e) {
            if ("WOULD_BLOCK".equals(e.kind())) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /**
     * Takes {@code count} slots without blocking a thread. Cancelling the future (or completing it
     * from outside, e.g. {@code orTimeout}) gives up the wait, leaving nothing behind; slots taken
     * just before the cancel are given back. Completed on an etcdlock callback thread.
     *
     * @param count 1 to the pool's size (at most 30)
     * @param timeout how long to wait; {@link Duration#ZERO} tries once
     * @return the holding, or {@link LockTimeoutException} (etc.) as the exceptional outcome
     */
    public CompletableFuture<PoolHolding> acquireAsync(int count, Duration timeout) {
        return acquireAsync(count, null, timeout);
    }

    /**
     * {@link #acquireAsync(int, Duration)} for {@code owner} (see {@link #acquire(int, String, Duration)}).
     *
     * @param count 1 to the pool's size (at most 30)
     * @param owner who takes them; null for none
     * @param timeout how long to wait; {@link Duration#ZERO} tries once
     * @return the holding, or the failure as the exceptional outcome
     */
    public CompletableFuture<PoolHolding> acquireAsync(int count, String owner, Duration timeout) {
        return new CallFuture<>(start(count, owner, DistributedLock.millis(timeout)), h -> h);
    }

    /**
     * Adds slots (ids not in the pool yet) to its stored definition; a request waiting meanwhile
     * sees them at once.
     *
     * @param ids the new slot ids
     * @return the pool's slots after
     * @throws IllegalArgumentException for an id already in the pool, a bad id, or a pool nobody
     *     defined yet (acquire once first); nothing changed
     */
    public List<String> addSlots(String... ids) {
        return change(Arrays.asList(Objects.requireNonNull(ids, "ids")), true);
    }

    /**
     * Adds slots, as {@link #addSlots(String...)}.
     *
     * @param ids the new slot ids
     * @return the pool's slots after
     */
    public List<String> addSlots(Collection<String> ids) {
        return change(ids, true);
    }

    /**
     * Removes slots from the pool's stored definition. A held slot goes when its holder releases
     * it, and is not handed out meanwhile.
     *
     * @param ids the slot ids to remove
     * @return the pool's slots after
     * @throws IllegalArgumentException for an id not in the pool, or the last slot; nothing changed
     */
    public List<String> removeSlots(String... ids) {
        return change(Arrays.asList(Objects.requireNonNull(ids, "ids")), false);
    }

    /**
     * Removes slots, as {@link #removeSlots(String...)}.
     *
     * @param ids the slot ids to remove
     * @return the pool's slots after
     */
    public List<String> removeSlots(Collection<String> ids) {
        return change(ids, false);
    }

    /**
     * The pool's slots as etcd has them, read at one revision: each free, held (by whom, with
     * which token), resting (for how long) or dead.
     *
     * @return them in the pool's order; empty if the pool is not defined yet
     */
    public List<SlotInfo> slots() {
        return client.inspectPool(name).orElse(List.of());
    }

    private List<String> change(Collection<String> ids, boolean add) {
        Objects.requireNonNull(ids, "ids");
        String[] list = ids.toArray(new String[0]);
        for (String id : list) {
            Objects.requireNonNull(id, "a slot id");
        }
        return List.of(handle.with(p -> Native.poolChange(p, list, add)));
    }

    /** Starts an acquire; bad arguments and a closed client throw here, with nothing sent. */
    private NativeCall<PoolHolding> start(int count, String owner, long timeoutMs) {
        Tracing.Span span = Tracing.begin(Tracing.ACQUIRE, name);
        return NativeCall.start(h -> {
            PoolHolding held = new PoolHolding(new NativeHandle(h, Native::poolHeldFree, "pool holding"), this);
            if (span != null) {
                // Before the result is handed out: a release right after it finds the hold open.
                held.traceHold(span);
                span.attr("etcdlock.slots", String.join(",", held.slots()));
                Tracing.acquired(span, held.fencingToken());
            }
            return held;
        }, PoolHolding::releaseQuietly, call -> handle.with(p -> Native.poolAcquire(p, count, owner, timeoutMs, call)), "acquire", span);
    }

    EtcdLockClient client() {
        return client;
    }

    private static void notInterrupted() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for slots");
        }
    }

    @Override
    public String toString() {
        return "Pool{" + name + "}";
    }
}
