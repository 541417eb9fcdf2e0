package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;

/**
 * One change of a {@link Cache}'s copy ({@link Cache#events()}): a put or a delete of one key, or
 * the {@link Type#RESYNCED} marker. Immutable (the byte arrays are copied out).
 */
public final class CacheEvent {
    /** What changed. */
    public enum Type {
        /** The key was written (created or changed). */
        PUT,
        /** The key was deleted. */
        DELETE,
        /**
         * The copy was read again: after a compaction of the history it needed (the events just
         * before this one are the differences it found: a key deleted and created again as a
         * delete then a put), or because this reader fell more than 4096 events behind (what it
         * missed is in the copy, not in events: read {@link Cache#snapshot()} again). No key.
         */
        RESYNCED
    }

    private static final Type[] TYPES = Type.values();

    private final Type type;
    private final byte[] key;
    private final byte[] value;
    private final byte[] prevValue;
    private final long revision;

    private CacheEvent(Type type, byte[] key, byte[] value, byte[] prevValue, long revision) {
        this.type = type;
        this.key = key;
        this.value = value;
        this.prevValue = prevValue;
        this.revision = revision;
    }

    /** Made by the native layer (bindings-java/src/cache.rs): {@code type} is the {@link Type}'s ordinal. */
    static CacheEvent of(int type, byte[] key, byte[] value, byte[] prevValue, long revision) {
        return new CacheEvent(TYPES[type], key, value, prevValue, revision);
    }

    /** @return {@link Type#PUT}, {@link Type#DELETE} or {@link Type#RESYNCED} */
    public Type type() {
        return type;
    }

    /** @return the key, decoded as UTF-8 (empty for {@link Type#RESYNCED}) */
    public String key() {
        return new String(key, StandardCharsets.UTF_8);
    }

    /** @return the key's bytes (a copy) */
    public byte[] keyBytes() {
        return key.clone();
    }

    /** @return the new value (a copy); empty for a delete and for {@link Type#RESYNCED} */
    public byte[] value() {
        return value.clone();
    }

    /** @return the new value as UTF-8 text */
    public String valueString() {
        return new String(value, StandardCharsets.UTF_8);
    }

    /** @return the value the copy had before this change (a copy), if it had the key */
    public Optional<byte[]> prevValue() {
        return prevValue == null ? Optional.empty() : Optional.of(prevValue.clone());
    }

    /**
     * @return the revision of the change (of the read, for the changes a resync found and the
     *     marker); never smaller than the event's before
     */
    public long revision() {
        return revision;
    }

    /** @return e.g. {@code PUT config/a @42 (3 bytes)}; values are not shown */
    @Override
    public String toString() {
        return type + (type == Type.RESYNCED ? "" : " " + key()) + " @" + revision + " (" + value.length + " bytes)";
    }

    /** Equal when type, key, value, previous value and revision are. */
    @Override
    public boolean equals(Object o) {
        if (!(o instanceof CacheEvent)) {
            return false;
        }
        CacheEvent e = (CacheEvent) o;
        return type == e.type && revision == e.revision && Arrays.equals(key, e.key) && Arrays.equals(value, e.value)
                && Arrays.equals(prevValue, e.prevValue);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(revision) * 31 + Arrays.hashCode(key);
    }
}
