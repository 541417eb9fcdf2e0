package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * An instance of a service kept registered (from {@link EtcdLockClient#register}): its key
 * {@code <service>/<instance>} on a lease of its own, kept alive, and registered again on a new
 * lease whenever it is lost (expired, revoked, deleted), until {@link #close()}. Thread-safe.
 * Callbacks see the events from when they are added, in order, on an etcdlock callback thread.
 */
public final class Registration implements AutoCloseable {
    private final NativeHandle handle;
    private final RegistrationSink sink;
    private final String key;

    /** Registers (blocking until etcd has it); bad arguments throw with nothing sent. */
    static Registration start(NativeHandle client, String service, String instance, byte[] value, RegisterOptions options) {
        Objects.requireNonNull(service, "service");
        Objects.requireNonNull(instance, "instance");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(options, "options");
        RegistrationSink sink = new RegistrationSink();
        Tracing.Span span = Tracing.begin(Tracing.REGISTER, service + "/" + instance);
        if (span == null) {
            long r = client.with(c -> Native.register(c, service, instance, value, options.ttlSeconds, options.replace, sink));
            return new Registration(new NativeHandle(r, Native::registrationFree, "registration"), sink);
        }
        try {
            long r = client.with(c -> Native.register(c, service, instance, value, options.ttlSeconds, options.replace, sink));
            Registration reg = new Registration(new NativeHandle(r, Native::registrationFree, "registration"), sink);
            Tracing.ok(span, "registered");
            return reg;
        } catch (RuntimeException e) {
            Tracing.failed(span, e, false);
            throw e;
        }
    }

    private Registration(NativeHandle handle, RegistrationSink sink) {
        this.handle = handle;
        this.sink = sink;
        this.key = new String(handle.with(Native::registrationKey), StandardCharsets.UTF_8);
    }

    /** @return {@code <service>/<instance>} */
    public String key() {
        return key;
    }

    /** @return the lease the key is on now; 0 while being registered again, and once closed */
    public long leaseId() {
        try {
            return handle.with(Native::registrationLeaseId);
        } catch (ClosedException e) {
            return 0;
        }
    }

    /** @return whether the instance is registered now, as far as this process knows */
    public boolean isRegistered() {
        try {
            return handle.with(Native::registrationIsRegistered);
        } catch (ClosedException e) {
            return false;
        }
    }

    /**
     * Replaces the registered value (kept for later registrations too).
     *
     * @param value the new value (at most 4096 bytes)
     * @return the revision of the write
     * @throws NotHeldException while being registered again (the value is kept and registered
     *     then), or once taken over
     */
    public long update(byte[] value) {
        Objects.requireNonNull(value, "value");
        return handle.with(r -> Native.registrationUpdate(r, value));
    }

    /**
     * {@link #update(byte[])} with UTF-8 text.
     *
     * @param value the new value
     * @return the revision of the write
     */
    public long update(String value) {
        return update(Objects.requireNonNull(value, "value").getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Calls {@code callback} with the reason ({@code expired}, {@code revoked},
     * {@code key_deleted}) each time the instance stops being registered; it is registered again
     * at once on a new lease ({@link #onRestored}).
     *
     * @param callback called with the reason, each time
     */
    public void onLost(Consumer<String> callback) {
        sink.onLost(callback);
    }

    /**
     * Calls {@code callback} with the new lease's ID each time the instance is registered again
     * after a loss.
     *
     * @param callback called with the lease ID, each time
     */
    public void onRestored(LongConsumer callback) {
        sink.onRestored(callback);
    }

    /**
     * Calls {@code callback} once another registrant took the name over (registered with
     * {@link RegisterOptions#replace}): the registration has ended.
     *
     * @param callback called once
     */
    public void onTakenOver(Runnable callback) {
        sink.onTakenOver(callback);
    }

    /**
     * Deregisters: the key is deleted and the lease revoked when this returns (if etcd cannot be
     * reached, the lease expires). Idempotent.
     */
    @Override
    public void close() {
        if (handle.isClosed()) {
            return;
        }
        try {
            handle.run(Native::registrationClose);
        } catch (ClosedException alreadyClosed) {
            // Closed by another thread, or the client was closed (its leases revoked).
        } finally {
            handle.close();
        }
    }

    @Override
    public String toString() {
        return "Registration{" + key + (handle.isClosed() ? ", closed" : "") + "}";
    }
}
