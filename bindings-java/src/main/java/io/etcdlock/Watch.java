package io.etcdlock;

import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Flow;

/**
 * A watch of one key or of every key under a prefix ({@link EtcdLockClient#watch},
 * {@link EtcdLockClient#watchPrefix}): every change in revision order, resumed across
 * disconnects and member changes without a gap or a duplicate (the core does that). Read it
 * either as a blocking {@link Iterator} or as a {@link Flow.Publisher}, not both.
 *
 * <pre>{@code
 * try (Watch watch = client.watchPrefix("jobs/")) {
 *     while (watch.hasNext()) {               // blocks; false once closed
 *         WatchEvent e = watch.next();
 *         System.out.println(e.type() + " " + e.key() + " @" + e.revision());
 *     }
 * }
 * }</pre>
 *
 * <p>The watch ends when {@link #close()}d (from any thread: a reader blocked in
 * {@link #hasNext()} returns false), and with an exception when it cannot go on: a
 * {@link CompactedException} when the history it needs was compacted (its
 * {@link CompactedException#compactRevision()} says where history starts now), a
 * {@link ClosedException} when the client is closed. The exception is thrown once; the watch has
 * ended after it. Close it in any case: it holds a watch on the server until closed (or garbage
 * collected).
 *
 * <p>As a {@link Flow.Publisher}: a reader that falls far behind is cut off by etcd and resumed
 * by the core, nothing lost.
 */
public final class Watch extends NativeStream<WatchEvent> {
    Watch(NativeHandle handle, String description) {
        super(handle, description);
    }

    @Override
    List<WatchEvent> read(long ptr, long timeoutMs) {
        WatchEvent[] batch = Native.watchNext(ptr, timeoutMs);
        return batch == null ? null : Arrays.asList(batch);
    }

    @Override
    void end(long ptr) {
        Native.watchClose(ptr);
    }
}
