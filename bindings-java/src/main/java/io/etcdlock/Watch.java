package io.etcdlock;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A watch of one key or of every key under a prefix ({@link EtcdLockClient#watch},
 * {@link EtcdLockClient#watchPrefix}): every change in revision order, resumed across
 * disconnects and member changes without a gap or a duplicate (the core does that). Read it
 * either as a blocking {@link Iterator} or as a {@link Flow.Publisher}, not both.
 *
 * <pre>{@code
 * try (Watch watch = client.watchPrefix("jobs/")) {
 *     while (watch.hasNext()) {               // blocks; false once closed
 *         WatchEvent e = watch.next();
 *         System.out.println(e.type() + " " + e.key() + " @" + e.revision());
 *     }
 * }
 * }</pre>
 *
 * <p>The watch ends when {@link #close()}d (from any thread: a reader blocked in
 * {@link #hasNext()} returns false), and with an exception when it cannot go on: a
 * {@link CompactedException} when the history it needs was compacted (its
 * {@link CompactedException#compactRevision()} says where history starts now), a
 * {@link ClosedException} when the client is closed. The exception is thrown once; the watch has
 * ended after it. Close it in any case: it holds a watch on the server until closed (or garbage
 * collected).
 */
public final class Watch implements Iterator<WatchEvent>, Flow.Publisher<WatchEvent>, AutoCloseable {
    private final NativeHandle handle;
    private final String description;
    /** One reader at a time; {@link #close()} never takes it (a reader may be blocked). */
    private final ReentrantLock reading = new ReentrantLock();
    /** Events received (a batch per native call) and not yet handed out. Guarded by reading. */
    private final ArrayDeque<WatchEvent> buffer = new ArrayDeque<>();
    /** Guarded by reading. */
    private boolean ended;
    private final AtomicBoolean subscribed = new AtomicBoolean();

    Watch(NativeHandle handle, String description) {
        this.handle = handle;
        this.description = description;
    }

    /**
     * Waits for the next event.
     *
     * @return true when an event is there for {@link #next()}; false once the watch has ended
     *     (closed)
     * @throws CompactedException if the history the watch needs was compacted (once)
     * @throws ClosedException if the client was closed (once)
     */
    @Override
    public boolean hasNext() {
        reading.lock();
        try {
            return fill(-1);
        } finally {
            reading.unlock();
        }
    }

    /**
     * Waits for the next event and takes it.
     *
     * @return the next change
     * @throws NoSuchElementException once the watch has ended
     * @throws CompactedException if the history the watch needs was compacted (once)
     * @throws ClosedException if the client was closed (once)
     */
    @Override
    public WatchEvent next() {
        reading.lock();
        try {
            if (!fill(-1)) {
                throw new NoSuchElementException("the watch has ended");
            }
            return buffer.poll();
        } finally {
            reading.unlock();
        }
    }

    /**
     * Waits at most {@code timeout} for the next event.
     *
     * @param timeout how long to wait; zero takes only an event already received
     * @return the next change, or empty if none came in time
     * @throws NoSuchElementException once the watch has ended
     * @throws CompactedException if the history the watch needs was compacted (once)
     * @throws ClosedException if the client was closed (once)
     */
    public Optional<WatchEvent> next(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
        }
        long ms = timeout.toMillis();
        reading.lock();
        try {
            if (fill(ms)) {
                return Optional.of(buffer.poll());
            }
            if (ended) {
                throw new NoSuchElementException("the watch has ended");
            }
            return Optional.empty();
        } finally {
            reading.unlock();
        }
    }

    /** The next event, or null once ended (the publisher's read). */
    WatchEvent take() {
        reading.lock();
        try {
            return fill(-1) ? buffer.poll() : null;
        } finally {
            reading.unlock();
        }
    }

    /** Reads from the core until an event is buffered (true), the timeout passed or the watch ended. */
    private boolean fill(long timeoutMs) {
        while (buffer.isEmpty() && !ended) {
            WatchEvent[] batch;
            try {
                batch = handle.with(w -> Native.watchNext(w, timeoutMs));
            } catch (RuntimeException e) {
                ended = true;
                if (handle.isClosed()) {
                    return false; // closed by close(): an end, not a failure
                }
                throw e;
            }
            if (batch == null) {
                ended = true;
            } else if (batch.length == 0) {
                return false;
            } else {
                buffer.addAll(Arrays.asList(batch));
            }
        }
        return !buffer.isEmpty();
    }

    /**
     * Delivers the events to {@code subscriber} on an {@code etcdlock-callback-N} thread, never
     * more than it requested: the rest wait, in this watch's buffer and the core's (a reader
     * that falls far behind is cut off by etcd and resumed by the core, nothing lost). {@code cancel()} closes the watch; the end of the
     * watch ({@link #close()}) is {@code onComplete}; a failure (compaction, closed client) is
     * {@code onError}. A watch has one subscriber: a second one gets {@code onError}
     * ({@link IllegalStateException}).
     *
     * @param subscriber the subscriber
     */
    @Override
    public void subscribe(Flow.Subscriber<? super WatchEvent> subscriber) {
        Objects.requireNonNull(subscriber, "subscriber");
        if (!subscribed.compareAndSet(false, true)) {
            subscriber.onSubscribe(WatchSubscription.NONE);
            subscriber.onError(new IllegalStateException("a Watch has one subscriber"));
            return;
        }
        Callbacks.EXECUTOR.execute(new WatchSubscription(this, subscriber));
    }

    /** @return whether {@link #close()} was called */
    public boolean isClosed() {
        return handle.isClosed();
    }

    /**
     * Ends the watch and cancels it on the server: a reader blocked in {@link #hasNext()} gets
     * false, a subscriber {@code onComplete}. Idempotent.
     */
    @Override
    public void close() {
        if (handle.isClosed()) {
            return;
        }
        try {
            // First, under the read lock: wakes a blocked reader, so that the free below
            // (which waits for calls in progress) does not wait for the next event.
            handle.run(Native::watchClose);
        } catch (ClosedException alreadyClosed) {
            return;
        } finally {
            handle.close();
        }
    }

    /** @return e.g. {@code Watch{prefix jobs/}} */
    @Override
    public String toString() {
        return "Watch{" + description + (isClosed() ? ", closed" : "") + "}";
    }
}
