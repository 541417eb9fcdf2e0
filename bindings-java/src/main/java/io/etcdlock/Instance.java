package io.etcdlock;

import java.nio.charset.StandardCharsets;

/** One registered instance of a service, as etcd has it (in {@link Instances}). Immutable. */
public final class Instance {
    private final String name;
    private final byte[] value;
    private final long lease;
    private final long modRevision;

    private Instance(String name, byte[] value, long lease, long modRevision) {
        this.name = name;
        this.value = value;
        this.lease = lease;
        this.modRevision = modRevision;
    }

    /** Called by the native layer. */
    static Instance of(byte[] name, byte[] value, long lease, long modRevision) {
        return new Instance(new String(name, StandardCharsets.UTF_8), value, lease, modRevision);
    }

    /** @return the instance's name: its key after {@code <service>/} */
    public String name() {
        return name;
    }

    /** @return what it registered (a copy) */
    public byte[] value() {
        return value.clone();
    }

    /** @return the value as UTF-8 text */
    public String valueString() {
        return new String(value, StandardCharsets.UTF_8);
    }

    /** @return the lease its key is on (0 for a key put without one, e.g. by hand) */
    public long lease() {
        return lease;
    }

    /** @return the revision of the registration's latest put */
    public long modRevision() {
        return modRevision;
    }

    @Override
    public String toString() {
        return name + "=" + valueString();
    }
}
