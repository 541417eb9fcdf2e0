package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * A held distributed lock (from {@link DistributedLock#acquire}). Thread-safe. {@link #close()}
 * releases it, so {@code try (LockGuard held = lock.acquire(timeout)) { ... }} holds it for the
 * block. Holding can end without a release: when the lease expires (the process was cut off from
 * etcd longer than the TTL), the key is deleted, or the client closes. Write through
 * {@link #putIfHeld} to make writes that must happen only under the lock safe against that.
 * {@link #releaseAsync} releases it without blocking a thread.
 */
public final class LockGuard implements AutoCloseable {
    private final NativeHandle handle;
    private final String name;
    private final long fencingToken;
    private final long leaseId;
    private final String key;
    private final LostSink lost = new LostSink();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The native outcome of {@link #releaseAsync}, once it was called. */
    private final AtomicReference<CompletableFuture<Void>> asyncRelease = new AtomicReference<>();
    /** The open hold (or leadership) span when traced (Tracing), else null. */
    private volatile Tracing.Hold hold;

    LockGuard(NativeHandle handle, String name) {
        this.handle = handle;
        this.name = name;
        this.fencingToken = handle.with(Native::guardFencingToken);
        this.leaseId = handle.with(Native::guardLeaseId);
        this.key = new String(handle.with(Native::guardKey), StandardCharsets.UTF_8);
    }

    /** @return the lock's name */
    public String name() {
        return name;
    }

    /**
     * @return the fencing token: strictly greater than every earlier holder's token for this name
     *     (the queue key's create revision), to pass to a resource that rejects stale holders
     */
    public long fencingToken() {
        return fencingToken;
    }

    /** @return this holder's queue key in etcd, {@code <name>/<lease id hex>[-n]} */
    public String key() {
        return key;
    }

    /** @return the ID of the lease the lock is held with */
    public long leaseId() {
        return leaseId;
    }

    /**
     * A cheap local check: not released, not lost, and the lease's conservative local deadline has
     * not passed. For writes that must be safe, use {@link #putIfHeld}, checked by etcd.
     *
     * @return whether the lock is still held as far as this process knows
     */
    public boolean isHeld() {
        if (asyncRelease.get() != null) {
            return false;
        }
        try {
            return handle.with(Native::guardIsHeld);
        } catch (ClosedException e) {
            return false;
        }
    }

    /** @return why the lock was lost ({@code expired}, {@code revoked}, {@code key_deleted}, {@code closed}), if it was */
    public Optional<String> lostReason() {
        try {
            return Optional.ofNullable(handle.with(Native::guardLostReason));
        } catch (ClosedException e) {
            return Optional.empty();
        }
    }

    /**
     * One call's view of the lock ({@code ok()} while held and not in doubt): what a readiness
     * probe answers. Local reads only. Once closed (its native handle freed) it reads released.
     *
     * @return the view, taken now
     */
    public Health health() {
        try {
            return handle.with(Native::guardHealth);
        } catch (ClosedException e) {
            return Health.released(name, fencingToken, leaseId);
        }
    }

    /**
     * Writes {@code value} at {@code key} only while this lock is held: etcd checks that the
     * lock's key is still this holder's in the same transaction as the write.
     *
     * @param key the key (not under the lock's own {@code <name>/} prefix)
     * @param value the value
     * @return the revision of the write
     * @throws NotHeldException if the lock is not held (released, lost, or taken over); nothing is written
     */
    public long putIfHeld(String key, byte[] value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        try {
            return handle.with(g -> Native.guardPut(g, k, value));
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /**
     * This acquisition's {@link Fence}: the lock's name, its fencing token and the etcd cluster's
     * ID (read once per client, on its first fence), for a database or another service to
     * refuse a stale holder's write ({@code io.etcdlock.fencing.JdbcFence}). Its string form
     * ({@code fence().toString()}) travels to other processes. A semaphore permit's or a read
     * lock's fence is not exclusive.
     *
     * @return the fence
     * @throws NotHeldException if the lock was released
     */
    public Fence fence() {
        if (asyncRelease.get() != null) {
            throw alreadyReleased();
        }
        try {
            return Fence.parse(handle.with(Native::guardFence));
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /** Runs a native call on the guard; a freed guard is {@link NotHeldException}. */
    long withHandle(NativeHandle.Call<Long> call) {
        try {
            return handle.with(call);
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /**
     * Calls {@code callback} with the reason ({@code expired}, {@code revoked}, {@code key_deleted},
     * {@code closed}) once the lock is lost, not when it is released; on an etcdlock callback
     * thread, at once if it is lost already. Callbacks added after {@link #release} (or
     * {@link #releaseAsync}) never run.
     *
     * @param callback called once with the reason
     * @throws NotHeldException if the lock was released
     */
    public void onLost(Consumer<String> callback) {
        try {
            boolean released = asyncRelease.get() != null || handle.with(Native::guardIsReleased);
            if (released && handle.with(Native::guardLostReason) == null) {
                throw notHeld();
            }
            lost.add(callback, () -> handle.run(g -> Native.guardOnLost(g, lost)));
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /**
     * Releases the lock: deletes its key only if it is still this holder's (never a later
     * holder's). No lost callback runs after this returns.
     *
     * @throws NotHeldException if it was already released (also by {@link #releaseAsync}), or lost
     */
    public void release() {
        if (asyncRelease.get() != null) {
            throw alreadyReleased();
        }
        try {
            traced(() -> handle.run(Native::guardRelease));
        } catch (ClosedException e) {
            throw notHeld();
        }
    }

    /**
     * {@link #release()} without blocking the calling thread: the release runs on etcdlock's
     * runtime and the future completes on an etcdlock callback thread (as
     * {@link DistributedLock#acquireAsync}'s does), normally once the key is deleted, or
     * exceptionally with what {@code release()} would throw: {@link NotHeldException} if the lock
     * was already released (by {@code release()} or an earlier {@code releaseAsync()}) or lost,
     * including by the client's close; nothing is thrown by this call itself. The lost callback
     * is disarmed before this returns. Cancelling the future does not stop the release. Afterwards
     * {@link #release()} throws {@link NotHeldException} and {@link #close()} only frees the
     * guard (once the release is over).
     *
     * <pre>{@code
     * lock.acquireAsync(Duration.ofSeconds(5))
     *     .thenCompose(held -> {
     *         work(held.fencingToken());
     *         return held.releaseAsync();
     *     })
     *     .whenComplete((done, error) -> { ... }); // error: e.g. a NotHeldException, the lock was lost
     * }</pre>
     *
     * @return completed once the lock is released; exceptionally with {@link NotHeldException}
     *     if it was already released, or lost
     */
    public CompletableFuture<Void> releaseAsync() {
        ReleaseCall call = new ReleaseCall();
        CompletableFuture<Void> released = new CompletableFuture<>();
        Tracing.Hold h = hold;
        Tracing.Span span = Tracing.begin(Tracing.RELEASE, name);
        // Completed on a callback thread, never a runtime thread (dependent stages may block).
        // The stage refers to this guard, so its handle is not freed by the Cleaner meanwhile.
        call.result.whenCompleteAsync((v, error) -> {
            tracedAsync(h, span, error);
            if (error == null) {
                released.complete(null);
            } else {
                // As release(): a closed client's CLOSED, like a freed guard, is NotHeld.
                released.completeExceptionally(error instanceof ClosedException ? notHeld() : error);
            }
        }, Callbacks.EXECUTOR);
        if (!asyncRelease.compareAndSet(null, call.result)) {
            call.result.completeExceptionally(alreadyReleased());
            return released;
        }
        try {
            handle.run(g -> Native.guardReleaseAsync(g, call));
        } catch (RuntimeException e) {
            // Nothing started (a closed guard): the future carries it, as the outcome would.
            call.result.completeExceptionally(e);
        }
        return released;
    }

    /**
     * Releases the lock if it was not released yet, and frees it. Idempotent.
     *
     * @throws LockLostException if the lock was lost before (not all of the block ran under it;
     *     inside try-with-resources this is suppressed by an exception the block threw)
     */
    @Override
    public void close() {
        if (closed.getAndSet(true)) {
            return;
        }
        CompletableFuture<Void> releasing = asyncRelease.get();
        if (releasing != null) {
            // Released by releaseAsync: freed once that is over (a free before it starts would
            // release the lock itself, and the async release would report NotHeld); then off the
            // runtime thread that completes it.
            if (releasing.isDone()) {
                handle.close();
            } else {
                releasing.whenCompleteAsync((v, e) -> handle.close(), Callbacks.EXECUTOR);
            }
            return;
        }
        String lostWhy = null;
        try {
            if (!handle.with(Native::guardIsReleased)) {
                try {
                    traced(() -> handle.run(Native::guardRelease));
                } catch (NotHeldException e) {
                    lostWhy = handle.with(Native::guardLostReason);
                } catch (ClosedException e) {
                    // The client closed first: its leases were revoked, nothing is left to release.
                }
            }
        } finally {
            handle.close();
        }
        if (lostWhy != null) {
            throw new LockLostException("the lock " + name + " was lost before it was closed (" + lostWhy + ")");
        }
    }

    /** Releases without reporting (a lock nobody will use: a cancelled or interrupted acquire's). */
    void releaseQuietly() {
        try {
            close();
        } catch (RuntimeException e) {
            // Lost meanwhile: nothing to release.
        }
    }

    /**
     * Opens the hold span {@code spanName}, linked to the acquire's {@code waited}; ended at
     * release, at loss (a lost callback) or, for a guard nobody closed, when it is collected
     * ({@code dropped}). Neither the callback nor the Cleaner refers to this guard.
     */
    void traceHold(Tracing.Span waited, String spanName) {
        hold = Tracing.hold(waited, spanName, name, fencingToken, null, this, lost, () -> handle.run(g -> Native.guardOnLost(g, lost)));
    }

    /**
     * Runs {@code release} (a release call) in an {@code etcdlock.release} span when traced,
     * and ends the hold: {@code released}, or {@code lost} if the lock was lost before.
     */
    private void traced(Runnable release) {
        Tracing.released(hold, name, fencingToken, null, release, () -> lostReason().orElse(null));
    }

    /** Ends an async release's span and the hold, before the caller's future completes. */
    private void tracedAsync(Tracing.Hold h, Tracing.Span span, Throwable error) {
        if (error == null) {
            if (h != null) {
                h.end("released", null);
            }
        } else {
            endHold(h);
        }
        if (span != null) {
            span.attr("etcdlock.fencing_token", fencingToken);
            if (error == null) {
                Tracing.ok(span, "released");
            } else {
                Tracing.failed(span, error instanceof ClosedException ? notHeld() : error, false);
            }
        }
    }

    /** Ends the hold after a failed release: lost (with its reason) or, if not lost, released. */
    private void endHold(Tracing.Hold h) {
        if (h != null) {
            String why = lostReason().orElse(null);
            h.end(why == null ? "released" : "lost", why);
        }
    }

    private NotHeldException alreadyReleased() {
        return new NotHeldException("the lock " + name + " was already released");
    }

    private NotHeldException notHeld() {
        return new NotHeldException("the lock " + name + " was released");
    }

    @Override
    public String toString() {
        return "LockGuard{" + key + ", token=" + fencingToken + "}";
    }
}
