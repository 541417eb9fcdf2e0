package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * An acquisition, as a database or another service checks it: the lock's name, the acquisition's
 * fencing token and the identity of the etcd cluster that issued it (revisions of two clusters
 * are not comparable). From {@link LockGuard#fence()}; {@link #toString()} is its stable string
 * form, {@code etcdlock-fence.v1.<q|k>.<cluster hex>.<token>.<name hex>}, the one every etcdlock
 * binding and the command line ({@code ETCDLOCK_FENCE}) share, short enough for a request header;
 * {@link #parse} reads it back. {@link EtcdLockClient#checkFence} asks etcd whether it still
 * holds (advisory); {@code io.etcdlock.fencing.JdbcFence} makes a database refuse a stale one.
 * Immutable.
 */
public final class Fence {
    private static final String PREFIX = "etcdlock-fence.v1.";

    /** What holds, for {@link EtcdLockClient#checkFence} to look for. */
    public enum Kind {
        /**
         * A key of the lock's queue ({@code <name>/...}) created at the token, with no older
         * waiter: a lock, a write lock, a leadership, a task's claim. (A semaphore permit or a
         * read lock has a fence of this kind too, which is checked as the queue's head only: they
         * are not exclusive.) Written {@code q}.
         */
        QUEUE("q"),
        /** The key {@code <name>} itself, created at the token: a pool's slot. Written {@code k}. */
        KEY("k");

        private final String code;

        Kind(String code) {
            this.code = code;
        }

        /** @return its letter in the string form, {@code q} or {@code k} */
        public String code() {
            return code;
        }
    }

    private final Kind kind;
    private final byte[] name;
    private final long token;
    private final long cluster;

    /**
     * @param kind what holds
     * @param name the lock's name (for {@link Kind#KEY}, the key); not empty; copied
     * @param token the acquisition's fencing token, positive
     * @param cluster the etcd cluster's ID, an unsigned 64-bit number
     * @throws IllegalArgumentException if the name is empty or the token not positive
     */
    public Fence(Kind kind, byte[] name, long token, long cluster) {
        this.kind = Objects.requireNonNull(kind, "kind");
        this.name = Objects.requireNonNull(name, "name").clone();
        if (this.name.length == 0) {
            throw new IllegalArgumentException("a fence's name must not be empty");
        }
        if (token <= 0) {
            throw new IllegalArgumentException("a fence's token must be positive, got " + token);
        }
        this.token = token;
        this.cluster = cluster;
    }

    /**
     * Reads a fence's string form.
     *
     * @param s {@code etcdlock-fence.v1.<q|k>.<cluster hex>.<token>.<name hex>}
     * @return the fence
     * @throws IllegalArgumentException if {@code s} is not a fence
     */
    public static Fence parse(String s) {
        Objects.requireNonNull(s, "fence");
        IllegalArgumentException bad = new IllegalArgumentException(
                "not an etcdlock fence: \"" + (s.length() > 80 ? s.substring(0, 80) : s) + "\"");
        if (!s.startsWith(PREFIX)) {
            throw bad;
        }
        // As Rust's splitn(4, '.'): the name keeps whatever follows (and is then not hex).
        String[] parts = s.substring(PREFIX.length()).split("\\.", 4);
        if (parts.length != 4) {
            throw bad;
        }
        Kind kind;
        if (parts[0].equals("q")) {
            kind = Kind.QUEUE;
        } else if (parts[0].equals("k")) {
            kind = Kind.KEY;
        } else {
            throw bad;
        }
        // Hex digits only (1 to 16); the token in canonical decimal (no sign, no leading zero).
        if (!parts[1].matches("[0-9a-fA-F]{1,16}") || !parts[2].matches("[1-9][0-9]{0,18}")) {
            throw bad;
        }
        long cluster = Long.parseUnsignedLong(parts[1], 16);
        long token;
        try {
            token = Long.parseLong(parts[2]);
        } catch (NumberFormatException e) {
            throw bad;
        }
        String hex = parts[3];
        if (hex.isEmpty() || hex.length() % 2 != 0 || !hex.matches("[0-9a-fA-F]+")) {
            throw bad;
        }
        byte[] name = new byte[hex.length() / 2];
        for (int i = 0; i < name.length; i++) {
            name[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new Fence(kind, name, token, cluster);
    }

    /** @return what holds */
    public Kind kind() {
        return kind;
    }

    /** @return the lock's name (for {@link Kind#KEY}, the key), a copy */
    public byte[] name() {
        return name.clone();
    }

    /** @return the acquisition's fencing token: larger for every later acquisition of the name */
    public long token() {
        return token;
    }

    /** @return the etcd cluster's ID, an unsigned 64-bit number */
    public long cluster() {
        return cluster;
    }

    /** @return the cluster's ID in lower-case hex, as the string form (and a database's mark) has it */
    public String clusterHex() {
        return Long.toHexString(cluster);
    }

    /** @return the default resource a database's mark is kept for: the lock's name, as UTF-8 */
    public String resource() {
        return new String(name, StandardCharsets.UTF_8);
    }

    /** @return the string form, {@code etcdlock-fence.v1.<q|k>.<cluster hex>.<token>.<name hex>} */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(PREFIX.length() + 48 + 2 * name.length);
        b.append(PREFIX).append(kind.code).append('.').append(clusterHex()).append('.').append(token).append('.');
        for (byte x : name) {
            b.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        }
        return b.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Fence f && f.kind == kind && f.token == token && f.cluster == cluster && Arrays.equals(f.name, name);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, token, cluster, Arrays.hashCode(name));
    }
}
