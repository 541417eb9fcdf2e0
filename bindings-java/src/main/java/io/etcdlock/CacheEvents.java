package io.etcdlock;

import java.util.Iterator;
import java.util.List;

/**
 * A {@link Cache}'s changes from when it was made ({@link Cache#events()}): in revision order,
 * each revision's changes together, none twice, each applied to the copy before it is handed out
 * (a read of the cache after an event sees that change or a later one). Read it as a blocking
 * iterator ({@code hasNext}/{@code next}, {@code next(Duration)}), in a for-each loop (it is its
 * own, single-use {@link Iterable}), or as a {@link java.util.concurrent.Flow.Publisher}; one of
 * them.
 *
 * <pre>{@code
 * for (CacheEvent e : cache.events()) {        // blocks; ends once the cache is closed
 *     if (e.type() == CacheEvent.Type.RESYNCED) {
 *         reload(cache.snapshot());
 *     } else {
 *         apply(e.type(), e.key(), e.value());
 *     }
 * }
 * }</pre>
 *
 * <p>Ends ({@code hasNext} false) when closed or when its cache is closed, after the events that
 * came before; with {@link ClosedException} (once) when the client closes. Any number of streams
 * may read one cache; close each (a stream nobody closed is freed when garbage collected).
 */
public final class CacheEvents extends NativeStream<CacheEvent> implements Iterable<CacheEvent> {
    /** What the native layer returns when the timeout passed. */
    private static final Object TIMED_OUT = new Object();

    CacheEvents(NativeHandle handle, String prefix) {
        super(handle, "prefix " + prefix);
    }

    /** @return this stream, for a for-each loop (single use: its events are read once) */
    @Override
    public Iterator<CacheEvent> iterator() {
        return this;
    }

    @Override
    List<CacheEvent> read(long ptr, long timeoutMs) {
        Object next = Native.followNext(ptr, timeoutMs, TIMED_OUT);
        return next == null ? null : next == TIMED_OUT ? List.of() : List.of((CacheEvent) next);
    }

    @Override
    void end(long ptr) {
        Native.followClose(ptr);
    }
}
