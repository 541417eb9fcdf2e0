package io.etcdlock;

/**
 * The JNI entry points of libetcdlock_jni (bindings-java/src/*.rs). Handles are pointers owned by
 * {@link NativeHandle}; every method may throw what {@link Errors#of} makes of a core error.
 */
final class Native {
    static {
        NativeLoader.load();
    }

    private Native() {}

    /** Makes sure the library is loaded (and its exit hook installed). */
    static void init() {}

    /** Each PEM as a file path or as PEM text (at most one of the two set); all nullable. */
    static native long clientConnect(String[] endpoints, long connectMs, long requestMs, String user, String password,
            String caFile, String certFile, String keyFile, String caPem, String certPem, String keyPem, String serverName,
            String name);

    /** The client's name (the {@code client} label of its metrics). */
    static native String clientName(long client);

    static native void clientClose(long client);

    static native boolean clientIsClosed(long client);

    static native void clientFree(long client);

    static native String clientMetricsText(long client);

    /** Feeds the metrics to {@code sink}, one call per value. */
    static native void clientMetrics(long client, MetricsCollector sink);

    static native LockState inspect(long client, String name);

    static native void shutdown(long timeoutMs);

    /** Blocks until etcd confirmed the watch; {@code startRevision} 0 = from now. */
    static native long watchOpen(long client, byte[] key, boolean prefix, long startRevision, boolean prevKv);

    /** The next events; empty when the timeout (-1: none) passed; null once ended. */
    static native WatchEvent[] watchNext(long watch, long timeoutMs);

    static native void watchClose(long watch);

    static native void watchFree(long watch);

    /** The core's records at {@code level} (1 = error ... 5 = trace) and above; 0: none. */
    static native void logLevel(int level);

    /** Waits up to {@code timeoutMs} and hands each queued record to {@link Logging#deliver}. */
    static native int logDrain(long timeoutMs);

    static native long put(long client, byte[] key, byte[] value, long lease);

    static native byte[] get(long client, byte[] key);

    static native boolean delete(long client, byte[] key);

    static native long leaseGrant(long client, long ttlSeconds);

    static native long leaseId(long lease);

    static native long leaseTtl(long lease);

    static native boolean leaseIsAlive(long lease);

    static native String leaseLostReason(long lease);

    static native void leaseOnLost(long lease, LostSink sink);

    static native void leaseRevoke(long lease);

    static native void leaseFree(long lease);

    /** Returns a cancel token handle; the outcome goes to {@code call.done} once, later. */
    static native long lockAcquire(long client, String name, long ttlSeconds, long timeoutMs, byte[] value, int kind, long permits, int count,
            NativeCall<LockGuard> call);

    /** Checks what lockAcquire would (name, TTL, permits and count, an open client); sends nothing. */
    static native void lockCheck(long client, String name, long ttlSeconds, int kind, long permits, int count);

    static native void cancel(long token);

    static native void cancelFree(long token);

    static native long guardFencingToken(long guard);

    static native long guardLeaseId(long guard);

    static native boolean guardIsHeld(long guard);

    static native boolean guardIsReleased(long guard);

    static native byte[] guardKey(long guard);

    static native String guardLostReason(long guard);

    static native Health guardHealth(long guard);

    static native long guardPut(long guard, byte[] key, byte[] value);

    /** The acquisition's fence in its string form; NOT_HELD once released. */
    static native String guardFence(long guard);

    /** Whether the fence (its string form) still holds: one linearizable read. */
    static native boolean clientCheckFence(long client, String fence);

    static native void guardOnLost(long guard, LostSink sink);

    /** An election's proclamation: the revision written (NOT_HELD unless held). */
    static native long guardSetValue(long guard, byte[] value);

    static native void guardRelease(long guard);

    /**
     * Starts guardRelease on the runtime and returns at once; the outcome goes to
     * {@code call.done(kind, message)} once, on a runtime thread (two nulls on success).
     */
    static native void guardReleaseAsync(long guard, ReleaseCall call);

    static native void guardFree(long guard);

    /** An observer of election {@code name} (kind 0) or a discovery of service {@code name} (kind 1). */
    static native long followOpen(long client, String name, long kind);

    /** The next state; {@code timedOut} itself when the timeout (-1: none) passed; null once ended. */
    static native Object followNext(long stream, long timeoutMs, Object timedOut);

    static native void followClose(long stream);

    static native void followFree(long stream);

    /** Blocks until the prefix is loaded; the cache follows etcd from there. */
    static native long cacheOpen(long client, byte[] prefix);

    /** The copy's {@code key}, or null. */
    static native KeyValue cacheGet(long cache, byte[] key);

    static native CacheSnapshot cacheSnapshot(long cache);

    /** The copy's revision, or with {@code size} its number of keys. */
    static native long cacheRevision(long cache, boolean size);

    /** False when the timeout (-1: none) passed first. */
    static native boolean cacheWaitFor(long cache, long revision, long timeoutMs);

    /** The outcome goes to {@code sink.done} once, later ("TIMEOUT" when the timeout passed). */
    static native void cacheWaitForAsync(long cache, long revision, long timeoutMs, ReleaseCall sink);

    /** A stream of the copy's changes, read with {@link #followNext} (null once the cache closed). */
    static native long cacheEvents(long cache);

    static native void cacheClose(long cache);

    static native void cacheFree(long cache);

    static native java.util.Optional<Leader> electionLeader(long client, String name);

    static native long register(long client, String service, String instance, byte[] value, long ttlSeconds, boolean replace,
            RegistrationSink sink);

    static native byte[] registrationKey(long registration);

    static native long registrationLeaseId(long registration);

    static native boolean registrationIsRegistered(long registration);

    static native long registrationUpdate(long registration, byte[] value);

    static native void registrationClose(long registration);

    static native void registrationFree(long registration);

    static native Instances instances(long client, String service);

    /** The task queue {@code name}; checks everything a claim would, sends nothing. */
    static native long queueOpen(long client, String name, long ttlSeconds, int maxAttempts, long maxProcessingMs, byte[] worker);

    static native void queueFree(long queue);

    /** Puts an item ({@code id} null: a random one); its id. */
    static native String queuePut(long queue, byte[] payload, String id, int priority, long delayMs);

    /** Returns a cancel token handle; the outcome goes to {@code call.done} once, later. */
    static native long queueClaim(long queue, long timeoutMs, NativeCall<Task> call);

    /** {@code [pending, delayed, claimed, dead, revision, priority, count, ...]}, the highest priority first. */
    static native long[] queueStats(long queue);

    static native DeadTask[] queueDead(long queue);

    static native boolean queueRequeueDead(long queue, String id);

    static native boolean queueDeleteDead(long queue, String id);

    static native String taskId(long task);

    static native byte[] taskPayload(long task);

    static native int taskPriority(long task);

    static native int taskAttempts(long task);

    static native long taskFencingToken(long task);

    /** The claim's fence in its string form; NOT_HELD once the claim ended or was lost. */
    static native String taskFence(long task);

    static native boolean taskIsHeld(long task);

    static native String taskLostReason(long task);

    static native Health taskHealth(long task);

    static native void taskOnLost(long task, LostSink sink);

    static native long taskPut(long task, byte[] key, byte[] value);

    static native long taskDelete(long task, byte[] key);

    static native long taskAck(long task, byte[][] putKeys, byte[][] putValues, byte[][] deleteKeys);

    static native void taskNack(long task, long delayMs);

    /** Gives the task back first if neither acked nor nacked. */
    static native void taskFree(long task);

    /** The slot's handle if this caller won it, 0 if not ({@code hasAt} false: now). */
    static native long onceClaim(long client, String name, long everyMs, long ttlSeconds, boolean hasAt, long atMs, int keepPeriods);

    static native long slotIndex(long slot);

    static native long slotFencingToken(long slot);

    static native boolean slotIsHeld(long slot);

    static native String slotLostReason(long slot);

    static native Health slotHealth(long slot);

    static native void slotOnLost(long slot, LostSink sink);

    static native void slotDone(long slot);

    static native void slotRelease(long slot);

    /** Releases the slot first if neither done nor released. */
    static native void slotFree(long slot);

    /** Fenced by the claim: the revision written. */
    static native long slotPut(long slot, byte[] key, byte[] value);

    static native long slotDelete(long slot, byte[] key);

    /** The pool {@code name} of {@code slots} (null: {@code size} slots "0".."size-1"); sends nothing. */
    static native long poolOpen(long client, String name, String[] slots, int size, long ttlSeconds, long reuseDelayMs);

    /** The pool {@code name} as defined in etcd; sends nothing. */
    static native long poolJoin(long client, String name, long ttlSeconds);

    static native void poolFree(long pool);

    /** Starts an acquire (owner nullable); returns its cancel token, the outcome goes to {@code call}. */
    static native long poolAcquire(long pool, int count, String owner, long timeoutMs, NativeCall<PoolHolding> call);

    /** Adds ({@code add}) or removes slots: the pool's slots after. */
    static native String[] poolChange(long pool, String[] ids, boolean add);

    /** The pool's slots, or null when no pool is defined there. */
    static native SlotInfo[] poolInspect(long client, String name);

    static native String[] poolHeldSlots(long held);

    static native long[] poolHeldTokens(long held);

    static native long poolHeldFencingToken(long held);

    static native String poolHeldOwner(long held);

    static native long poolHeldLeaseId(long held);

    static native boolean poolHeldIsHeld(long held);

    static native String poolHeldLostReason(long held);

    static native Health poolHeldHealth(long held);

    static native void poolHeldOnLost(long held, LostSink sink);

    /** Fenced by every slot of the holding: the revision. */
    static native long poolHeldTxn(long held, byte[][] putKeys, byte[][] putValues, byte[][] deleteKeys);

    static native void poolHeldRelease(long held);

    /** The last handle on a holding still held releases it first. */
    static native void poolHeldFree(long held);

    /** A slot's fence in its string form; INVALID_ARGUMENT for a slot not held. */
    static native String poolHeldFence(long held, String slot);

    /** The lock set of {@code names} in {@code modes} (SetMember.Mode ordinals); sends nothing. */
    static native long lockSetOpen(long client, String[] names, int[] modes, int[] permits, long ttlSeconds);

    static native void lockSetFree(long set);

    /** Starts taking every member; the outcome goes to {@code call}. Returns the cancel token. */
    static native long lockSetAcquire(long set, long timeoutMs, byte[] value, NativeCall<LockSetHolding> call);

    static native long lockSetHeldFencingToken(long held);

    static native long lockSetHeldLeaseId(long held);

    /** The member names, or ({@code keys}) their queue keys, in the set's order. */
    static native String[] lockSetHeldNames(long held, boolean keys);

    static native boolean lockSetHeldIsHeld(long held);

    static native boolean lockSetHeldIsReleased(long held);

    static native String lockSetHeldLostReason(long held);

    static native Health lockSetHeldHealth(long held);

    static native void lockSetHeldOnLost(long held, LostSink sink);

    /** Fenced by every member: the revision. */
    static native long lockSetHeldTxn(long held, byte[][] putKeys, byte[][] putValues, byte[][] deleteKeys);

    /** A member's fence in its string form; NOT_HELD once released or lost. */
    static native String lockSetHeldFence(long held, String name);

    static native void lockSetHeldRelease(long held);

    /** Releases a holding still held first. */
    static native void lockSetHeldFree(long held);
}
