package io.etcdlock;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The lost callbacks of a lease or a lock. The native layer calls {@link #lost} once, on a runtime
 * thread; each callback then runs once on a callback thread. A callback added after the loss runs
 * at once (on a callback thread too). Holds no reference to its lease or lock, so that the
 * native layer's reference to it does not keep them from being cleaned.
 */
final class LostSink {
    private final List<Consumer<String>> callbacks = new ArrayList<>();
    private String reason;
    private boolean armed;

    /**
     * Adds a callback; {@code arm} (which registers this sink natively) runs on the first add.
     * A failing {@code arm} leaves nothing registered.
     */
    void add(Consumer<String> callback, Runnable arm) {
        Objects.requireNonNull(callback, "callback");
        String already;
        synchronized (this) {
            if (!armed) {
                arm.run();
                armed = true;
            }
            already = reason;
            if (already == null) {
                callbacks.add(callback);
            }
        }
        if (already != null) {
            Callbacks.EXECUTOR.execute(() -> callback.accept(already));
        }
    }

    /** Called by the native layer: must return quickly and never throw. */
    void lost(String why) {
        List<Consumer<String>> todo;
        synchronized (this) {
            if (reason != null) {
                return;
            }
            reason = why;
            todo = new ArrayList<>(callbacks);
            callbacks.clear();
        }
        for (Consumer<String> c : todo) {
            Callbacks.EXECUTOR.execute(() -> c.accept(why));
        }
    }
}
