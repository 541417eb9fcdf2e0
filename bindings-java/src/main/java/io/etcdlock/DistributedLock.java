package io.etcdlock;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * A fair (FIFO), fenced lock on etcd, shared by every process that locks the same name — with any
 * etcdlock binding, Go's {@code concurrency.Mutex}, or {@code etcdctl lock}. From
 * {@link EtcdLockClient#lock}; creating it sends nothing. Thread-safe: any number of threads may
 * wait on one instance, each in its own place in the queue.
 *
 * <p>The explicit API hands out a {@link LockGuard} (fencing token, fenced writes, lost
 * callbacks). The {@link Lock} methods keep each thread's guard here, for code written for
 * {@code ReentrantLock}, with these differences: the lock is <b>not reentrant</b> (locking it
 * again from the thread that holds it throws {@link IllegalStateException} instead of
 * deadlocking on its own queue key); it <b>can be lost</b> while held (lease expired, key deleted),
 * which {@link #unlock()} then reports with {@link NotHeldException}; conditions are not supported.
 */
public final class DistributedLock implements Lock {
    private final EtcdLockClient client;
    private final String name;
    private final LockOptions options;
    private final Kind kind;
    /** The guards the {@link Lock} methods took, by thread. */
    private final Map<Thread, LockGuard> held = new ConcurrentHashMap<>();

    /** What an acquire takes (the native layer's kinds, by ordinal). */
    enum Kind {
        MUTEX("lock"), PERMIT("semaphore"), READ("read lock"), WRITE("write lock"), CANDIDATE("election");

        final String what;

        Kind(String what) {
            this.what = what;
        }
    }

    DistributedLock(EtcdLockClient client, String name, LockOptions options) {
        this(client, name, options, Kind.MUTEX);
    }

    /** A lock whose acquires take {@code kind} (a semaphore's carries its permits in {@code options}). */
    DistributedLock(EtcdLockClient client, String name, LockOptions options, Kind kind) {
        this.client = client;
        this.name = name;
        this.options = options;
        this.kind = kind;
    }

    /** @return the lock's name (its queue keys are {@code <name>/...}) */
    public String name() {
        return name;
    }

    /**
     * Waits for the lock, at most {@code timeout}.
     *
     * @param timeout how long to wait; {@link Duration#ZERO} tries once (as {@link #tryAcquire})
     * @return the held lock
     * @throws LockTimeoutException when the timeout passes (the queue key is gone)
     * @throws EtcdLockException kind {@code WOULD_BLOCK} when a zero timeout finds the lock busy
     * @throws InterruptedException when the thread is interrupted while waiting: it has left the
     *     queue (no key left) when this is thrown
     */
    public LockGuard acquire(Duration timeout) throws InterruptedException {
        long ms = millis(timeout);
        notInterrupted();
        return start(ms).await();
    }

    /**
     * Waits for the lock without a time limit.
     *
     * @return the held lock
     * @throws InterruptedException when interrupted while waiting (the queue key is gone)
     */
    public LockGuard acquire() throws InterruptedException {
        notInterrupted();
        return start(-1).await();
    }

    /**
     * Takes the lock only if nobody holds it or waits for it. Leaves nothing behind when it
     * does not.
     *
     * @return the held lock, or empty when it is busy
     */
    public Optional<LockGuard> tryAcquire() {
        NativeCall<LockGuard> call = start(0);
        try {
            return Optional.of(call.awaitUninterruptibly());
        } catch (EtcdLockException e) {
            if ("WOULD_BLOCK".equals(e.kind())) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /**
     * Waits for the lock without blocking a thread. Cancelling the future (or completing it from
     * outside, e.g. {@code orTimeout}) leaves the queue; a lock granted just before the cancel is
     * released. Completed on an etcdlock callback thread.
     *
     * @param timeout how long to wait; {@link Duration#ZERO} tries once
     * @return the held lock, or {@link LockTimeoutException} (etc.) as the exceptional outcome
     */
    public CompletableFuture<LockGuard> acquireAsync(Duration timeout) {
        return new CallFuture<>(start(millis(timeout)), g -> g);
    }

    /** Waits for the lock without a time limit, ignoring interrupts (re-asserted on return). */
    @Override
    public void lock() {
        notHeldByThisThread();
        keep(start(-1).awaitUninterruptibly());
    }

    /** Waits for the lock; an interrupt while waiting leaves the queue and throws. */
    @Override
    public void lockInterruptibly() throws InterruptedException {
        notHeldByThisThread();
        notInterrupted();
        keep(start(-1).await());
    }

    /** Takes the lock only if nobody holds it or waits for it. */
    @Override
    public boolean tryLock() {
        notHeldByThisThread();
        Optional<LockGuard> g = tryAcquire();
        g.ifPresent(this::keep);
        return g.isPresent();
    }

    /** Waits for the lock at most {@code time}; false when it passes (nothing left behind). */
    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        notHeldByThisThread();
        if (time <= 0) {
            return tryLock();
        }
        try {
            keep(acquire(Duration.ofNanos(unit.toNanos(time))));
            return true;
        } catch (LockTimeoutException e) {
            return false;
        }
    }

    /**
     * Releases the lock this thread took with a {@link Lock} method.
     *
     * @throws IllegalMonitorStateException if this thread does not hold it through this object
     * @throws NotHeldException if the lock was lost while held (the guard is dropped anyway)
     */
    @Override
    public void unlock() {
        LockGuard g = held.remove(Thread.currentThread());
        if (g == null) {
            throw new IllegalMonitorStateException("the current thread does not hold lock " + name + " through this object");
        }
        try {
            g.release();
        } finally {
            g.releaseQuietly();
        }
    }

    /**
     * The guard this thread holds through the {@link Lock} methods (for its fencing token and
     * fenced writes).
     *
     * @return the guard, or empty if this thread does not hold the lock through them
     */
    public Optional<LockGuard> heldByCurrentThread() {
        return Optional.ofNullable(held.get(Thread.currentThread()));
    }

    /** Not supported: a distributed lock has no conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("a distributed lock has no conditions");
    }

    @Override
    public String toString() {
        return (kind == Kind.MUTEX ? "DistributedLock{" : "DistributedLock{" + kind.what + " ") + name + ", ttl=" + options.ttlSeconds + "s}";
    }

    /** The same lock with other options (a semaphore's count), checked as its client checks a new one. */
    DistributedLock with(LockOptions o) {
        client.handle().run(c -> Native.lockCheck(c, name, o.ttlSeconds, kind.ordinal(), o.permits, o.count));
        return new DistributedLock(client, name, o, kind);
    }

    LockOptions options() {
        return options;
    }

    NativeCall<LockGuard> start(long timeoutMs) {
        boolean campaign = kind == Kind.CANDIDATE;
        Tracing.Span span = Tracing.begin(campaign ? Tracing.CAMPAIGN : Tracing.ACQUIRE, name);
        return NativeCall.start(g -> {
            LockGuard guard = new LockGuard(new NativeHandle(g, Native::guardFree, "lock guard"), name);
            if (span != null) {
                // Before the result is handed out: a release right after it finds the hold open.
                guard.traceHold(span, campaign ? Tracing.LEAD : Tracing.HOLD);
                Tracing.acquired(span, guard.fencingToken());
            }
            return guard;
        }, LockGuard::releaseQuietly,
                call -> client.handle().with(c -> Native.lockAcquire(c, name, options.ttlSeconds, timeoutMs, options.value, kind.ordinal(), options.permits,
                        options.count, call)),
                "acquire", span);
    }

    /** An interrupted thread joins no queue at all (as Lock.lockInterruptibly specifies). */
    private static void notInterrupted() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for the lock");
        }
    }

    private void keep(LockGuard g) {
        held.put(Thread.currentThread(), g);
    }

    private void notHeldByThisThread() {
        if (held.containsKey(Thread.currentThread())) {
            throw new IllegalStateException("lock " + name + " is already held by this thread: a distributed lock is not reentrant");
        }
    }

    static long millis(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
        }
        try {
            long ms = timeout.toMillis();
            // A sub-millisecond wait is still a wait, not a try-once.
            return ms == 0 && !timeout.isZero() ? 1 : ms;
        } catch (ArithmeticException tooLong) {
            return -1;
        }
    }
}
