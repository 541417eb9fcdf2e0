package io.etcdlock;

import java.util.Optional;
import java.util.OptionalLong;

/** One slot of a pool, as {@link EtcdLockClient#inspectPool} read it. Immutable. */
public final class SlotInfo {
    /** What a slot is doing. */
    public enum State {
        /** It can be handed out now. */
        FREE,
        /** Held: {@link #token()}, {@link #leaseId()}, {@link #acquisition()} and {@link #owner()} say by whom. */
        HELD,
        /** Its holder died; it rests the reuse delay, until its rest's lease ends ({@link #ttlSeconds()}). */
        RESTING,
        /** Its holder died and no request has seen it yet: it will rest first. */
        DEAD
    }

    private static final State[] STATES = State.values();

    private final String id;
    private final State state;
    private final long token;
    private final long leaseId;
    private final long ttlSeconds;
    private final long acquisition;
    private final String owner;

    private SlotInfo(String id, State state, long token, long leaseId, long ttlSeconds, long acquisition, String owner) {
        this.id = id;
        this.state = state;
        this.token = token;
        this.leaseId = leaseId;
        this.ttlSeconds = ttlSeconds;
        this.acquisition = acquisition;
        this.owner = owner;
    }

    /** Made by the native layer (bindings-java/src/pool.rs): {@code state} by ordinal, {@code ttl} -1 = none. */
    static SlotInfo of(String id, int state, long token, long leaseId, long ttl, long acquisition, String owner) {
        return new SlotInfo(id, STATES[state], token, leaseId, ttl, acquisition, owner);
    }

    /** @return the slot id */
    public String id() {
        return id;
    }

    /** @return what it is doing */
    public State state() {
        return state;
    }

    /** @return a held slot's fencing token (its key's create revision); 0 otherwise */
    public long token() {
        return token;
    }

    /** @return the holder's lease (held) or the rest's lease (resting); 0 otherwise */
    public long leaseId() {
        return leaseId;
    }

    /** @return the seconds that lease has left on the server, if there is one */
    public OptionalLong ttlSeconds() {
        return ttlSeconds < 0 ? OptionalLong.empty() : OptionalLong.of(ttlSeconds);
    }

    /** @return a held slot's acquisition fencing token; 0 otherwise */
    public long acquisition() {
        return acquisition;
    }

    /** @return the owner a held slot was acquired with, if any */
    public Optional<String> owner() {
        return owner == null || owner.isEmpty() ? Optional.empty() : Optional.of(owner);
    }

    @Override
    public String toString() {
        return "SlotInfo{" + id + " " + state + (state == State.HELD ? ", token=" + token + ", owner=" + owner : "") + "}";
    }
}
