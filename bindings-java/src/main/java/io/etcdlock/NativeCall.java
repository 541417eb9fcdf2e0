package io.etcdlock;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import java.util.function.ToLongFunction;

/**
 * One wait in flight (a lock's acquire, a task's claim): the native layer runs it on the runtime
 * and calls {@link #done} once with the outcome, which completes {@link #result}. {@link #cancel}
 * makes the native wait give up (nothing left behind before {@code done} reports CANCELLED).
 *
 * @param <T> what the native handle of a success becomes ({@link LockGuard}, {@link Task})
 */
final class NativeCall<T> {
    final CompletableFuture<T> result = new CompletableFuture<>();
    /** The native handle of a success, as a Java object. */
    private final LongFunction<T> wrap;
    /** Undoes a success nobody will use (a lock released, a task given back). */
    private final Consumer<T> undo;
    /** The wait's span (Tracing), ended here on a failure and by {@link #wrap} on a success; or null. */
    private final Tracing.Span span;
    private NativeHandle token;
    private boolean finished;

    private NativeCall(LongFunction<T> wrap, Consumer<T> undo, Tracing.Span span) {
        this.wrap = wrap;
        this.undo = undo;
        this.span = span;
    }

    /**
     * Starts a wait: {@code begin} makes the native call with the new call as its sink and returns
     * its cancel token. Bad arguments and a closed client throw here, with nothing sent.
     */
    static <T> NativeCall<T> start(LongFunction<T> wrap, Consumer<T> undo, ToLongFunction<NativeCall<T>> begin, String what) {
        return start(wrap, undo, begin, what, null);
    }

    /**
     * {@link #start(LongFunction, Consumer, ToLongFunction, String)} in the wait's {@code span}
     * (or null): a failure ends it here, before {@link #result} completes; {@code wrap} ends it
     * on a success.
     */
    static <T> NativeCall<T> start(LongFunction<T> wrap, Consumer<T> undo, ToLongFunction<NativeCall<T>> begin, String what, Tracing.Span span) {
        NativeCall<T> call = new NativeCall<>(wrap, undo, span);
        NativeHandle token;
        try {
            token = new NativeHandle(begin.applyAsLong(call), Native::cancelFree, what);
        } catch (RuntimeException e) {
            if (span != null) {
                Tracing.failed(span, e, true);
            }
            throw e;
        }
        synchronized (call) {
            call.token = token;
            if (call.finished) {
                token.close();
            }
        }
        return call;
    }

    /** Called by the native layer on a runtime thread, once: must return quickly and never throw. */
    void done(long handle, String kind, String message) {
        try {
            synchronized (this) {
                finished = true;
                if (token != null) {
                    token.close();
                }
            }
            if (kind != null) {
                if (span != null) {
                    Tracing.failed(span, kind, true);
                }
                result.completeExceptionally(Errors.of(kind, message));
            } else {
                result.complete(wrap.apply(handle));
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

    /** Undoes a success nobody will use. */
    void undo(T late) {
        undo.accept(late);
    }

    /** Waits for the outcome; on an interrupt gives up the wait (a success meanwhile is undone). */
    T await() throws InterruptedException {
        try {
            return result.get();
        } catch (InterruptedException e) {
            cancel();
            settleCancelled();
            // settleCancelled keeps the interrupt status; InterruptedException means it is consumed.
            Thread.interrupted();
            throw e;
        } catch (ExecutionException e) {
            throw Errors.again(e.getCause());
        }
    }

    /** Waits for the outcome, ignoring interrupts (re-asserted on return). */
    T awaitUninterruptibly() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return result.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw Errors.again(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * After {@link #cancel}: waits for the outcome without giving in to interrupts (the cancel
     * makes it come within a request timeout), keeping the thread's interrupt status. A success
     * that came before the cancel took effect is undone: nobody will use it.
     */
    void settleCancelled() {
        boolean interrupted = false;
        while (true) {
            try {
                undo(result.get());
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
