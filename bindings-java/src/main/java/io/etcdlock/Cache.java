package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A local copy of every key under a prefix, kept in step with etcd ({@link EtcdLockClient#cache}):
 * loaded at one revision, then changed a whole revision at a time by a watch that resumes across
 * disconnects without a gap or a duplicate; when the history it needs was compacted, it reads the
 * prefix again and reports the differences ({@link CacheEvent.Type#RESYNCED}). Thread-safe.
 *
 * <pre>{@code
 * try (Cache cache = client.cache("config/")) {
 *     Optional<KeyValue> a = cache.get("config/a");      // from the copy: sends nothing
 *     long rev = client.put("config/b", bytes);
 *     cache.waitFor(rev, Duration.ofSeconds(5));          // read-your-writes
 *     for (CacheEvent e : cache.events()) { ... }         // PUT, DELETE, RESYNCED
 * }
 * }</pre>
 *
 * <p>Reads of the copy are not linearizable: it is at {@link #revision()}, which may be behind
 * etcd ({@link #waitFor} catches up with a revision; {@link EtcdLockClient#get} is the
 * linearizable read). Once closed, or once its client is closed, calls fail with
 * {@link ClosedException}: the copy no longer follows etcd. Close it (one nobody closed stops
 * following when garbage collected).
 */
public final class Cache implements AutoCloseable {
    private final NativeHandle handle;
    private final String prefix;

    Cache(NativeHandle handle, String prefix) {
        this.handle = handle;
        this.prefix = prefix;
    }

    /** @return the prefix it copies ({@code ""}: every key) */
    public String prefix() {
        return prefix;
    }

    /**
     * @return the revision the copy is at: every change up to it is in
     * @throws ClosedException if the cache is closed
     */
    public long revision() {
        return handle.with(c -> Native.cacheRevision(c, false));
    }

    /**
     * @return how many keys the copy has
     * @throws ClosedException if the cache is closed
     */
    public int size() {
        return (int) (long) handle.with(c -> Native.cacheRevision(c, true));
    }

    /**
     * The key as the copy has it. Sends nothing.
     *
     * @param key a key
     * @return it, or empty if the copy has no such key
     * @throws ClosedException if the cache or its client is closed
     */
    public Optional<KeyValue> get(String key) {
        byte[] k = Objects.requireNonNull(key, "key").getBytes(StandardCharsets.UTF_8);
        return Optional.ofNullable(handle.with(c -> Native.cacheGet(c, k)));
    }

    /**
     * The whole copy and the revision it is at, read together. Sends nothing.
     *
     * @return the snapshot
     * @throws ClosedException if the cache or its client is closed
     */
    public CacheSnapshot snapshot() {
        return handle.with(Native::cacheSnapshot);
    }

    /**
     * Waits until the copy is at {@code revision} or later: after a write under the prefix that
     * returned revision R, {@code waitFor(R, t)} then {@link #get} reads it (or a later write). A
     * write elsewhere arrives only with etcd's progress notices (etcd 3.5.8 and later).
     *
     * @param revision the revision to wait for
     * @param timeout how long to wait at most; zero only checks
     * @return true once there, false if the timeout passed first
     * @throws ClosedException if the cache (also from another thread, while waiting) or its
     *     client is closed
     */
    public boolean waitFor(long revision, Duration timeout) {
        long ms = Durations.millis(timeout, "timeout");
        return handle.with(c -> Native.cacheWaitFor(c, revision, ms));
    }

    /**
     * {@link #waitFor} without blocking a thread. Completed on an {@code etcdlock-callback-N}
     * thread.
     *
     * @param revision the revision to wait for
     * @param timeout how long to wait at most
     * @return completed with true once there, false if the timeout passed first; exceptionally
     *     with {@link ClosedException} once the cache or its client is closed
     */
    public CompletableFuture<Boolean> waitForAsync(long revision, Duration timeout) {
        long ms = Durations.millis(timeout, "timeout");
        ReleaseCall call = new ReleaseCall();
        CompletableFuture<Boolean> reached = new CompletableFuture<>();
        // Completed on a callback thread, never a runtime thread (dependent stages may block).
        call.result.whenCompleteAsync((v, error) -> {
            if (error == null) {
                reached.complete(true);
            } else if (error instanceof EtcdLockException && "TIMEOUT".equals(((EtcdLockException) error).kind())) {
                reached.complete(false);
            } else {
                reached.completeExceptionally(error);
            }
        }, Callbacks.EXECUTOR);
        try {
            handle.run(c -> Native.cacheWaitForAsync(c, revision, ms, call));
        } catch (RuntimeException e) {
            // Nothing started (a closed cache or client): the future carries it.
            call.result.completeExceptionally(e);
        }
        return reached;
    }

    /**
     * The copy's changes from now on; close the stream when done (closing the cache ends it).
     *
     * @return the stream
     * @throws ClosedException if the cache or its client is closed
     */
    public CacheEvents events() {
        long s = handle.with(Native::cacheEvents);
        return new CacheEvents(new NativeHandle(s, Native::followFree, "cache events"), prefix);
    }

    /** @return whether {@link #close()} was called */
    public boolean isClosed() {
        return handle.isClosed();
    }

    /**
     * Stops following etcd: a {@link #waitFor} blocked on another thread throws
     * {@link ClosedException}, the event streams end after the events that came before. Idempotent.
     */
    @Override
    public void close() {
        if (handle.isClosed()) {
            return;
        }
        try {
            // First, under the read lock: wakes a blocked waitFor, so that the free below (which
            // waits for calls in progress) does not wait out its timeout.
            handle.run(Native::cacheClose);
        } catch (ClosedException alreadyClosed) {
            return;
        } finally {
            handle.close();
        }
    }

    /** @return e.g. {@code Cache{config/}} */
    @Override
    public String toString() {
        return "Cache{" + prefix + (isClosed() ? ", closed" : "") + "}";
    }
}
