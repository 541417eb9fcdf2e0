package io.etcdlock;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What a {@link Watch}, an {@link ElectionObserver} and a {@link Discovery} share: items read from
 * a native stream, handed out by a blocking {@link Iterator} or a {@link Flow.Publisher} (one or
 * the other), ended by {@link #close()} from any thread. The subclasses say how to read a batch
 * and how to wake a blocked read.
 *
 * @param <T> the items
 */
abstract class NativeStream<T> implements Iterator<T>, Flow.Publisher<T>, AutoCloseable {
    final NativeHandle handle;
    private final String description;
    /** One reader at a time; {@link #close()} never takes it (a reader may be blocked). */
    private final ReentrantLock reading = new ReentrantLock();
    /** Items received (a batch per native call) and not yet handed out. Guarded by reading. */
    private final ArrayDeque<T> buffer = new ArrayDeque<>();
    /** Guarded by reading. */
    private boolean ended;
    private final AtomicBoolean subscribed = new AtomicBoolean();
    /** The one subscription, woken by {@link #close()}. */
    private volatile StreamSubscription<T> subscription;

    NativeStream(NativeHandle handle, String description) {
        this.handle = handle;
        this.description = description;
    }

    /**
     * One native read: at least one item, an empty list when {@code timeoutMs} (-1: none)
     * passed first, null once the stream ended. Throws the core's failure.
     */
    abstract List<T> read(long ptr, long timeoutMs);

    /** Ends the native stream: a read in progress returns "ended" at once. */
    abstract void end(long ptr);

    /**
     * Waits for the next item.
     *
     * @return true when an item is there for {@link #next()}; false once ended (closed)
     * @throws ClosedException if the client was closed (once; the stream has ended then)
     * @throws CompactedException (a {@link Watch}) if the history it needs was compacted (once)
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
     * Waits for the next item and takes it.
     *
     * @return the next item
     * @throws NoSuchElementException once ended
     * @throws ClosedException if the client was closed (once; the stream has ended then)
     * @throws CompactedException (a {@link Watch}) if the history it needs was compacted (once)
     */
    @Override
    public T next() {
        reading.lock();
        try {
            if (!fill(-1)) {
                throw new NoSuchElementException(this + " has ended");
            }
            return buffer.poll();
        } finally {
            reading.unlock();
        }
    }

    /**
     * Waits at most {@code timeout} for the next item.
     *
     * @param timeout how long to wait; zero takes only an item already received
     * @return the next item, or empty if none came in time
     * @throws NoSuchElementException once ended
     * @throws ClosedException if the client was closed (once; the stream has ended then)
     * @throws CompactedException (a {@link Watch}) if the history it needs was compacted (once)
     */
    public Optional<T> next(Duration timeout) {
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
                throw new NoSuchElementException(this + " has ended");
            }
            return Optional.empty();
        } finally {
            reading.unlock();
        }
    }

    /** The next item, or null once ended (the publisher's read). */
    T take() {
        reading.lock();
        try {
            return fill(-1) ? buffer.poll() : null;
        } finally {
            reading.unlock();
        }
    }

    /** Reads until an item is buffered (true), the timeout passed or the stream ended. */
    private boolean fill(long timeoutMs) {
        while (buffer.isEmpty() && !ended) {
            List<T> batch;
            try {
                batch = handle.with(p -> read(p, timeoutMs));
            } catch (RuntimeException e) {
                ended = true;
                if (handle.isClosed()) {
                    return false; // closed by close(): an end, not a failure
                }
                throw e;
            }
            if (batch == null) {
                ended = true;
            } else if (batch.isEmpty()) {
                return false;
            } else {
                buffer.addAll(batch);
            }
        }
        return !buffer.isEmpty();
    }

    /**
     * Delivers the items to {@code subscriber} on an {@code etcdlock-callback-N} thread, never
     * more than it requested: the rest wait, here and in the core. {@code cancel()} closes the
     * stream; its end ({@link #close()}) is {@code onComplete}; a failure (a closed client, a
     * compaction for a watch) is {@code onError}. One subscriber: a second one gets
     * {@code onError} ({@link IllegalStateException}).
     *
     * @param subscriber the subscriber
     */
    @Override
    public void subscribe(Flow.Subscriber<? super T> subscriber) {
        Objects.requireNonNull(subscriber, "subscriber");
        if (!subscribed.compareAndSet(false, true)) {
            subscriber.onSubscribe(StreamSubscription.NONE);
            subscriber.onError(new IllegalStateException(this + " has one subscriber"));
            return;
        }
        StreamSubscription<T> s = new StreamSubscription<>(this, subscriber);
        subscription = s;
        Callbacks.EXECUTOR.execute(s);
    }

    /** @return whether {@link #close()} was called */
    public boolean isClosed() {
        return handle.isClosed();
    }

    /**
     * Ends the stream (and what it holds on the server): a reader blocked in {@link #hasNext()}
     * gets false, a subscriber {@code onComplete}. Idempotent.
     */
    @Override
    public void close() {
        if (handle.isClosed()) {
            return;
        }
        try {
            // First, under the read lock: wakes a blocked reader, so that the free below
            // (which waits for calls in progress) does not wait for the next item.
            handle.run(this::end);
        } catch (ClosedException alreadyClosed) {
            return;
        } finally {
            handle.close();
            StreamSubscription<T> s = subscription;
            if (s != null) {
                s.wake();
            }
        }
    }

    /** @return e.g. {@code Watch{prefix jobs/}} */
    @Override
    public String toString() {
        return getClass().getSimpleName() + "{" + description + (isClosed() ? ", closed" : "") + "}";
    }
}
