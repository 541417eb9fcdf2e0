package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** One key as a {@link Cache}'s copy has it. Immutable (the byte arrays are copied out). */
public final class KeyValue {
    private final byte[] key;
    private final byte[] value;
    private final long createRevision;
    private final long modRevision;
    private final long version;
    private final long lease;

    private KeyValue(byte[] key, byte[] value, long createRevision, long modRevision, long version, long lease) {
        this.key = key;
        this.value = value;
        this.createRevision = createRevision;
        this.modRevision = modRevision;
        this.version = version;
        this.lease = lease;
    }

    /** Made by the native layer (bindings-java/src/cache.rs). */
    static KeyValue of(byte[] key, byte[] value, long createRevision, long modRevision, long version, long lease) {
        return new KeyValue(key, value, createRevision, modRevision, version, lease);
    }

    /** @return the key, decoded as UTF-8 (see {@link #keyBytes()} for other keys) */
    public String key() {
        return new String(key, StandardCharsets.UTF_8);
    }

    /** @return the key's bytes (a copy) */
    public byte[] keyBytes() {
        return key.clone();
    }

    /** @return the value (a copy) */
    public byte[] value() {
        return value.clone();
    }

    /** @return the value as UTF-8 text */
    public String valueString() {
        return new String(value, StandardCharsets.UTF_8);
    }

    /** @return the revision of the put that created the key (since it was last deleted) */
    public long createRevision() {
        return createRevision;
    }

    /** @return the revision of its latest put */
    public long modRevision() {
        return modRevision;
    }

    /** @return how many puts since it was created (1 for the first) */
    public long version() {
        return version;
    }

    /** @return the lease the key is on, 0 for none */
    public long lease() {
        return lease;
    }

    /** @return e.g. {@code config/a @42 (3 bytes)}; values are not shown */
    @Override
    public String toString() {
        return key() + " @" + modRevision + " (" + value.length + " bytes)";
    }

    /** Equal when key, value, revisions, version and lease are. */
    @Override
    public boolean equals(Object o) {
        if (!(o instanceof KeyValue)) {
            return false;
        }
        KeyValue kv = (KeyValue) o;
        return createRevision == kv.createRevision && modRevision == kv.modRevision && version == kv.version
                && lease == kv.lease && Arrays.equals(key, kv.key) && Arrays.equals(value, kv.value);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(modRevision) * 31 + Arrays.hashCode(key);
    }
}
