package io.etcdlock;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * A registration's event callbacks. The native layer calls {@link #event} on a runtime thread
 * for each event, in order; the callbacks run on one callback thread at a time, in that order.
 * Holds no reference to the registration, so that the native layer's reference to it does not
 * keep the registration from being cleaned.
 */
final class RegistrationSink {
    private final List<Consumer<String>> lost = new CopyOnWriteArrayList<>();
    private final List<LongConsumer> restored = new CopyOnWriteArrayList<>();
    private final List<Runnable> takenOver = new CopyOnWriteArrayList<>();
    /** Delivers in order: each event's callbacks after the previous one's. */
    private final java.util.concurrent.Executor serial = new SerialExecutor();

    void onLost(Consumer<String> c) {
        lost.add(Objects.requireNonNull(c, "callback"));
    }

    void onRestored(LongConsumer c) {
        restored.add(Objects.requireNonNull(c, "callback"));
    }

    void onTakenOver(Runnable c) {
        takenOver.add(Objects.requireNonNull(c, "callback"));
    }

    /** Called by the native layer: must return quickly and never throw. */
    void event(String kind, String reason, long lease) {
        serial.execute(() -> {
            switch (kind) {
                case "lost":
                    lost.forEach(c -> quietly(() -> c.accept(reason)));
                    break;
                case "restored":
                    restored.forEach(c -> quietly(() -> c.accept(lease)));
                    break;
                default:
                    takenOver.forEach(c -> quietly(c));
            }
        });
    }

    private static void quietly(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            Thread t = Thread.currentThread();
            t.getUncaughtExceptionHandler().uncaughtException(t, e);
        }
    }

    /** Runs tasks one after another on the callback threads. */
    private static final class SerialExecutor implements java.util.concurrent.Executor {
        private final java.util.ArrayDeque<Runnable> tasks = new java.util.ArrayDeque<>();
        private boolean running;

        @Override
        public synchronized void execute(Runnable r) {
            tasks.add(r);
            if (!running) {
                running = true;
                Callbacks.EXECUTOR.execute(this::drain);
            }
        }

        private void drain() {
            while (true) {
                Runnable r;
                synchronized (this) {
                    r = tasks.poll();
                    if (r == null) {
                        running = false;
                        return;
                    }
                }
                r.run();
            }
        }
    }
}
