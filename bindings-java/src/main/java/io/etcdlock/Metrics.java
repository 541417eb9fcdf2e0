package io.etcdlock;

import java.util.Map;

/**
 * A client's metrics at one moment ({@link EtcdLockClient#metrics()}): the core's snapshot, the
 * same numbers as {@link EtcdLockClient#metricsText()}, field for field as the other bindings
 * give them (Python {@code client.metrics()}, Node {@code client.metrics()}). Counters count
 * since the client connected; gauges are read now.
 *
 * @param acquisitions acquires that took the lock
 * @param lockTimeouts acquires whose own timeout passed ({@link LockTimeoutException})
 * @param wouldBlock try-once acquires that found the lock busy
 * @param acquireFailures acquires that failed otherwise (cancelled, closed, unreachable...)
 * @param releases releases that deleted the lock key
 * @param releaseFailures releases that failed (not held any more, unreachable...)
 * @param losses held locks lost, by reason: {@code expired}, {@code revoked}, {@code key_deleted}, {@code closed}
 * @param lockWaitSeconds how long acquires that took the lock waited
 * @param lockHoldSeconds how long locks were held, until released or lost
 * @param requestsInFlight requests to etcd sent and not answered yet (now)
 * @param requestRetries request attempts after a request's first
 * @param streamReopens the keepalive and watch streams moved to the next member, by stream
 * @param memberSwitches times key-value requests left a member that failed, went silent or had no leader
 * @param leasesAlive leases kept alive now (the shared lock leases too)
 * @param watchesOpen watches open now (also one per waiting acquire and per held lock)
 * @param keepaliveRttSeconds from each lease keepalive sent to its answer
 * @param registrationsAlive service instances registered now by this client
 * @param reregistrations registrations registered again after a loss, by the loss's reason
 * @param discoverySnapshots instance sets returned by discoveries
 */
public record Metrics(long acquisitions, long lockTimeouts, long wouldBlock, long acquireFailures, long releases,
        long releaseFailures, Map<String, Long> losses, HistogramSnapshot lockWaitSeconds,
        HistogramSnapshot lockHoldSeconds, long requestsInFlight, long requestRetries, Map<String, Long> streamReopens,
        long memberSwitches, long leasesAlive, long watchesOpen, HistogramSnapshot keepaliveRttSeconds,
        long registrationsAlive, Map<String, Long> reregistrations, long discoverySnapshots) {
    /**
     * @param acquisitions as above
     * @param lockTimeouts as above
     * @param wouldBlock as above
     * @param acquireFailures as above
     * @param releases as above
     * @param releaseFailures as above
     * @param losses as above
     * @param lockWaitSeconds as above
     * @param lockHoldSeconds as above
     * @param requestsInFlight as above
     * @param requestRetries as above
     * @param streamReopens as above
     * @param memberSwitches as above
     * @param leasesAlive as above
     * @param watchesOpen as above
     * @param keepaliveRttSeconds as above
     * @param registrationsAlive as above
     * @param reregistrations as above
     * @param discoverySnapshots as above
     */
    public Metrics {
        losses = Map.copyOf(losses);
        streamReopens = Map.copyOf(streamReopens);
        reregistrations = Map.copyOf(reregistrations);
    }

    /** @return all losses, whatever the reason */
    public long lossesTotal() {
        return losses.values().stream().mapToLong(Long::longValue).sum();
    }
}
