package io.etcdlock.micrometer;

import io.etcdlock.EtcdLockClient;
import io.etcdlock.MetricFamily;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A client's metrics as Micrometer meters, read from the client whenever the registry reads them
 * (nothing is copied on a timer). Needs micrometer-core on the class path (an optional dependency
 * of etcdlock: nothing else loads this class).
 *
 * <pre>{@code
 * new EtcdLockMetrics(client).bindTo(registry);
 * }</pre>
 *
 * <p>One meter per series of {@link EtcdLockClient#metricsText()}, named so that Micrometer's
 * Prometheus naming gives back the text's names: a counter {@code etcdlock_lock_acquisitions_total}
 * is the {@link FunctionCounter} {@code etcdlock.lock.acquisitions}, a gauge {@code
 * etcdlock_leases_alive} the {@link Gauge} {@code etcdlock.leases.alive}, a labelled counter
 * one counter per label value with that tag ({@code reason}, {@code stream}), and a histogram
 * {@code etcdlock_lock_wait_seconds} the {@link FunctionTimer} {@code etcdlock.lock.wait} (its
 * count and total in seconds: Micrometer has no meter for buckets counted elsewhere; the text
 * has them). Every meter is tagged {@code client=}{@link EtcdLockClient#name()}, so that the
 * meters of two clients in one registry are distinct. The meters hold the client weakly, as
 * Micrometer's function meters do; once it is closed they read NaN.
 */
public final class EtcdLockMetrics implements MeterBinder {
    private final EtcdLockClient client;
    private final Tags tags;

    /**
     * @param client the client whose metrics to bind
     */
    public EtcdLockMetrics(EtcdLockClient client) {
        this(client, Tags.empty());
    }

    /**
     * @param client the client whose metrics to bind
     * @param tags more tags for every meter (besides {@code client})
     */
    public EtcdLockMetrics(EtcdLockClient client, Iterable<Tag> tags) {
        this.client = Objects.requireNonNull(client, "client");
        this.tags = Tags.of(Objects.requireNonNull(tags, "tags")).and("client", client.name());
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (MetricFamily f : client.metricFamilies()) {
            String family = f.name();
            switch (f.type()) {
                case "counter" -> {
                    String name = meterName(family, "_total");
                    for (String key : f.values().keySet()) {
                        Tags t = f.label() == null ? tags : tags.and(f.label(), key);
                        FunctionCounter.builder(name, client, c -> read(c, family, key)).description(f.help()).tags(t).register(registry);
                    }
                }
                case "gauge" -> Gauge.builder(meterName(family, ""), client, c -> read(c, family, ""))
                        .description(f.help()).tags(tags).strongReference(false).register(registry);
                case "histogram" -> FunctionTimer.builder(meterName(family, "_seconds"), client,
                                c -> (long) histogram(c, family, true), c -> histogram(c, family, false), TimeUnit.SECONDS)
                        .description(f.help()).tags(tags).register(registry);
                default -> throw new IllegalStateException("unknown metric type " + f.type() + " of " + family);
            }
        }
    }

    /** {@code etcdlock_lock_wait_seconds} less {@code suffix}, dotted: {@code etcdlock.lock.wait}. */
    private static String meterName(String family, String suffix) {
        String base = !suffix.isEmpty() && family.endsWith(suffix) ? family.substring(0, family.length() - suffix.length()) : family;
        return base.replace('_', '.');
    }

    private static MetricFamily family(EtcdLockClient c, String name) {
        List<MetricFamily> all = c.metricFamilies();
        for (MetricFamily f : all) {
            if (f.name().equals(name)) {
                return f;
            }
        }
        throw new IllegalStateException("no metric " + name);
    }

    /** A counter's or gauge's value now; NaN once the client is closed. */
    private static double read(EtcdLockClient c, String family, String key) {
        try {
            Map<String, Long> values = family(c, family).values();
            Long v = values.get(key);
            return v == null ? Double.NaN : v;
        } catch (RuntimeException closed) {
            return Double.NaN;
        }
    }

    /** A histogram's count (or its sum in seconds) now; NaN (count 0) once the client is closed. */
    private static double histogram(EtcdLockClient c, String family, boolean count) {
        try {
            var h = family(c, family).histogram();
            return count ? h.count() : h.sum();
        } catch (RuntimeException closed) {
            return count ? 0 : Double.NaN;
        }
    }
}
