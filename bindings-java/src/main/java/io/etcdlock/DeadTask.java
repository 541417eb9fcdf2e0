package io.etcdlock;

import java.util.Arrays;
import java.util.Objects;

/** An item in a task queue's dead letters: past its last delivery ({@link TaskQueue#dead}). Immutable. */
public final class DeadTask {
    private final String id;
    private final byte[] payload;
    private final int attempts;
    private final int priority;

    private DeadTask(String id, byte[] payload, int attempts, int priority) {
        this.id = id;
        this.payload = payload;
        this.attempts = attempts;
        this.priority = priority;
    }

    /** Called by the native layer. */
    static DeadTask of(String id, byte[] payload, int attempts, int priority) {
        return new DeadTask(id, payload, attempts, priority);
    }

    /** @return its id */
    public String id() {
        return id;
    }

    /** @return its payload (a copy) */
    public byte[] payload() {
        return payload.clone();
    }

    /** @return the deliveries it had */
    public int attempts() {
        return attempts;
    }

    /** @return its priority */
    public int priority() {
        return priority;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof DeadTask)) {
            return false;
        }
        DeadTask d = (DeadTask) o;
        return id.equals(d.id) && Arrays.equals(payload, d.payload) && attempts == d.attempts && priority == d.priority;
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, Arrays.hashCode(payload), attempts, priority);
    }

    @Override
    public String toString() {
        return "DeadTask{" + id + ", " + payload.length + " bytes, attempts=" + attempts + ", priority=" + priority + "}";
    }
}
