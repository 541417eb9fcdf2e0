package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;

/**
 * One change seen by a {@link Watch}: a put or a delete of one key, at one revision. Immutable
 * (the byte arrays are copied out).
 */
public final class WatchEvent {
    /** What happened to the key. */
    public enum Type {
        /** The key was written (created or changed). */
        PUT,
        /** The key was deleted (its lease ended, or someone deleted it). */
        DELETE
    }

    private final Type type;
    private final byte[] key;
    private final byte[] value;
    private final long revision;
    private final long createRevision;
    private final long version;
    private final long lease;
    private final byte[] prevValue;

    private WatchEvent(Type type, byte[] key, byte[] value, long revision, long createRevision, long version, long lease,
            byte[] prevValue) {
        this.type = type;
        this.key = key;
        this.value = value;
        this.revision = revision;
        this.createRevision = createRevision;
        this.version = version;
        this.lease = lease;
        this.prevValue = prevValue;
    }

    /** Made by the native layer (bindings-java/src/watch.rs). */
    static WatchEvent of(boolean delete, byte[] key, byte[] value, long revision, long createRevision, long version,
            long lease, byte[] prevValue) {
        return new WatchEvent(delete ? Type.DELETE : Type.PUT, key, value, revision, createRevision, version, lease,
                prevValue);
    }

    /** @return {@link Type#PUT} or {@link Type#DELETE} */
    public Type type() {
        return type;
    }

    /** @return the key, decoded as UTF-8 (see {@link #keyBytes()} for other keys) */
    public String key() {
        return new String(key, StandardCharsets.UTF_8);
    }

    /** @return the key's bytes (a copy) */
    public byte[] keyBytes() {
        return key.clone();
    }

    /** @return the value written (a copy); empty for a delete */
    public byte[] value() {
        return value.clone();
    }

    /** @return the revision of this change; strictly increasing along a watch */
    public long revision() {
        return revision;
    }

    /** @return the revision the key was created at (0 for a delete) */
    public long createRevision() {
        return createRevision;
    }

    /** @return how many times the key was written since it was created (0 for a delete) */
    public long version() {
        return version;
    }

    /** @return the lease the key is attached to, 0 for none */
    public long lease() {
        return lease;
    }

    /**
     * @return the value before this change (a copy), when the watch asked for it
     *     ({@link WatchOptions#prevKv(boolean)}) and the key had one
     */
    public Optional<byte[]> prevValue() {
        return prevValue == null ? Optional.empty() : Optional.of(prevValue.clone());
    }

    /** @return e.g. {@code PUT jobs/1 @42 (3 bytes)}; values are not shown */
    @Override
    public String toString() {
        return type + " " + key() + " @" + revision + " (" + value.length + " bytes)";
    }

    /** Equal when type, key, value, revisions, lease and previous value are. */
    @Override
    public boolean equals(Object o) {
        if (!(o instanceof WatchEvent)) {
            return false;
        }
        WatchEvent e = (WatchEvent) o;
        return type == e.type && revision == e.revision && createRevision == e.createRevision && version == e.version
                && lease == e.lease && Arrays.equals(key, e.key) && Arrays.equals(value, e.value)
                && Arrays.equals(prevValue, e.prevValue);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(revision) * 31 + Arrays.hashCode(key);
    }
}
