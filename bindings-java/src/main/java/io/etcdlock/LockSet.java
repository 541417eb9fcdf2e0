package io.etcdlock;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Several lock names taken together, all or none, with one fencing token (from
 * {@link EtcdLockClient#lockSet}; creating it sends nothing). One etcd transaction puts a key in
 * every member's queue, so the keys share one create revision: the set's token. Each key then
 * waits only for older keys, by its own queue's rule, so sets listing the same names in any
 * order never deadlock (also beside {@code etcdctl lock} and lone locks of those names), and a
 * set never holds a name alone. Any number of threads may acquire one set, each getting its own
 * {@link LockSetHolding}. Thread-safe.
 *
 * <pre>{@code
 * LockSet accounts = client.lockSet(SetMember.names("acct/1", "acct/2"), LockOptions.ttl(Duration.ofSeconds(10)));
 * try (LockSetHolding locks = accounts.acquire(Duration.ofSeconds(5))) {   // both, or LockTimeoutException
 *     locks.putIfHeld("ledger/acct-1", "95".getBytes(UTF_8));              // fenced by both names
 * }                                                                         // released here, in one Txn
 * }</pre>
 */
public final class LockSet {
    private final NativeHandle handle;
    private final List<SetMember> members;
    private final LockOptions options;
    /** Keeps the client (closed when collected) alive as long as its sets. */
    private final EtcdLockClient client;

    LockSet(NativeHandle handle, List<SetMember> members, LockOptions options, EtcdLockClient client) {
        this.handle = handle;
        this.members = members;
        this.options = options;
        this.client = client;
    }

    /** @return the members, in the order given */
    public List<SetMember> members() {
        return members;
    }

    /**
     * Takes every member, waiting at most {@code timeout} for the whole set.
     *
     * @param timeout how long to wait; {@link Duration#ZERO} tries once (as {@link #tryAcquire})
     * @return the holding: close it (or release it) to release every member
     * @throws LockTimeoutException when the timeout passes (no key left in any queue)
     * @throws EtcdLockException kind {@code WOULD_BLOCK} when a zero timeout finds a member busy
     * @throws InterruptedException when interrupted while waiting (no key left in any queue)
     */
    public LockSetHolding acquire(Duration timeout) throws InterruptedException {
        long ms = DistributedLock.millis(timeout);
        notInterrupted();
        return start(ms).await();
    }

    /**
     * Takes every member, waiting without a time limit.
     *
     * @return the holding
     * @throws InterruptedException when interrupted while waiting (no key left in any queue)
     */
    public LockSetHolding acquire() throws InterruptedException {
        notInterrupted();
        return start(-1).await();
    }

    /**
     * Takes the set only if every member can be held at once. Leaves no key behind when it does
     * not.
     *
     * @return the holding, or empty when a member is busy
     */
    public Optional<LockSetHolding> tryAcquire() {
        try {
            return Optional.of(start(0).awaitUninterruptibly());
        } catch (EtcdLockException e) {
            if ("WOULD_BLOCK".equals(e.kind())) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /**
     * Takes every member without blocking a thread. Cancelling the future (or completing it from
     * outside, e.g. {@code orTimeout}) gives up the wait, leaving no key; a set taken just before
     * the cancel is released. Completed on an etcdlock callback thread.
     *
     * @param timeout how long to wait; {@link Duration#ZERO} tries once
     * @return the holding, or {@link LockTimeoutException} (etc.) as the exceptional outcome
     */
    public CompletableFuture<LockSetHolding> acquireAsync(Duration timeout) {
        return new CallFuture<>(start(DistributedLock.millis(timeout)), h -> h);
    }

    /** Starts an acquire; bad arguments and a closed client throw here, with nothing sent. */
    private NativeCall<LockSetHolding> start(long timeoutMs) {
        Tracing.Span span = Tracing.begin(Tracing.ACQUIRE, spanName());
        return NativeCall.start(h -> {
            LockSetHolding held = new LockSetHolding(new NativeHandle(h, Native::lockSetHeldFree, "lock set holding"), this);
            if (span != null) {
                // Before the result is handed out: a release right after it finds the hold open.
                held.traceHold(span);
                Tracing.acquired(span, held.fencingToken());
            }
            return held;
        }, LockSetHolding::releaseQuietly, call -> handle.with(s -> Native.lockSetAcquire(s, timeoutMs, options.value, call)), "acquire", span);
    }

    /** The name of the set's spans: its members' names, comma-joined. */
    String spanName() {
        StringBuilder b = new StringBuilder();
        for (SetMember m : members) {
            b.append(b.length() == 0 ? "" : ",").append(m.name());
        }
        return b.toString();
    }

    EtcdLockClient client() {
        return client;
    }

    private static void notInterrupted() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for the lock set");
        }
    }

    @Override
    public String toString() {
        return "LockSet{" + members + ", ttl=" + options.ttlSeconds + "s}";
    }
}
