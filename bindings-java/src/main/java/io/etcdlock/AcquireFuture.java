package io.etcdlock;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * What {@link DistributedLock#acquireAsync} (and {@link Election#campaignAsync}) returns:
 * cancelling it leaves the queue (the native wait gives up and deletes its key). Completed on a
 * callback thread, never a runtime thread, so that dependent stages may call etcdlock's
 * blocking methods.
 *
 * @param <T> what the held lock is handed out as ({@link LockGuard}, {@link Leadership})
 */
final class AcquireFuture<T> extends CompletableFuture<T> {
    private final AcquireCall call;

    AcquireFuture(AcquireCall call, Function<LockGuard, T> wrap) {
        this.call = call;
        call.result.whenCompleteAsync((guard, error) -> {
            if (error != null) {
                completeExceptionally(error);
            } else if (!complete(wrap.apply(guard))) {
                // Cancelled after the grant: nobody will use the lock.
                guard.releaseQuietly();
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
     * Completed from outside ({@code orTimeout}, a caller's own failure): also leaves the queue.
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
