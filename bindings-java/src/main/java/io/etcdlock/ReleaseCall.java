package io.etcdlock;

import java.util.concurrent.CompletableFuture;

/**
 * One call in flight that yields nothing but its outcome (a release, {@link LockGuard#releaseAsync};
 * a cache's wait, {@link Cache#waitForAsync}): the native layer runs it on the runtime and calls
 * {@link #done} once with the outcome, which completes {@link #result} (the same path as an
 * acquire's {@link NativeCall}).
 */
final class ReleaseCall {
    final CompletableFuture<Void> result = new CompletableFuture<>();

    /** Called by the native layer on a runtime thread, once: must return quickly and never throw. */
    void done(String kind, String message) {
        try {
            if (kind != null) {
                result.completeExceptionally(Errors.of(kind, message));
            } else {
                result.complete(null);
            }
        } catch (Throwable t) {
            result.completeExceptionally(t);
        }
    }
}
