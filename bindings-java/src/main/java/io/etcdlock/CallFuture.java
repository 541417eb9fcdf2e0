package io.etcdlock;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * What {@link DistributedLock#acquireAsync}, {@link Election#campaignAsync} and
 * {@link TaskQueue#claimAsync} return: cancelling it (or completing it from outside, e.g.
 * {@code orTimeout}) gives up the wait, leaving nothing behind; a success that came just before is
 * undone (the lock released, the task given back). Completed on a callback thread, never a runtime
 * thread, so that dependent stages may call etcdlock's blocking methods.
 *
 * @param <S> what the wait yields ({@link LockGuard}, {@link Task})
 * @param <T> what it is handed out as ({@link LockGuard}, {@link Leadership}, {@link Task})
 */
final class CallFuture<S, T> extends CompletableFuture<T> {
    private final NativeCall<S> call;

    CallFuture(NativeCall<S> call, Function<S, T> wrap) {
        this.call = call;
        call.result.whenCompleteAsync((got, error) -> {
            if (error != null) {
                completeExceptionally(error);
            } else if (!complete(wrap.apply(got))) {
                // Cancelled after the success: nobody will use it.
                call.undo(got);
            }
        }, Callbacks.EXECUTOR);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        if (cancelled) {
            call.cancel();
        }
        return cancelled;
    }

    /**
     * Completed from outside ({@code orTimeout}, a caller's own failure): also gives up the wait.
     * When the native outcome completes it, the wait is over already and the cancel does nothing.
     */
    @Override
    public boolean completeExceptionally(Throwable ex) {
        boolean done = super.completeExceptionally(ex);
        if (done) {
            call.cancel();
        }
        return done;
    }
}
