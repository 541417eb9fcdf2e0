package io.etcdlock;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * One acquire in flight: the native layer runs it on the runtime and calls {@link #done} once with
 * the outcome, which completes {@link #result}. {@link #cancel} makes the native wait give up
 * (its queue key deleted before {@code done} reports CANCELLED).
 */
final class AcquireCall {
    final CompletableFuture<LockGuard> result = new CompletableFuture<>();
    private final String name;
    private NativeHandle token;
    private boolean finished;

    private AcquireCall(String name) {
        this.name = name;
    }

    /** Starts the acquire; bad arguments and a closed client throw here, with nothing sent. */
    static AcquireCall start(NativeHandle client, String name, LockOptions opts, DistributedLock.Kind kind, long timeoutMs) {
        AcquireCall call = new AcquireCall(name);
        long t = client.with(c -> Native.lockAcquire(c, name, opts.ttlSeconds, timeoutMs, opts.value, kind.ordinal(), opts.permits, call));
        NativeHandle token = new NativeHandle(t, Native::cancelFree, "acquire");
        synchronized (call) {
            call.token = token;
            if (call.finished) {
                token.close();
            }
        }
        return call;
    }

    /** Called by the native layer on a runtime thread, once: must return quickly and never throw. */
    void done(long guard, String kind, String message) {
        try {
            synchronized (this) {
                finished = true;
                if (token != null) {
                    token.close();
                }
            }
            if (kind != null) {
                result.completeExceptionally(Errors.of(kind, message));
            } else {
                result.complete(new LockGuard(new NativeHandle(guard, Native::guardFree, "lock guard"), name));
            }
        } catch (Throwable t) {
            result.completeExceptionally(t);
        }
    }

    /** Makes the native wait give up, unless it is over. */
    void cancel() {
        NativeHandle t;
        synchronized (this) {
            t = finished ? null : token;
        }
        if (t != null) {
            try {
                t.run(Native::cancel);
            } catch (ClosedException over) {
                // done() ran meanwhile: the outcome is in `result`.
            }
        }
    }

    /**
     * After {@link #cancel}: waits for the outcome without giving in to interrupts (the cancel
     * makes it come within a request timeout), keeping the thread's interrupt status. A lock that
     * was granted before the cancel took effect is released: nobody will use it.
     */
    void settleCancelled() {
        boolean interrupted = false;
        while (true) {
            try {
                LockGuard late = result.get();
                late.releaseQuietly();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException e) {
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
