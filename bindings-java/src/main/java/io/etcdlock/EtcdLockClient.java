package io.etcdlock;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A connection to an etcd cluster: locks, leases and key-value calls. Thread-safe; one client
 * per process is usually enough (its locks of one TTL share one lease). {@link #close()} revokes
 * its leases (so its locks are freed at once) and fails its pending calls with
 * {@link ClosedException}. A client nobody closed is closed when it is garbage collected, and
 * every client when the JVM exits.
 *
 * <pre>{@code
 * try (EtcdLockClient client = EtcdLockClient.connect(ClientOptions.builder()
 *         .endpoints("http://127.0.0.1:2379").timeout(Duration.ofSeconds(5)).build())) {
 *     DistributedLock lock = client.lock("orders", LockOptions.ttl(Duration.ofSeconds(10)));
 *     try (LockGuard held = lock.acquire(Duration.ofSeconds(5))) {
 *         held.putIfHeld("orders-state/last", "42".getBytes(StandardCharsets.UTF_8));
 *     }
 * }
 * }</pre>
 */
public final class EtcdLockClient implements AutoCloseable {
    private final NativeHandle handle;

    private EtcdLockClient(NativeHandle handle) {
        this.handle = handle;
    }

    /**
     * Connects and checks that the cluster answers within the connect timeout.
     *
     * @param options endpoints, timeouts, credentials, TLS
     * @return the client
     * @throws UnavailableException if no member answered in time (or TLS failed)
     * @throws AuthException if the credentials were refused
     * @throws IllegalArgumentException for a malformed endpoint, an unreadable PEM file or malformed PEM
     */
    public static EtcdLockClient connect(ClientOptions options) {
        Objects.requireNonNull(options, "options");
        Native.init();
        Logging.refresh();
        long p = Native.clientConnect(options.endpoints, millis(options.connectTimeout), millis(options.requestTimeout),
                options.user, options.password, path(options.caFile), path(options.certFile), path(options.keyFile),
                options.caPem, options.certPem, options.keyPem, options.serverName, options.name);
        return new EtcdLockClient(new NativeHandle(p, Native::clientFree, "client"));
    }

    /**
     * A lock named {@code name}. Sends nothing until acquired.
     *
     * @param name the lock's name: not empty, not ending in {@code /}, no NUL
     * @param options the lease TTL (and an optional value)
     * @return the lock
     * @throws IllegalArgumentException for a bad name
     * @throws ClosedException if the client is closed
     */
    public DistributedLock lock(String name, LockOptions options) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(options, "options");
        if (name.isEmpty() || name.endsWith("/") || name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("a lock name must be non-empty, not end in '/' and hold no NUL: " + quote(name));
        }
        checkOpen();
        Logging.refresh();
        return new DistributedLock(this, name, options);
    }

    /**
     * The fair semaphore {@code name}: {@code permits} holders at most. Sends nothing.
     *
     * @param name the semaphore's name (as a lock name)
     * @param permits 1 to 1024; every participant of a name must give the same number
     * @param options the lease TTL (and an optional value)
     * @return the semaphore
     * @throws IllegalArgumentException for a bad name or number of permits
     */
    public DistributedSemaphore semaphore(String name, int permits, LockOptions options) {
        LockOptions o = Objects.requireNonNull(options, "options").permits(permits);
        return new DistributedSemaphore(new DistributedLock(this, checked(name, o, DistributedLock.Kind.PERMIT), o,
                DistributedLock.Kind.PERMIT), permits);
    }

    /**
     * The fair read-write lock {@code name}, a {@link java.util.concurrent.locks.ReadWriteLock}.
     *
     * @param name the lock's name
     * @param options the lease TTL (and an optional value)
     * @return the read-write lock
     * @throws IllegalArgumentException for a bad name
     */
    public DistributedReadWriteLock rwlock(String name, LockOptions options) {
        Objects.requireNonNull(options, "options");
        checked(name, options, DistributedLock.Kind.READ);
        return new DistributedReadWriteLock(new DistributedLock(this, name, options, DistributedLock.Kind.READ),
                new DistributedLock(this, name, options, DistributedLock.Kind.WRITE));
    }

    /**
     * The election {@code name} (shared with Go's {@code concurrency.Election}). Sends nothing.
     *
     * @param name the election's name
     * @param ttl the TTL of the lease candidates' keys are bound to, rounded up to whole seconds
     * @return the election
     * @throws IllegalArgumentException for a bad name or TTL
     */
    public Election election(String name, Duration ttl) {
        LockOptions o = LockOptions.ttl(ttl);
        return new Election(this, checked(name, o, DistributedLock.Kind.CANDIDATE), o);
    }

    /**
     * Registers {@code instance} of {@code service} with {@code value} on a lease of its own,
     * kept alive (and registered again whenever lost) until the registration is closed.
     * Returns once registered.
     *
     * @param service the service's name (instances are the keys under {@code <service>/})
     * @param instance the instance's name: not empty, no {@code /}
     * @param value what it registers (an address, JSON...), at most 4096 bytes
     * @param options the TTL, and whether to take the name over
     * @return the registration; close it
     * @throws EtcdLockException kind {@code WOULD_BLOCK} if another registrant has the name (nothing left)
     * @throws IllegalArgumentException for a bad name or value (nothing sent)
     */
    public Registration register(String service, String instance, byte[] value, RegisterOptions options) {
        Logging.refresh();
        return Registration.start(handle, service, instance, value, options);
    }

    /**
     * The task queue {@code name}: items put by any process, claimed by one worker at a time on
     * its lease, durable until acked. Sends nothing.
     *
     * @param name the queue's name (as a lock name; its keys are under {@code <name>/})
     * @param options the claims' TTL, the deliveries an item gets, how long a claim may last, the
     *     worker value
     * @return the queue
     * @throws IllegalArgumentException for a bad name, TTL, {@code maxAttempts} under 1, a zero
     *     {@code maxProcessing} or a worker value over 4096 bytes (nothing sent)
     * @throws ClosedException if the client is closed
     */
    public TaskQueue queue(String name, QueueOptions options) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(options, "options");
        long q = handle.with(c -> Native.queueOpen(c, name, options.ttlSeconds, options.maxAttempts, options.maxProcessingMs, options.worker));
        Logging.refresh();
        return new TaskQueue(new NativeHandle(q, Native::queueFree, "task queue"), name, this);
    }

    /**
     * Claims the period's slot of the once-per-period job {@code name}: the job runs in at most
     * one caller per period, across every host that triggers it. The slot is the period boundary
     * nearest the trigger time; the claim is a try-lock on this client's lease, kept alive while
     * the job runs.
     *
     * <pre>{@code
     * Optional<OnceSlot> won = client.once("reports/daily", OnceOptions.every(Duration.ofDays(1)));
     * if (won.isPresent()) {
     *     try (OnceSlot slot = won.get()) {   // marks the period done at the end of the block
     *         runReport(slot.fencingToken());
     *     }
     * }
     * }</pre>
     *
     * @param name the job's name (as a lock name)
     * @param options the period, the claim TTL, the trigger time, how long done marks are kept
     * @return the slot if this caller won it (the job is this caller's to run); empty if the
     *     period's job is done or another caller runs it
     * @throws IllegalArgumentException for a bad name, a period under 1 s, a TTL under 1 s, done
     *     marks kept under 2 periods or a trigger time before 1970 (nothing written)
     */
    public Optional<OnceSlot> once(String name, OnceOptions options) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(options, "options");
        long at = epochMillis(options.at);
        Logging.refresh();
        long s = handle.with(c -> Native.onceClaim(c, name, options.everyMs, options.ttlSeconds, options.at != null, at, options.keepPeriods));
        return s == 0 ? Optional.empty() : Optional.of(new OnceSlot(new NativeHandle(s, Native::slotFree, "once slot"), name, this));
    }

    /**
     * The pool {@code name} of named slots: an acquire gets slot ids nobody else holds, with a
     * fencing token per slot. Sends nothing; the first acquire stores the definition if the pool
     * has none, and fails with {@link IllegalArgumentException} if it has another.
     *
     * <pre>{@code
     * Pool ids = client.pool("snowflake/workers", PoolOptions.size(1024).reuseDelay(Duration.ofSeconds(30)));
     * try (PoolHolding worker = ids.acquire(1, Duration.ofSeconds(5))) {
     *     int workerId = Integer.parseInt(worker.slots().get(0));
     * }
     * }</pre>
     *
     * @param name the pool's name (as a lock name; its keys are under {@code <name>/})
     * @param options its slots, the holdings' TTL, the reuse delay
     * @return the pool
     * @throws IllegalArgumentException for a bad name, no slots or more than 1024, a bad or
     *     duplicate id, or a reuse delay beyond etcd's largest TTL (nothing sent)
     * @throws ClosedException if the client is closed
     */
    public Pool pool(String name, PoolOptions options) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(options, "options");
        long p = handle.with(c -> Native.poolOpen(c, name, options.slots, options.size, options.ttlSeconds, options.reuseDelayMs));
        Logging.refresh();
        return new Pool(new NativeHandle(p, Native::poolFree, "pool"), name, this);
    }

    /**
     * The pool {@code name} as another participant defined it, whatever its slots and reuse delay.
     * Sends nothing; its acquires fail with {@link IllegalArgumentException} if nobody defined it.
     *
     * @param name the pool's name
     * @param ttl the TTL of the lease holdings live on, rounded up to whole seconds
     * @return the pool
     * @throws IllegalArgumentException for a bad name or TTL
     */
    public Pool joinPool(String name, Duration ttl) {
        Objects.requireNonNull(name, "name");
        long ttlSeconds = LockOptions.ttl(ttl).ttlSeconds();
        long p = handle.with(c -> Native.poolJoin(c, name, ttlSeconds));
        Logging.refresh();
        return new Pool(new NativeHandle(p, Native::poolFree, "pool"), name, this);
    }

    /**
     * The slots of the pool {@code name}, read at one revision: each free, held (by whom, with
     * which token), resting (for how long) or dead. Changes nothing.
     *
     * @param name the pool's name
     * @return its slots in its order, or empty if no pool is defined there
     */
    public Optional<List<SlotInfo>> inspectPool(String name) {
        Objects.requireNonNull(name, "name");
        SlotInfo[] slots = handle.with(c -> Native.poolInspect(c, name));
        return slots == null ? Optional.empty() : Optional.of(List.of(slots));
    }

    /**
     * The lock set {@code members}: their names held together, all or none, with one fencing
     * token. Sends nothing until acquired. Sets listing the same names in any order never
     * deadlock.
     *
     * <pre>{@code
     * LockSet job = client.lockSet(List.of(SetMember.read("cfg"), SetMember.write("jobs/a"), SetMember.permit("gpus", 4)),
     *         LockOptions.ttl(Duration.ofSeconds(10)));
     * }</pre>
     *
     * @param members 1 to 64 members ({@link SetMember#names} for names held alone), no name
     *     twice, none under another's queue (not both {@code a} and {@code a/b})
     * @param options the lease TTL (and an optional value, stored in every member's key)
     * @return the set
     * @throws IllegalArgumentException for no members, more than 64, a bad or repeated name, or one
     *     under another
     * @throws ClosedException if the client is closed
     */
    public LockSet lockSet(List<SetMember> members, LockOptions options) {
        Objects.requireNonNull(options, "options");
        List<SetMember> list = List.copyOf(Objects.requireNonNull(members, "members"));
        String[] names = new String[list.size()];
        int[] modes = new int[list.size()];
        int[] permits = new int[list.size()];
        for (int i = 0; i < names.length; i++) {
            names[i] = list.get(i).name();
            modes[i] = list.get(i).mode().ordinal();
            permits[i] = list.get(i).permits();
        }
        long s = handle.with(c -> Native.lockSetOpen(c, names, modes, permits, options.ttlSeconds));
        Logging.refresh();
        return new LockSet(new NativeHandle(s, Native::lockSetFree, "lock set"), list, options, this);
    }

    /**
     * The instances of {@code service} now (one read), whoever registered them.
     *
     * @param service the service's name
     * @return the set and the revision it was read at
     */
    public Instances instances(String service) {
        Objects.requireNonNull(service, "service");
        return handle.with(c -> Native.instances(c, service));
    }

    /**
     * Follows the instances of {@code service}: the current set first, then the set after each
     * change. Sends nothing until read.
     *
     * @param service the service's name
     * @return the discovery; close it
     * @throws IllegalArgumentException for a bad service name
     */
    public Discovery discover(String service) {
        Objects.requireNonNull(service, "service");
        long d = handle.with(c -> Native.followOpen(c, service, 1));
        return new Discovery(new NativeHandle(d, Native::followFree, "discovery"), service);
    }

    /**
     * A local copy of every key under {@code prefix}, loaded at one revision (returns once loaded)
     * and kept in step with etcd: see {@link Cache}.
     *
     * @param prefix the prefix ({@code ""}: every key)
     * @return the cache; close it
     * @throws ClosedException if the client is closed
     */
    public Cache cache(String prefix) {
        byte[] p = Objects.requireNonNull(prefix, "prefix").getBytes(StandardCharsets.UTF_8);
        long c = handle.with(h -> Native.cacheOpen(h, p));
        return new Cache(new NativeHandle(c, Native::cacheFree, "cache"), prefix);
    }

    /**
     * Grants a lease and keeps it alive in the background until revoked or closed.
     *
     * @param ttl its TTL, rounded up to whole seconds; positive
     * @return the lease
     */
    public Lease lease(Duration ttl) {
        long s = LockOptions.ttl(ttl).ttlSeconds();
        Logging.refresh();
        return new Lease(new NativeHandle(handle.with(c -> Native.leaseGrant(c, s)), Native::leaseFree, "lease"));
    }

    /**
     * Writes {@code value} at {@code key}. Not retried when the outcome is unknown.
     *
     * @param key a non-empty key
     * @param value the value
     * @return the revision of the write
     */
    public long put(String key, byte[] value) {
        byte[] k = key(key);
        Objects.requireNonNull(value, "value");
        return handle.with(c -> Native.put(c, k, value, 0));
    }

    /**
     * Writes {@code value} at {@code key}, attached to {@code lease}: deleted when the lease ends.
     *
     * @param key a non-empty key
     * @param value the value
     * @param lease a live lease
     * @return the revision of the write
     */
    public long put(String key, byte[] value, Lease lease) {
        byte[] k = key(key);
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(lease, "lease");
        return lease.handle().with(l -> handle.with(c -> Native.put(c, k, value, l)));
    }

    /**
     * Reads {@code key} (linearizable).
     *
     * @param key a non-empty key
     * @return its value, or empty if there is none
     */
    public Optional<byte[]> get(String key) {
        byte[] k = key(key);
        return Optional.ofNullable(handle.with(c -> Native.get(c, k)));
    }

    /**
     * Whether the acquisition {@code fence} names still holds, now: one linearizable read (as
     * Chubby's {@code CheckSequencer}). {@code false} for a fence of another etcd cluster.
     * Advisory: it may stop holding right after; a database that checks the token itself
     * ({@code io.etcdlock.fencing.JdbcFence}) is what makes a late write fail.
     *
     * @param fence a fence (from {@link LockGuard#fence()} or {@link Fence#parse})
     * @return whether it holds
     */
    public boolean checkFence(Fence fence) {
        String s = Objects.requireNonNull(fence, "fence").toString();
        return handle.with(c -> Native.clientCheckFence(c, s));
    }

    /**
     * {@link #checkFence(Fence)} for a fence's string form.
     *
     * @param fence {@code etcdlock-fence.v1.<q|k>.<cluster hex>.<token>.<name hex>}
     * @return whether it holds
     * @throws IllegalArgumentException if {@code fence} is not a fence
     */
    public boolean checkFence(String fence) {
        return checkFence(Fence.parse(fence));
    }

    /**
     * Deletes {@code key}.
     *
     * @param key a non-empty key
     * @return whether it existed
     */
    public boolean delete(String key) {
        byte[] k = key(key);
        return handle.with(c -> Native.delete(c, k));
    }

    /**
     * The client's metrics since it connected, in the Prometheus text format (lock
     * acquisitions, timeouts, losses, wait and hold histograms, requests, leases alive...). Reads
     * memory, sends nothing; works on a closed client too.
     *
     * @return the metrics text
     */
    public String metricsText() {
        return handle.with(Native::clientMetricsText);
    }

    /**
     * The client's name: the {@code client} label of every series of {@link #metricsText()} and
     * tag of {@link io.etcdlock.micrometer.EtcdLockMetrics}' meters ({@link
     * ClientOptions.Builder#name}, else {@code etcdlock-<n>}, unique in the process).
     *
     * @return the name
     */
    public String name() {
        return handle.with(Native::clientName);
    }

    /**
     * The client's metrics as Prometheus families, in the core's order: each with its name,
     * help and type as {@link #metricsText()} has them, and its values now. For adapters to
     * other registries ({@link io.etcdlock.micrometer.EtcdLockMetrics}). Reads memory, sends
     * nothing.
     *
     * @return the families
     */
    public List<MetricFamily> metricFamilies() {
        MetricsCollector collector = new MetricsCollector();
        handle.run(c -> Native.clientMetrics(c, collector));
        return collector.families();
    }

    /**
     * The client's metrics since it connected, as a record (the same numbers as
     * {@link #metricsText()}). Reads memory, sends nothing; works on a closed client too.
     *
     * @return the metrics now
     */
    public Metrics metrics() {
        MetricsCollector collector = new MetricsCollector();
        handle.run(c -> Native.clientMetrics(c, collector));
        return collector.build();
    }

    /**
     * Reads the queue of lock {@code name} as etcd has it now, whoever holds or waits (other
     * processes, other bindings, {@code etcdctl lock} too): one read at one revision, then one
     * lease TTL read per lease. Changes nothing.
     *
     * @param name the lock's name, as given to {@link #lock}
     * @return the holder and the waiters in queue order
     * @throws IllegalArgumentException for a bad name (nothing sent)
     */
    public LockState inspect(String name) {
        Objects.requireNonNull(name, "name");
        return handle.with(c -> Native.inspect(c, name));
    }

    /**
     * Watches one key: every change after this returns (etcd has confirmed the watch by then).
     *
     * @param key a non-empty key
     * @return the watch; close it
     */
    public Watch watch(String key) {
        return watch(key, WatchOptions.defaults());
    }

    /**
     * Watches one key from a start revision (history replayed from there) or with previous values.
     *
     * @param key a non-empty key
     * @param options the start revision, previous values
     * @return the watch; close it
     * @throws CompactedException if the start revision was compacted (or from the watch's first read)
     */
    public Watch watch(String key, WatchOptions options) {
        return openWatch(key(key), false, options, key);
    }

    /**
     * Watches every key that starts with {@code prefix} ({@code ""}: every key).
     *
     * @param prefix the prefix
     * @return the watch; close it
     */
    public Watch watchPrefix(String prefix) {
        return watchPrefix(prefix, WatchOptions.defaults());
    }

    /**
     * Watches every key that starts with {@code prefix}, from a start revision or with previous values.
     *
     * @param prefix the prefix ({@code ""}: every key)
     * @param options the start revision, previous values
     * @return the watch; close it
     * @throws CompactedException if the start revision was compacted (or from the watch's first read)
     */
    public Watch watchPrefix(String prefix, WatchOptions options) {
        Objects.requireNonNull(prefix, "prefix");
        return openWatch(prefix.getBytes(StandardCharsets.UTF_8), true, options, "prefix " + prefix);
    }

    private Watch openWatch(byte[] key, boolean prefix, WatchOptions options, String description) {
        Objects.requireNonNull(options, "options");
        long w = handle.with(c -> Native.watchOpen(c, key, prefix, options.startRevision, options.prevKv));
        return new Watch(new NativeHandle(w, Native::watchFree, "watch"), description);
    }

    /** @return whether {@link #close()} was called */
    public boolean isClosed() {
        return handle.isClosed();
    }

    /**
     * Closes the client: revokes its leases (bounded by the request timeout), so its locks are
     * lost and freed for others; pending and later calls fail with {@link ClosedException}.
     * Idempotent.
     */
    @Override
    public void close() {
        if (handle.isClosed()) {
            return;
        }
        try {
            // First, under the read lock: fails the calls in progress, so that the free below
            // (which waits for them) does not wait out their timeouts.
            handle.run(Native::clientClose);
        } catch (ClosedException alreadyClosed) {
            return;
        } finally {
            handle.close();
        }
    }

    NativeHandle handle() {
        return handle;
    }

    /** {@code name}, once the core found it (and the rest) valid for {@code kind}; sends nothing. */
    private String checked(String name, LockOptions o, DistributedLock.Kind kind) {
        Objects.requireNonNull(name, "name");
        handle.run(c -> Native.lockCheck(c, name, o.ttlSeconds, kind.ordinal(), o.permits, o.count));
        Logging.refresh();
        return name;
    }

    private void checkOpen() {
        if (handle.isClosed()) {
            throw new ClosedException("the client is closed");
        }
    }

    private static byte[] key(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty()) {
            throw new IllegalArgumentException("a key must not be empty");
        }
        return key.getBytes(StandardCharsets.UTF_8);
    }

    private static long epochMillis(java.time.Instant at) {
        try {
            return at == null ? 0 : at.toEpochMilli();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("the trigger time is out of range: " + at);
        }
    }

    private static long millis(Duration d) {
        return d == null ? 0 : d.toMillis();
    }

    private static String path(Path p) {
        return p == null ? null : p.toString();
    }

    private static String quote(String s) {
        return "\"" + s.replace("\0", "\\0") + "\"";
    }
}
