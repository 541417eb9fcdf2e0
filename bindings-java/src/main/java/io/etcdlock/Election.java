package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The election {@code name} (from {@link EtcdLockClient#election}): campaign, read the leader,
 * observe it. Shares its keys with etcd's Go {@code concurrency.Election} and
 * {@code etcdctl elect}. A candidate is a queue key of the fair lock, its proposal as the value;
 * candidates lead in arrival order. Creating it sends nothing. Thread-safe.
 *
 * <pre>{@code
 * Election election = client.election("svc/leader", Duration.ofSeconds(10));
 * try (Leadership leading = election.campaign("node-1", Duration.ofSeconds(30))) {
 *     leading.proclaim("node-1 ready");
 *     // ... lead; leading.fencingToken() for the resources it writes
 * }                                                   // resigns
 * }</pre>
 */
public final class Election {
    private final EtcdLockClient client;
    private final String name;
    private final LockOptions options;

    Election(EtcdLockClient client, String name, LockOptions options) {
        this.client = client;
        this.name = name;
        this.options = options;
    }

    /** @return the election's name (candidates' keys are {@code <name>/<lease hex>}) */
    public String name() {
        return name;
    }

    /**
     * Waits to lead, at most {@code timeout}, proposing {@code value}.
     *
     * @param value the proposal (at most 4096 bytes): what {@link #leader()} shows
     * @param timeout how long to wait; {@link Duration#ZERO} leads only if nobody leads or campaigns
     * @return the leadership
     * @throws LockTimeoutException when the timeout passes (the candidate's key is gone)
     * @throws EtcdLockException kind {@code WOULD_BLOCK} when a zero timeout finds another candidate
     * @throws LockLostException as soon as this candidate's lease or key is gone while it waits
     * @throws InterruptedException when interrupted while waiting (the candidate's key is gone)
     */
    public Leadership campaign(byte[] value, Duration timeout) throws InterruptedException {
        return new Leadership(candidate(value).acquire(timeout));
    }

    /**
     * {@link #campaign(byte[], Duration)} with UTF-8 text.
     *
     * @param value the proposal
     * @param timeout how long to wait
     * @return the leadership
     * @throws InterruptedException when interrupted while waiting (the candidate's key is gone)
     */
    public Leadership campaign(String value, Duration timeout) throws InterruptedException {
        return campaign(text(value), timeout);
    }

    /**
     * Waits to lead without a time limit.
     *
     * @param value the proposal (at most 4096 bytes)
     * @return the leadership
     * @throws InterruptedException when interrupted while waiting (the candidate's key is gone)
     */
    public Leadership campaign(byte[] value) throws InterruptedException {
        return new Leadership(candidate(value).acquire());
    }

    /**
     * Waits to lead without blocking a thread. Cancelling the future (or {@code orTimeout})
     * leaves the queue; a leadership won just before the cancel is resigned. Completed on an
     * etcdlock callback thread.
     *
     * @param value the proposal (at most 4096 bytes)
     * @param timeout how long to wait; {@link Duration#ZERO} tries once
     * @return the leadership, or {@link LockTimeoutException} (etc.) as the exceptional outcome
     */
    public CompletableFuture<Leadership> campaignAsync(byte[] value, Duration timeout) {
        return new CallFuture<>(candidate(value).start(DistributedLock.millis(timeout)), Leadership::new);
    }

    /**
     * {@link #campaignAsync(byte[], Duration)} with UTF-8 text.
     *
     * @param value the proposal
     * @param timeout how long to wait
     * @return the leadership, or the failure as the exceptional outcome
     */
    public CompletableFuture<Leadership> campaignAsync(String value, Duration timeout) {
        return campaignAsync(text(value), timeout);
    }

    /**
     * The current leader (one read).
     *
     * @return the leader, or empty when nobody campaigns
     */
    public Optional<Leader> leader() {
        return client.handle().with(c -> Native.electionLeader(c, name));
    }

    /**
     * Follows the leader: an {@link ElectionObserver} whose first item is the current leader (or
     * empty), then each change. Sends nothing until read.
     *
     * @return the observer; close it
     */
    public ElectionObserver observe() {
        long o = client.handle().with(c -> Native.followOpen(c, name, 0));
        return new ElectionObserver(new NativeHandle(o, Native::followFree, "observer"), name);
    }

    private DistributedLock candidate(byte[] value) {
        Objects.requireNonNull(value, "value");
        return new DistributedLock(client, name, options.value(value), DistributedLock.Kind.CANDIDATE);
    }

    private static byte[] text(String value) {
        return Objects.requireNonNull(value, "value").getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "Election{" + name + ", ttl=" + options.ttlSeconds + "s}";
    }
}
