package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Leading an election (from {@link Election#campaign}): the held candidate key, a
 * {@link LockGuard} underneath (the core hands out the same guard). Thread-safe.
 * {@link #close()} resigns, so {@code try (Leadership l = election.campaign(v, timeout)) { ... }}
 * leads for the block. Everything it writes is fenced: applied by etcd only while this candidate
 * still leads, so a deposed leader (a paused process, a lost lease) writes nothing.
 */
public final class Leadership implements AutoCloseable {
    private final LockGuard guard;

    Leadership(LockGuard guard) {
        this.guard = guard;
    }

    /** @return the election's name */
    public String name() {
        return guard.name();
    }

    /** @return the leader's key, {@code <name>/<lease hex>} */
    public String key() {
        return guard.key();
    }

    /** @return the fencing token: the key's create revision, greater than every earlier leader's */
    public long fencingToken() {
        return guard.fencingToken();
    }

    /** @return the ID of the lease the key is bound to */
    public long leaseId() {
        return guard.leaseId();
    }

    /** @return whether still leading as far as this process knows (a cheap local check) */
    public boolean isHeld() {
        return guard.isHeld();
    }

    /** @return why leadership was lost ({@code expired}, {@code revoked}, {@code key_deleted}, {@code closed}), if it was */
    public Optional<String> lostReason() {
        return guard.lostReason();
    }

    /**
     * One call's view of this term ({@code ok()} while leading and not in doubt): what a
     * readiness probe answers, "this pod is the leader". Local reads only.
     *
     * @return the view, taken now ({@code released} once resigned)
     */
    public Health health() {
        return guard.health();
    }

    /**
     * Calls {@code callback} with the reason once leadership is lost (not when resigned), on an
     * etcdlock callback thread; at once if lost already.
     *
     * @param callback called once with the reason
     * @throws NotHeldException if resigned
     */
    public void onLost(Consumer<String> callback) {
        guard.onLost(callback);
    }

    /**
     * Replaces the leader's value (what {@link Election#leader()}, observers and
     * {@code etcdctl elect -l} see), only while still leading.
     *
     * @param value the new proposal (at most 4096 bytes)
     * @return the revision of the write
     * @throws NotHeldException if no longer leading (resigned, lost, key deleted); nothing written
     */
    public long proclaim(byte[] value) {
        Objects.requireNonNull(value, "value");
        return guard.withHandle(g -> Native.guardSetValue(g, value));
    }

    /**
     * {@link #proclaim(byte[])} with UTF-8 text.
     *
     * @param value the new proposal
     * @return the revision of the write
     */
    public long proclaim(String value) {
        return proclaim(Objects.requireNonNull(value, "value").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Writes {@code value} at {@code key} only while still leading (see {@link LockGuard#putIfHeld}).
     *
     * @param key the key (not under {@code <name>/})
     * @param value the value
     * @return the revision of the write
     * @throws NotHeldException if no longer leading; nothing written
     */
    public long putIfHeld(String key, byte[] value) {
        return guard.putIfHeld(key, value);
    }

    /**
     * Steps down: deletes the leader's key if it is still this one's (the next candidate leads).
     *
     * @throws NotHeldException if already resigned, or lost
     */
    public void resign() {
        guard.release();
    }

    /**
     * Resigns unless resigned, and frees. Idempotent.
     *
     * @throws LockLostException if leadership was lost before
     */
    @Override
    public void close() {
        guard.close();
    }

    /**
     * @return the leadership's {@link Fence} (see {@link LockGuard#fence()})
     * @throws NotHeldException if it was resigned
     */
    public Fence fence() {
        return guard.fence();
    }

    /** @return the guard underneath (for code that takes a {@link LockGuard}) */
    public LockGuard guard() {
        return guard;
    }

    @Override
    public String toString() {
        return "Leadership{" + key() + ", token=" + fencingToken() + "}";
    }
}
