package io.etcdlock;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * One claim in flight ({@link TaskQueue#claim}, {@link TaskQueue#claimAsync}): the native layer
 * runs it on the runtime and calls {@link #done} once with the outcome, which completes
 * {@link #result}. {@link #cancel} makes the native wait give up (CANCELLED, nothing left). The
 * same path as a lock's {@link AcquireCall}.
 */
final class ClaimCall {
    final CompletableFuture<Task> result = new CompletableFuture<>();
    private final TaskQueue queue;
    private NativeHandle token;
    private boolean finished;

    private ClaimCall(TaskQueue queue) {
        this.queue = queue;
    }

    /** Starts the claim; bad arguments and a closed client throw here, with nothing sent. */
    static ClaimCall start(TaskQueue queue, long timeoutMs) {
        ClaimCall call = new ClaimCall(queue);
        long t = queue.handle().with(q -> Native.queueClaim(q, timeoutMs, call));
        NativeHandle token = new NativeHandle(t, Native::cancelFree, "claim");
        synchronized (call) {
            call.token = token;
            if (call.finished) {
                token.close();
            }
        }
        return call;
    }

    /** Called by the native layer on a runtime thread, once: must return quickly and never throw. */
    void done(long task, String kind, String message) {
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
                result.complete(new Task(new NativeHandle(task, Native::taskFree, "task"), queue));
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

    /** Waits for the task; on an interrupt gives up the wait (a task claimed meanwhile is given back). */
    Task await() throws InterruptedException {
        try {
            return result.get();
        } catch (InterruptedException e) {
            cancel();
            settleCancelled();
            Thread.interrupted();
            throw e;
        } catch (ExecutionException e) {
            throw Errors.again(e.getCause());
        }
    }

    /**
     * After {@link #cancel}: waits for the outcome without giving in to interrupts (the cancel
     * makes it come within a request timeout), keeping the thread's interrupt status. A task
     * claimed before the cancel took effect is given back: nobody will work on it.
     */
    private void settleCancelled() {
        boolean interrupted = false;
        while (true) {
            try {
                result.get().giveBackQuietly();
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
