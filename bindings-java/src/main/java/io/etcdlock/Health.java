package io.etcdlock;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One call's view of a hold, for health endpoints and readiness probes: what {@code health()} of
 * a {@link LockGuard} (a semaphore's permit, a read or write, too), a {@link Leadership}, a
 * {@link LockSetHolding}, a {@link PoolHolding}, a {@link Task} or a {@link OnceSlot} returns.
 * Taken by the core from the very state its lost callback is fired from, so once that callback
 * ran, {@link #ok()} is false. Local reads only: nothing is sent to etcd. Immutable.
 *
 * <p>A readiness probe answers 200 while {@code ok()} and 503 otherwise:
 *
 * <pre>{@code
 * Health h = leadership.health();
 * int status = h.ok() ? 200 : 503; // h.state(): "held", "lost", "released"
 * }</pre>
 */
public final class Health {
    private final String state;
    private final String lostReason;
    private final String name;
    private final long fencingToken;
    private final long leaseId;
    private final long exclusiveForMs;
    private final boolean ok;

    private Health(String state, String lostReason, String name, long fencingToken, long leaseId, long exclusiveForMs, boolean ok) {
        this.state = state;
        this.lostReason = lostReason;
        this.name = name;
        this.fencingToken = fencingToken;
        this.leaseId = leaseId;
        this.exclusiveForMs = exclusiveForMs;
        this.ok = ok;
    }

    /** Called by the native layer; {@code exclusiveForMs} -1 for none. */
    static Health of(String state, String lostReason, String name, long fencingToken, long leaseId, long exclusiveForMs, boolean ok) {
        return new Health(state, lostReason, name, fencingToken, leaseId, exclusiveForMs, ok);
    }

    /** The view of a holding whose native handle was freed by {@code close()}: it was released. */
    static Health released(String name, long fencingToken, long leaseId) {
        return new Health("released", null, name, fencingToken, leaseId, -1, false);
    }

    /**
     * @return {@code held} (for a leadership: leading), {@code lost}, or {@code released} (ended
     *     by this process: released, resigned, acked, nacked, done, closed)
     */
    public String state() {
        return state;
    }

    /** @return why it was lost ({@code expired}, {@code revoked}, {@code key_deleted}, {@code closed}) when {@link #state()} is {@code lost} */
    public Optional<String> lostReason() {
        return Optional.ofNullable(lostReason);
    }

    /**
     * @return the lock's name (a lock set's member names joined by {@code ,}; a task's claim lock
     *     {@code <queue>/claim/<slot>}; a period's {@code <job>/slot/<n>})
     */
    public String name() {
        return name;
    }

    /** @return the hold's fencing token */
    public long fencingToken() {
        return fencingToken;
    }

    /** @return the lease the hold lives on */
    public long leaseId() {
        return leaseId;
    }

    /**
     * @return milliseconds, from when the view was taken, that no other client can hold it; empty
     *     when another may hold it already or it was released
     */
    public OptionalLong exclusiveForMs() {
        return exclusiveForMs < 0 ? OptionalLong.empty() : OptionalLong.of(exclusiveForMs);
    }

    /** @return whether it is safe to act as the holder now: held, and its exclusivity not in doubt */
    public boolean ok() {
        return ok;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Health)) {
            return false;
        }
        Health h = (Health) o;
        return state.equals(h.state) && Objects.equals(lostReason, h.lostReason) && name.equals(h.name) && fencingToken == h.fencingToken
                && leaseId == h.leaseId && exclusiveForMs == h.exclusiveForMs && ok == h.ok;
    }

    @Override
    public int hashCode() {
        return Objects.hash(state, lostReason, name, fencingToken, leaseId, exclusiveForMs, ok);
    }

    @Override
    public String toString() {
        return "Health{state=" + state + (lostReason == null ? "" : ", lostReason=" + lostReason) + ", name=" + name + ", fencingToken="
                + fencingToken + ", leaseId=" + leaseId + ", exclusiveForMs=" + exclusiveForMs + ", ok=" + ok + "}";
    }
}
