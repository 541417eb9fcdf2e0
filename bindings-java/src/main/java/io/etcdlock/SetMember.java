package io.etcdlock;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * One name of a {@link LockSet} and how the set holds it: alone ({@link #exclusive}, as a
 * {@link DistributedLock}), as a read-write lock's reader or writer ({@link #read},
 * {@link #write}), or as one of a semaphore's permits ({@link #permit}). Immutable.
 *
 * <pre>{@code
 * client.lockSet(List.of(SetMember.read("cfg"), SetMember.write("jobs/a"), SetMember.permit("gpus", 4)), options);
 * client.lockSet(SetMember.names("acct/1", "acct/2"), options);   // exclusive members
 * }</pre>
 */
public final class SetMember {
    /** How a set holds a name. */
    public enum Mode {
        /** Alone, as {@link EtcdLockClient#lock}. */
        EXCLUSIVE,
        /** As a read-write lock's reader (shared with other readers). */
        READ,
        /** As a read-write lock's writer. */
        WRITE,
        /** One of {@link SetMember#permits()} permits of a semaphore. */
        PERMIT
    }

    private final String name;
    private final Mode mode;
    private final int permits;

    private SetMember(String name, Mode mode, int permits) {
        this.name = Objects.requireNonNull(name, "name");
        this.mode = mode;
        this.permits = permits;
    }

    /**
     * @param name the lock name
     * @return the name, held alone
     */
    public static SetMember exclusive(String name) {
        return new SetMember(name, Mode.EXCLUSIVE, 0);
    }

    /**
     * @param name the read-write lock's name
     * @return its read, shared with other readers
     */
    public static SetMember read(String name) {
        return new SetMember(name, Mode.READ, 0);
    }

    /**
     * @param name the read-write lock's name
     * @return its write
     */
    public static SetMember write(String name) {
        return new SetMember(name, Mode.WRITE, 0);
    }

    /**
     * @param name the semaphore's name
     * @param permits its number of permits, 1 to 1024 (every participant gives the same)
     * @return one of its permits
     * @throws IllegalArgumentException for permits out of bounds
     */
    public static SetMember permit(String name, int permits) {
        if (permits < 1 || permits > 1024) {
            throw new IllegalArgumentException("permits must be 1 to 1024, got " + permits);
        }
        return new SetMember(name, Mode.PERMIT, permits);
    }

    /**
     * @param names lock names
     * @return each held alone ({@link #exclusive}), in that order
     */
    public static List<SetMember> names(String... names) {
        List<SetMember> out = new ArrayList<>();
        for (String n : Objects.requireNonNull(names, "names")) {
            out.add(exclusive(n));
        }
        return Collections.unmodifiableList(out);
    }

    /** @return the lock name */
    public String name() {
        return name;
    }

    /** @return how the set holds it */
    public Mode mode() {
        return mode;
    }

    /** @return the semaphore's permits for {@link Mode#PERMIT}; 0 otherwise */
    public int permits() {
        return permits;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SetMember)) {
            return false;
        }
        SetMember m = (SetMember) o;
        return name.equals(m.name) && mode == m.mode && permits == m.permits;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, mode, permits);
    }

    @Override
    public String toString() {
        return mode == Mode.PERMIT ? "permit(" + name + ", " + permits + ")" : mode.name().toLowerCase(java.util.Locale.ROOT) + "(" + name + ")";
    }
}
