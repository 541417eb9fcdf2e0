package io.etcdlock;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads user callbacks run on (lost callbacks, async acquire completions): never the
 * native runtime's threads, which serve every client's I/O and on which a blocking etcdlock
 * call would be refused. Daemon threads, made on demand, gone when idle.
 */
final class Callbacks {
    private static final AtomicInteger N = new AtomicInteger();
    static final ExecutorService EXECUTOR = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "etcdlock-callback-" + N.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    private Callbacks() {}
}
