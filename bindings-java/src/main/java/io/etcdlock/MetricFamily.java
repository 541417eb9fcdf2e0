package io.etcdlock;

import java.util.Map;

/**
 * One Prometheus family of a client's metrics ({@link EtcdLockClient#metricFamilies()}): what
 * {@link EtcdLockClient#metricsText()} writes under one {@code # TYPE} line, without the
 * {@code client} label (every series has it: {@link EtcdLockClient#name()}).
 *
 * @param name the family's name, {@code etcdlock_} prefixed ({@code etcdlock_lock_acquisitions_total})
 * @param help its help text
 * @param type {@code counter}, {@code gauge} or {@code histogram}
 * @param label the name of its one other label ({@code reason}, {@code stream}), or null
 * @param values a counter's or gauge's value under the key {@code ""}, or a labelled counter's
 *     values by label value (in the core's order); empty for a histogram
 * @param histogram a histogram's snapshot, or null
 */
public record MetricFamily(String name, String help, String type, String label, Map<String, Long> values, HistogramSnapshot histogram) {}
