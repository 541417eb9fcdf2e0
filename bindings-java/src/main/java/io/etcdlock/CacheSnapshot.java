package io.etcdlock;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A {@link Cache}'s whole copy and the revision it is at, read together
 * ({@link Cache#snapshot()}). Immutable.
 */
public final class CacheSnapshot {
    private final long revision;
    private final Map<String, KeyValue> entries;

    private CacheSnapshot(long revision, Map<String, KeyValue> entries) {
        this.revision = revision;
        this.entries = entries;
    }

    /** Made by the native layer (bindings-java/src/cache.rs), the keys in etcd's (bytewise) order. */
    static CacheSnapshot of(long revision, KeyValue[] kvs) {
        Map<String, KeyValue> m = new LinkedHashMap<>();
        for (KeyValue kv : kvs) {
            m.put(kv.key(), kv);
        }
        return new CacheSnapshot(revision, Collections.unmodifiableMap(m));
    }

    /** @return the revision the copy was at: every change up to it is in, none after it */
    public long revision() {
        return revision;
    }

    /** @return every key of the copy, iterated in etcd's (bytewise) key order; unmodifiable */
    public Map<String, KeyValue> entries() {
        return entries;
    }

    /**
     * @param key a key
     * @return it, if the copy had it
     */
    public Optional<KeyValue> get(String key) {
        return Optional.ofNullable(entries.get(key));
    }

    /** @return how many keys the copy had */
    public int size() {
        return entries.size();
    }

    /** @return e.g. {@code CacheSnapshot@42[config/a @40 (3 bytes)]} */
    @Override
    public String toString() {
        return "CacheSnapshot@" + revision + entries.values();
    }
}
