package io.etcdlock;

import java.util.concurrent.CompletableFuture;

/**
 * What {@link TaskQueue#claimAsync} returns: cancelling it (or completing it from outside, e.g.
 * {@code orTimeout}) gives up the wait, leaving nothing behind; a task claimed just before is
 * given back. Completed on a callback thread, never a runtime thread, so that dependent stages
 * may call etcdlock's blocking methods (as {@link AcquireFuture}).
 */
final class ClaimFuture extends CompletableFuture<Task> {
    private final ClaimCall call;

    ClaimFuture(ClaimCall call) {
        this.call = call;
        call.result.whenCompleteAsync((task, error) -> {
            if (error != null) {
                completeExceptionally(error);
            } else if (!complete(task)) {
                // Cancelled after the claim: nobody will work on it.
                task.giveBackQuietly();
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

    @Override
    public boolean completeExceptionally(Throwable ex) {
        boolean done = super.completeExceptionally(ex);
        if (done) {
            call.cancel();
        }
        return done;
    }
}
