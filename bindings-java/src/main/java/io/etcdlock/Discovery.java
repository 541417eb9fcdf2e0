package io.etcdlock;

import java.util.List;

/**
 * A service's instance sets (from {@link EtcdLockClient#discover}): the current
 * {@link Instances} first, then the whole set after each change, across reconnects and
 * compaction. Read it as a blocking iterator ({@code hasNext}/{@code next}, {@code next(Duration)})
 * or as a {@link java.util.concurrent.Flow.Publisher}, not both; close it.
 *
 * <p>Changes that arrive together are applied together, and changes not read yet may be merged
 * into the latest set (the core does that): every set is the state at its
 * {@link Instances#revision()}, and none that a change made visible is skipped at the end. Ends
 * when closed ({@code hasNext} false) or with {@link ClosedException} (once) when the client
 * closes. Sends nothing until read.
 */
public final class Discovery extends NativeStream<Instances> {
    /** What the native layer returns when the timeout passed. */
    private static final Object TIMED_OUT = new Object();

    Discovery(NativeHandle handle, String service) {
        super(handle, service);
    }

    @Override
    List<Instances> read(long ptr, long timeoutMs) {
        Object next = Native.followNext(ptr, timeoutMs, TIMED_OUT);
        return next == null ? null : next == TIMED_OUT ? List.of() : List.of((Instances) next);
    }

    @Override
    void end(long ptr) {
        Native.followClose(ptr);
    }
}
