package io.etcdlock;

import java.util.List;
import java.util.Optional;

/**
 * Leader changes of one election (from {@link Election#observe()}): the current leader first
 * (empty when nobody leads), then each change: a new leader, a proclamation (same key, new
 * value), or empty when the last candidate went. Read it as a blocking iterator
 * ({@code hasNext}/{@code next}, {@code next(Duration)}) or as a
 * {@link java.util.concurrent.Flow.Publisher}, not both; close it.
 *
 * <p>Changes that come faster than they are read may be merged into the latest state (the core
 * does that), which is never skipped: each item is the leader as etcd had it at some moment, and
 * the last one read is the current leader. Survives reconnects and compaction. Ends when closed
 * ({@code hasNext} false) or with {@link ClosedException} (once) when the client closes.
 */
public final class ElectionObserver extends NativeStream<Optional<Leader>> {
    /** What the native layer returns when the timeout passed. */
    private static final Object TIMED_OUT = new Object();

    ElectionObserver(NativeHandle handle, String name) {
        super(handle, name);
    }

    @Override
    @SuppressWarnings("unchecked")
    List<Optional<Leader>> read(long ptr, long timeoutMs) {
        Object next = Native.followNext(ptr, timeoutMs, TIMED_OUT);
        return next == null ? null : next == TIMED_OUT ? List.of() : List.of((Optional<Leader>) next);
    }

    @Override
    void end(long ptr) {
        Native.followClose(ptr);
    }
}
