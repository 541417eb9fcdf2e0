package io.etcdlock;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongConsumer;

/**
 * One native pointer, freed exactly once: by {@link #close()}, or by the {@link Cleaner} when
 * nobody closed it. Calls run under the read lock, so any number run at once and none can see
 * the pointer freed under it; {@code close} takes the write lock. After close, calls fail with
 * {@link ClosedException}.
 */
final class NativeHandle {
    static final Cleaner CLEANER = Cleaner.create(r -> {
        Thread t = new Thread(r, "etcdlock-cleaner");
        t.setDaemon(true);
        return t;
    });

    /** What the Cleaner runs: must not refer to the NativeHandle (it would never be phantom reachable). */
    private static final class Free implements Runnable {
        private long ptr;
        private final LongConsumer free;

        Free(long ptr, LongConsumer free) {
            this.ptr = ptr;
            this.free = free;
        }

        @Override
        public synchronized void run() {
            long p = ptr;
            ptr = 0;
            if (p != 0) {
                free.accept(p);
            }
        }
    }

    interface Call<T> {
        T apply(long ptr);
    }

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final Free state;
    private final Cleaner.Cleanable cleanable;
    private final String what;
    private volatile boolean closed;

    NativeHandle(long ptr, LongConsumer free, String what) {
        this.state = new Free(ptr, free);
        this.cleanable = CLEANER.register(this, state);
        this.what = what;
    }

    /** Runs {@code call} with the live pointer; ClosedException once closed. */
    <T> T with(Call<T> call) {
        lock.readLock().lock();
        try {
            if (closed) {
                throw new ClosedException("the " + what + " is closed");
            }
            return call.apply(state.ptr);
        } finally {
            lock.readLock().unlock();
            // The pointer must not be freed by the Cleaner while the call runs.
            Reference.reachabilityFence(this);
        }
    }

    /** Runs {@code call} with the pointer in place of a value-returning one. */
    void run(LongConsumer call) {
        with(p -> {
            call.accept(p);
            return null;
        });
    }

    boolean isClosed() {
        return closed;
    }

    /** Frees the pointer (once; later calls do nothing), waiting for calls in progress. */
    void close() {
        lock.writeLock().lock();
        try {
            closed = true;
            cleanable.clean();
        } finally {
            lock.writeLock().unlock();
        }
    }
}
