package io.etcdlock;

import java.time.Duration;
import java.util.Objects;

/**
 * How {@link EtcdLockClient#register} registers: the TTL of the registration's own lease (how
 * long the instance stays listed after the process stops; default 10 s) and whether to take the
 * name over from another registrant. Immutable.
 */
public final class RegisterOptions {
    final long ttlSeconds;
    final boolean replace;

    private RegisterOptions(long ttlSeconds, boolean replace) {
        this.ttlSeconds = ttlSeconds;
        this.replace = replace;
    }

    /** @return a 10 s TTL, no takeover */
    public static RegisterOptions defaults() {
        return new RegisterOptions(10, false);
    }

    /**
     * @param ttl the lease TTL, rounded up to whole seconds; positive
     * @return options with that TTL, no takeover
     * @throws IllegalArgumentException if {@code ttl} is zero or negative
     */
    public static RegisterOptions ttl(Duration ttl) {
        return new RegisterOptions(LockOptions.ttl(Objects.requireNonNull(ttl, "ttl")).ttlSeconds(), false);
    }

    /**
     * @param replace take the name over if another registrant holds it (otherwise that is
     *     {@code WOULD_BLOCK}); the other registration then ends (taken over)
     * @return options with this setting and the same TTL
     */
    public RegisterOptions replace(boolean replace) {
        return new RegisterOptions(ttlSeconds, replace);
    }

    @Override
    public String toString() {
        return "RegisterOptions{ttl=" + ttlSeconds + "s, replace=" + replace + "}";
    }
}
