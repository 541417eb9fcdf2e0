package io.etcdlock;

import java.util.concurrent.Flow;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The one subscription of a {@link NativeStream} (a watch, an observer, a discovery): a loop on
 * a callback thread that reads an item only when the subscriber has asked for one, so that all
 * signals come from this one thread, in order.
 *
 * @param <T> the items
 */
final class StreamSubscription<T> implements Flow.Subscription, Runnable {
    /** What a refused second subscriber is given. */
    static final Flow.Subscription NONE = new Flow.Subscription() {
        @Override
        public void request(long n) {}

        @Override
        public void cancel() {}
    };

    private final NativeStream<T> watch;
    private final Flow.Subscriber<? super T> subscriber;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    /** Guarded by lock. */
    private long demand;
    /** Guarded by lock: a request(n <= 0), reported by the loop (rule 3.9). */
    private long badRequest;
    private volatile boolean cancelled;

    StreamSubscription(NativeStream<T> watch, Flow.Subscriber<? super T> subscriber) {
        this.watch = watch;
        this.subscriber = subscriber;
    }

    @Override
    public void request(long n) {
        lock.lock();
        try {
            if (n <= 0) {
                badRequest = badRequest == 0 ? (n == 0 ? -1 : n) : badRequest;
            } else {
                demand = demand + n < 0 ? Long.MAX_VALUE : demand + n; // saturates: unbounded
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void cancel() {
        cancelled = true;
        watch.close(); // wakes the loop if it is reading
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void run() {
        try {
            subscriber.onSubscribe(this);
            while (awaitDemand()) {
                T e;
                try {
                    e = watch.take();
                } catch (RuntimeException failure) {
                    if (!cancelled) {
                        subscriber.onError(failure);
                    }
                    return;
                }
                if (e == null) {
                    if (!cancelled) {
                        subscriber.onComplete();
                    }
                    return;
                }
                subscriber.onNext(e);
            }
        } catch (Throwable subscriberFailed) {
            // A subscriber that throws is taken as cancelled (rule 2.13).
            cancelled = true;
            watch.close();
        }
    }

    /** Wakes the loop: the stream was closed (its end needs no demand). */
    void wake() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Waits until one more item is wanted (true, counted) or the subscription is over. */
    private boolean awaitDemand() {
        long bad;
        lock.lock();
        try {
            while (!cancelled && demand == 0 && badRequest == 0 && !watch.isClosed()) {
                changed.awaitUninterruptibly();
            }
            if (cancelled) {
                return false;
            }
            bad = badRequest;
            if (bad == 0 && demand > 0) {
                if (demand != Long.MAX_VALUE) {
                    demand--;
                }
                return true;
            }
            // A bad request, or the stream closed while nothing was requested.
            cancelled = true;
        } finally {
            lock.unlock();
        }
        // Signalled outside the lock: the subscriber may call back into request/cancel.
        if (bad == 0) {
            subscriber.onComplete(); // the end needs no demand
            return false;
        }
        watch.close();
        subscriber.onError(new IllegalArgumentException("request(n) needs n > 0, got " + (bad == -1 ? 0 : bad)));
        return false;
    }
}
