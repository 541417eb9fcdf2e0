package io.etcdlock;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Receives the core's metric entries by name from the native layer (bindings-java/src/inspect.rs,
 * one call per value) and builds the {@link Metrics} record. A name the core has and the record
 * lacks is ignored; one the record has and the core did not send is a failure (never a silent 0).
 */
final class MetricsCollector {
    private final Map<String, Long> numbers = new HashMap<>();
    private final Map<String, Map<String, Long>> labeled = new HashMap<>();
    private final Map<String, HistogramSnapshot> histograms = new HashMap<>();
    /** Each entry's Prometheus name, help, type and label name, in the core's order. */
    private final Map<String, String[]> described = new LinkedHashMap<>();

    void describe(String name, String prometheus, String help, String type, String label) {
        described.put(name, new String[] {prometheus, help, type, label});
    }

    void counter(String name, long n) {
        numbers.put(name, n);
    }

    void gauge(String name, long n) {
        numbers.put(name, n);
    }

    void labeled(String name, String label, long n) {
        labeled.computeIfAbsent(name, k -> new LinkedHashMap<>()).put(label, n);
    }

    void histogram(String name, long count, double sum, double[] bounds, long[] counts) {
        List<HistogramSnapshot.Bucket> buckets = new ArrayList<>(bounds.length);
        for (int i = 0; i < bounds.length; i++) {
            buckets.add(new HistogramSnapshot.Bucket(bounds[i], counts[i]));
        }
        histograms.put(name, new HistogramSnapshot(count, sum, buckets));
    }

    /** The entries as Prometheus families, in the core's order. */
    List<MetricFamily> families() {
        List<MetricFamily> out = new ArrayList<>(described.size());
        for (Map.Entry<String, String[]> e : described.entrySet()) {
            String name = e.getKey();
            String[] d = e.getValue();
            Map<String, Long> values = labeled.containsKey(name) ? java.util.Collections.unmodifiableMap(labeled.get(name))
                    : numbers.containsKey(name) ? Map.of("", numbers.get(name)) : Map.of();
            out.add(new MetricFamily(d[0], d[1], d[2], d[3], values, histograms.get(name)));
        }
        return java.util.Collections.unmodifiableList(out);
    }

    Metrics build() {
        return new Metrics(n("acquisitions"), n("lock_timeouts"), n("would_block"), n("acquire_failures"),
                n("releases"), n("release_failures"), l("losses"), h("lock_wait_seconds"), h("lock_hold_seconds"),
                n("requests_in_flight"), n("request_retries"), l("stream_reopens"), n("member_switches"),
                n("leases_alive"), n("watches_open"), h("keepalive_rtt_seconds"), n("registrations_alive"),
                l("reregistrations"), n("discovery_snapshots"));
    }

    private long n(String name) {
        return get(numbers, name);
    }

    private Map<String, Long> l(String name) {
        return get(labeled, name);
    }

    private HistogramSnapshot h(String name) {
        return get(histograms, name);
    }

    private static <T> T get(Map<String, T> m, String name) {
        T v = m.get(name);
        if (v == null) {
            throw new EtcdLockException("INTERNAL", "the core sent no metric " + name);
        }
        return v;
    }
}
