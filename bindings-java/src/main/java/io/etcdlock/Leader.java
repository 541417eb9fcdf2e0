package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * An election's leader as etcd has it: the candidate with the lowest create revision (from
 * {@link Election#leader()} and {@link ElectionObserver}). Immutable.
 */
public final class Leader {
    private final byte[] value;
    private final String key;
    private final long revision;
    private final long lease;

    private Leader(byte[] value, String key, long revision, long lease) {
        this.value = value;
        this.key = key;
        this.revision = revision;
        this.lease = lease;
    }

    /** Called by the native layer. */
    static Optional<Leader> of(byte[] value, byte[] key, long revision, long lease) {
        return Optional.of(new Leader(value, new String(key, StandardCharsets.UTF_8), revision, lease));
    }

    /** Called by the native layer: nobody leads. */
    static Optional<Leader> none() {
        return Optional.empty();
    }

    /** @return the proposal: the value given to {@code campaign} or the last {@code proclaim} (a copy) */
    public byte[] value() {
        return value.clone();
    }

    /** @return the value as UTF-8 text */
    public String valueString() {
        return new String(value, StandardCharsets.UTF_8);
    }

    /** @return the leader's key, {@code <name>/<lease hex>} */
    public String key() {
        return key;
    }

    /** @return the key's create revision: the leader's fencing token, greater than every earlier leader's */
    public long revision() {
        return revision;
    }

    /** @return the lease the key is bound to */
    public long lease() {
        return lease;
    }

    /** @return e.g. {@code Leader{svc/leader/694d77aa5c1f3a04, revision=42, value=node-1}} */
    @Override
    public String toString() {
        return "Leader{" + key + ", revision=" + revision + ", value=" + valueString() + "}";
    }
}
