package io.etcdlock.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.etcdlock.ClientOptions;
import io.etcdlock.DistributedLock;
import io.etcdlock.DistributedSemaphore;
import io.etcdlock.EtcdLockClient;
import io.etcdlock.LockGuard;
import io.etcdlock.LockOptions;
import io.etcdlock.LockTimeoutException;
import io.etcdlock.Pool;
import io.etcdlock.PoolHolding;
import io.etcdlock.PoolOptions;
import io.etcdlock.QueueOptions;
import io.etcdlock.Task;
import io.etcdlock.TaskQueue;
import io.grpc.stub.StreamObserver;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * bench/run.py's lock workloads (bench/src/workloads.rs) from the JVM, in --serve mode: one
 * workload window per stdin line ({@code SECONDS WORKLOAD NAME}), one JSON line back for each,
 * shaped like Report::json, until stdin closes.
 *
 * <pre>java -cp target/classes:$(cat target/classpath.txt) io.etcdlock.bench.Bench --impl etcdlock|jetcd --endpoints URLS --serve</pre>
 *
 * <ul>
 *   <li>{@code --impl etcdlock} ("java" in run.py): our Java binding, {@code DistributedLock.acquire()}
 *       then {@code LockGuard.release()}, blocking calls on platform threads.</li>
 *   <li>{@code --impl jetcd}: jetcd 0.8.5's own {@code Lock} client (etcd's server-side v3lock
 *       service) with a lease from its {@code Lease} client kept alive, {@code lock(name, lease).get()}
 *       then {@code unlock(key).get()}: the client a JVM team would otherwise use.</li>
 * </ul>
 *
 * Workloads, as Go's (bench/go/main.go): "lock uncontended" (one thread, one client); "lock many
 * (64 tasks)" (64 threads on one client, each its own name; jetcd: one lease for all, as Go's one
 * session); "lock contended (N clients)" (N clients, each its own connection (and jetcd lease),
 * one thread each, on one name: cycles/s, handoff p50/p99 = next holder's acquire return minus
 * the previous holder's release start, Jain's index over the clients' counts). Our binding also
 * runs "lock many (64 async)" ("java async" in run.py): the 64 names on one client as 64 chains of
 * {@code acquireAsync()} then {@code LockGuard.releaseAsync()}, each restarting itself from the
 * release's completion, no thread of the bench's own per chain and no blocking call on the
 * etcdlock callback threads that complete them. Our binding also runs the task queue's "queue (N
 * workers)" (bench/src/queue.rs): one producer (the main thread) and N worker threads, each an
 * {@code EtcdLockClient} of its own, on a queue of its own; the producer puts while fewer than 2
 * × N items are unacked, each worker claims and acks until the window ends: tasks acked by its
 * end per second (jetcd has no queue). Our binding also runs "semaphore contended (16 clients, 4
 * permits)" and "pool contended (16 clients, 4 slots)" (bench/src/recipes.rs): 16 threads, each
 * an {@code EtcdLockClient} of its own, cycling {@code acquire()} then {@code release()} on one
 * {@code DistributedSemaphore} of 4 permits, or {@code acquire(1)} then {@code release()} on one
 * {@code Pool} of 4 slots (cycles/s, Jain's index; jetcd has neither). CPU per cycle is
 * the process's CPU time (all threads: JIT and GC included) over the window, divided by the
 * cycles. The first window of each workload in a process is preceded by an unmeasured one of
 * --warmup seconds (default 0.3; bench/run.py passes up to 5): the JIT's warm-up, since a JVM
 * service runs warm. jetcd needs it: from a cold JVM its uncontended rate still climbed after
 * 10 s of 1 s windows, where our binding's first window was already at its rate.
 */
public final class Bench {
    private static final int TTL = 30;

    private final String impl;
    private final String[] endpoints;
    private final double warmup;
    private final Set<String> warm = new HashSet<>();

    private Bench(String impl, String[] endpoints, double warmup) {
        this.impl = impl;
        this.endpoints = endpoints;
        this.warmup = warmup;
    }

    public static void main(String[] args) throws Exception {
        String impl = null;
        String endpoints = null;
        boolean serve = false;
        double warmup = 0.3;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--impl": impl = args[++i]; break;
                case "--endpoints": endpoints = args[++i]; break;
                case "--serve": serve = true; break;
                case "--warmup": warmup = Double.parseDouble(args[++i]); break;
                default: die("unknown argument " + args[i], null);
            }
        }
        if (!serve || endpoints == null || !("etcdlock".equals(impl) || "jetcd".equals(impl))) {
            die("usage: Bench --impl etcdlock|jetcd --endpoints URL[,URL] [--warmup SECONDS] --serve", null);
        }
        Bench b = new Bench(impl, endpoints.split(","), warmup);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            int sp = line.indexOf(' ');
            if (sp < 0) {
                break;
            }
            double seconds = Double.parseDouble(line.substring(0, sp));
            String workload = line.substring(sp + 1);
            try {
                if (b.warm.add(workload)) {
                    b.run(workload, b.warmup);
                }
                System.out.println(b.run(workload, seconds).json("etcdlock".equals(impl) ? "java" : "jetcd"));
                System.out.flush();
            } catch (Exception e) {
                die(workload, e);
            }
        }
        System.exit(0);
    }

    static void die(String what, Throwable e) {
        System.err.println("bench java: " + what + (e == null ? "" : ": " + e));
        if (e != null) {
            e.printStackTrace();
        }
        System.exit(1);
    }

    Report run(String workload, double seconds) throws Exception {
        switch (workload) {
            case "lock uncontended": return simple(workload, many(1, seconds), seconds);
            case "lock many (64 tasks)": return simple(workload, many(64, seconds), seconds);
            case "lock many (64 async)": return simple(workload, manyAsync(64, seconds), seconds);
            case "lock contended (4 clients)": return contended(4, seconds);
            case "lock contended (16 clients)": return contended(16, seconds);
            case "queue (4 workers)": return queue(4, seconds);
            case "queue (16 workers)": return queue(16, seconds);
            case "semaphore contended (16 clients, 4 permits)": return recipe(false, 16, 4, seconds);
            case "pool contended (16 clients, 4 slots)": return recipe(true, 16, 4, seconds);
            default: throw new IllegalArgumentException("unknown workload " + workload);
        }
    }

    // ---- the two clients behind one shape: connect, one contender's lock handle, a cycle, close

    /** One connection (and for jetcd its lease, kept alive). */
    interface Conn {
        Contender contender(String name) throws Exception;

        void close() throws Exception;
    }

    /** One name's handle on one connection; lock() returns once held, unlock() releases. */
    interface Contender {
        void lock() throws Exception;

        void unlock() throws Exception;
    }

    Conn connect() throws Exception {
        return "etcdlock".equals(impl) ? new OurConn(endpoints) : new JetcdConn(endpoints);
    }

    static final class OurConn implements Conn {
        final EtcdLockClient client;

        OurConn(String[] endpoints) {
            client = EtcdLockClient.connect(ClientOptions.builder().endpoints(endpoints).timeout(Duration.ofSeconds(5)).build());
        }

        @Override
        public Contender contender(String name) {
            DistributedLock lock = client.lock(name, LockOptions.ttl(Duration.ofSeconds(TTL)));
            return new Contender() {
                LockGuard held;

                @Override
                public void lock() throws InterruptedException {
                    held = lock.acquire();
                }

                @Override
                public void unlock() {
                    held.release();
                    held.close();
                    held = null;
                }
            };
        }

        @Override
        public void close() {
            client.close();
        }
    }

    static final class JetcdConn implements Conn {
        final Client client;
        final long lease;
        final CloseableClient keepAlive;

        JetcdConn(String[] endpoints) throws Exception {
            client = Client.builder().endpoints(endpoints).build();
            lease = client.getLeaseClient().grant(TTL).get().getID();
            keepAlive = client.getLeaseClient().keepAlive(lease, new StreamObserver<LeaseKeepAliveResponse>() {
                @Override
                public void onNext(LeaseKeepAliveResponse r) {
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                }
            });
        }

        @Override
        public Contender contender(String name) {
            ByteSequence key = ByteSequence.from(name, StandardCharsets.UTF_8);
            io.etcd.jetcd.Lock lock = client.getLockClient();
            return new Contender() {
                ByteSequence held;

                @Override
                public void lock() throws Exception {
                    LockResponse r = lock.lock(key, lease).get();
                    held = r.getKey();
                }

                @Override
                public void unlock() throws Exception {
                    lock.unlock(held).get();
                    held = null;
                }
            };
        }

        @Override
        public void close() throws Exception {
            keepAlive.close();
            client.getLeaseClient().revoke(lease).get(); // as Go's session.Close
            client.close();
        }
    }

    // ---- workloads

    static String unique(String tag) {
        return String.format("bench/java-%s-%d-%08x", tag, ProcessHandle.current().pid(), ThreadLocalRandom.current().nextInt());
    }

    static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** Cycles and CPU ns of `tasks` threads on one connection, each locking its own name. */
    long[] many(int tasks, double seconds) throws Exception {
        Conn conn = connect();
        try {
            String prefix = unique("lock");
            Contender[] cs = new Contender[tasks];
            for (int i = 0; i < tasks; i++) {
                cs[i] = conn.contender(prefix + "/" + i);
                cs[i].lock(); // a first cycle before timing starts (leases granted), as Go's and Rust's
                cs[i].unlock();
            }
            long[] counts = new long[tasks];
            Throwable[] failed = new Throwable[1];
            long cpu0 = cpuNanos();
            long deadline = System.nanoTime() + (long) (seconds * 1e9);
            Thread[] threads = new Thread[tasks];
            for (int i = 0; i < tasks; i++) {
                int t = i;
                threads[i] = new Thread(() -> {
                    try {
                        long n = 0;
                        while (System.nanoTime() < deadline) {
                            cs[t].lock();
                            cs[t].unlock();
                            n++;
                        }
                        counts[t] = n;
                    } catch (Throwable e) {
                        synchronized (failed) {
                            failed[0] = e;
                        }
                    }
                }, "bench-" + i);
                threads[i].start();
            }
            for (Thread th : threads) {
                th.join();
            }
            long cpu = cpuNanos() - cpu0;
            if (failed[0] != null) {
                throw new RuntimeException(failed[0]);
            }
            return new long[] {Arrays.stream(counts).sum(), cpu};
        } finally {
            conn.close();
        }
    }

    /**
     * A timeout too long for milliseconds: the binding waits without a limit then
     * (DistributedLock.millis), as {@code acquire()} does.
     */
    static final Duration NO_LIMIT = Duration.ofSeconds(Long.MAX_VALUE);

    /**
     * Cycles and CPU ns of `tasks` chains on one connection of our binding, each locking its own
     * name: {@code acquireAsync}, then from its completion {@code releaseAsync} (both completed on
     * etcdlock callback threads, neither blocking one), whose completion counts the cycle and
     * starts the next acquire, until the window ends, as many()'s threads check it before each
     * cycle.
     */
    long[] manyAsync(int tasks, double seconds) throws Exception {
        if (!"etcdlock".equals(impl)) {
            throw new IllegalArgumentException("lock many (64 async) is our binding's (--impl etcdlock)");
        }
        OurConn conn = new OurConn(endpoints);
        try {
            String prefix = unique("lock");
            DistributedLock[] locks = new DistributedLock[tasks];
            for (int i = 0; i < tasks; i++) {
                locks[i] = conn.client.lock(prefix + "/" + i, LockOptions.ttl(Duration.ofSeconds(TTL)));
                LockGuard g = locks[i].acquire(); // a first cycle before timing starts, as many()'s
                g.release();
                g.close();
            }
            long[] counts = new long[tasks];
            List<CompletableFuture<Void>> done = new ArrayList<>();
            long cpu0 = cpuNanos();
            long deadline = System.nanoTime() + (long) (seconds * 1e9);
            for (int i = 0; i < tasks; i++) {
                done.add(new CompletableFuture<>());
                chain(locks[i], i, counts, deadline, done.get(i));
            }
            CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).join(); // a chain's failure: CompletionException
            long cpu = cpuNanos() - cpu0;
            return new long[] {Arrays.stream(counts).sum(), cpu};
        } finally {
            conn.close();
        }
    }

    /**
     * One chain from here on: cycles (acquireAsync, then releaseAsync from its completion) until
     * the deadline, then completes `done`. A cycle whose release completed before its stage was
     * attached runs in this loop, not by recursion. counts[t] is written only by the chain's
     * current stage, each after the one before it.
     */
    static void chain(DistributedLock lock, int t, long[] counts, long deadline, CompletableFuture<Void> done) {
        while (true) {
            if (System.nanoTime() >= deadline) {
                done.complete(null);
                return;
            }
            // The guard is closed once released (close() after releaseAsync only frees it).
            CompletableFuture<Void> f = lock.acquireAsync(NO_LIMIT)
                    .thenCompose(g -> g.releaseAsync().whenComplete((v, x) -> g.close()));
            if (!f.isDone()) {
                f.whenComplete((v, e) -> {
                    if (cycled(e, t, counts, done)) {
                        chain(lock, t, counts, deadline, done);
                    }
                });
                return;
            }
            Throwable e = null;
            try {
                f.join();
            } catch (Throwable x) {
                e = x;
            }
            if (!cycled(e, t, counts, done)) {
                return;
            }
        }
    }

    /** Counts a cycle whose release completed; a failure (`e`) completes `done` instead. */
    static boolean cycled(Throwable e, int t, long[] counts, CompletableFuture<Void> done) {
        if (e != null) {
            done.completeExceptionally(e);
            return false;
        }
        counts[t]++;
        return true;
    }

    static Report simple(String name, long[] cyclesCpu, double seconds) {
        Report r = new Report(name);
        r.cyclesPerSec = cyclesCpu[0] / seconds;
        r.cpuUsPerCycle = cyclesCpu[0] > 0 ? cyclesCpu[1] / 1e3 / cyclesCpu[0] : null;
        return r;
    }

    /** `clients` connections, one thread each, contending for one name. */
    Report contended(int clients, double seconds) throws Exception {
        String name = unique("contended");
        Conn[] conns = new Conn[clients];
        Contender[] cs = new Contender[clients];
        try {
            for (int i = 0; i < clients; i++) {
                conns[i] = connect();
                cs[i] = conns[i].contender(name);
            }
            long[] counts = new long[clients];
            List<List<long[]>> spans = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                spans.add(new ArrayList<>());
            }
            Throwable[] failed = new Throwable[1];
            long cpu0 = cpuNanos();
            long start = System.nanoTime();
            long deadline = start + (long) (seconds * 1e9);
            Thread[] threads = new Thread[clients];
            for (int i = 0; i < clients; i++) {
                int t = i;
                threads[i] = new Thread(() -> {
                    try {
                        List<long[]> mine = spans.get(t);
                        while (System.nanoTime() < deadline) {
                            cs[t].lock();
                            long acquired = System.nanoTime();
                            long releasing = System.nanoTime();
                            cs[t].unlock();
                            mine.add(new long[] {acquired, releasing});
                            counts[t]++;
                        }
                    } catch (Throwable e) {
                        synchronized (failed) {
                            failed[0] = e;
                        }
                    }
                }, "contender-" + i);
                threads[i].start();
            }
            for (Thread th : threads) {
                th.join();
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            long cpu = cpuNanos() - cpu0;
            if (failed[0] != null) {
                throw new RuntimeException(failed[0]);
            }
            List<long[]> timeline = new ArrayList<>();
            spans.forEach(timeline::addAll);
            timeline.sort((a, b) -> Long.compare(a[0], b[0]));
            double[] handoffs = new double[Math.max(0, timeline.size() - 1)];
            for (int i = 1; i < timeline.size(); i++) {
                handoffs[i - 1] = Math.max(0, timeline.get(i)[0] - timeline.get(i - 1)[1]) / 1e6;
            }
            Arrays.sort(handoffs);
            double sum = 0;
            double sq = 0;
            for (long n : counts) {
                sum += n;
                sq += (double) n * n;
            }
            Report r = new Report("lock contended (" + clients + " clients)");
            r.cyclesPerSec = sum / elapsed;
            if (handoffs.length > 0) {
                r.p50 = handoffs[(int) Math.round((handoffs.length - 1) * 0.5)];
                r.p99 = handoffs[(int) Math.round((handoffs.length - 1) * 0.99)];
            }
            if (sq > 0) {
                r.jain = sum * sum / (clients * sq);
                r.cpuUsPerCycle = cpu / 1e3 / sum;
            }
            return r;
        } finally {
            for (Conn c : conns) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    /** bench/src/queue.rs's: the producer stays at most this many items per worker ahead of the acks. */
    static final int BACKLOG_PER_WORKER = 2;
    static final byte[] PAYLOAD = "task-0123456789".getBytes(StandardCharsets.UTF_8);

    /**
     * One producer and `workers` worker threads, each a client of its own, on a queue of its own
     * (bench/src/queue.rs): tasks acked by the window's end per second. What is left is claimed
     * and acked afterwards, untimed.
     */
    Report queue(int workers, double seconds) throws Exception {
        if (!"etcdlock".equals(impl)) {
            throw new IllegalArgumentException("the queue workloads are our binding's (--impl etcdlock)");
        }
        String name = unique("queue");
        QueueOptions opts = QueueOptions.ttl(Duration.ofSeconds(10)).maxAttempts(5);
        OurConn producer = new OurConn(endpoints);
        OurConn[] conns = new OurConn[workers];
        try {
            for (int i = 0; i < workers; i++) {
                conns[i] = new OurConn(endpoints);
            }
            Semaphore backlog = new Semaphore(BACKLOG_PER_WORKER * workers);
            long[] counts = new long[workers];
            Throwable[] failed = new Throwable[1];
            long cpu0 = cpuNanos();
            long deadline = System.nanoTime() + (long) (seconds * 1e9);
            Thread[] threads = new Thread[workers];
            for (int i = 0; i < workers; i++) {
                int t = i;
                TaskQueue q = conns[i].client.queue(name, opts);
                threads[i] = new Thread(() -> {
                    try {
                        for (long left; (left = deadline - System.nanoTime()) > 0; ) {
                            Task task;
                            try {
                                task = q.claim(Duration.ofNanos(left));
                            } catch (LockTimeoutException e) {
                                break;
                            }
                            task.ack();
                            task.close();
                            backlog.release();
                            if (System.nanoTime() <= deadline) {
                                counts[t]++;
                            }
                        }
                    } catch (Throwable e) {
                        synchronized (failed) {
                            failed[0] = e;
                        }
                    }
                }, "worker-" + i);
                threads[i].start();
            }
            TaskQueue q = producer.client.queue(name, opts);
            for (long left; (left = deadline - System.nanoTime()) > 0; ) {
                if (!backlog.tryAcquire(left, TimeUnit.NANOSECONDS) || System.nanoTime() >= deadline) {
                    break;
                }
                q.put(PAYLOAD);
            }
            for (Thread th : threads) {
                th.join();
            }
            long cpu = cpuNanos() - cpu0;
            if (failed[0] != null) {
                throw new RuntimeException(failed[0]);
            }
            long acked = Arrays.stream(counts).sum();
            // What is left, so that the next window's etcd holds nothing of this one's.
            for (Optional<Task> t = q.tryClaim(); t.isPresent(); t = q.tryClaim()) {
                t.get().ack();
                t.get().close();
            }
            return simple("queue (" + workers + " workers)", new long[] {acked, cpu}, seconds);
        } finally {
            for (OurConn c : conns) {
                if (c != null) {
                    c.close();
                }
            }
            producer.close();
        }
    }

    /**
     * `clients` threads, each an EtcdLockClient of its own, cycling acquire/release on one
     * semaphore of `size` permits, or on one slot of one pool of `size` slots (`pool`), on a name
     * of its own (bench/src/recipes.rs): cycles/s over all of them and Jain's index of their
     * counts.
     */
    Report recipe(boolean pool, int clients, int size, double seconds) throws Exception {
        if (!"etcdlock".equals(impl)) {
            throw new IllegalArgumentException("the semaphore and pool workloads are our binding's (--impl etcdlock)");
        }
        String name = unique(pool ? "pool" : "sem");
        OurConn[] conns = new OurConn[clients];
        try {
            Runnable[] cycles = new Runnable[clients];
            for (int i = 0; i < clients; i++) {
                conns[i] = new OurConn(endpoints);
                if (pool) {
                    Pool p = conns[i].client.pool(name, PoolOptions.size(size).ttl(Duration.ofSeconds(TTL)));
                    cycles[i] = () -> {
                        try (PoolHolding h = p.acquire(1)) {
                            h.release();
                        } catch (InterruptedException e) {
                            throw new RuntimeException(e);
                        }
                    };
                } else {
                    DistributedSemaphore sem = conns[i].client.semaphore(name, size, LockOptions.ttl(Duration.ofSeconds(TTL)));
                    cycles[i] = () -> {
                        try (LockGuard g = sem.acquire()) {
                            g.release();
                        } catch (InterruptedException e) {
                            throw new RuntimeException(e);
                        }
                    };
                }
            }
            long[] counts = new long[clients];
            Throwable[] failed = new Throwable[1];
            long cpu0 = cpuNanos();
            long start = System.nanoTime();
            long deadline = start + (long) (seconds * 1e9);
            Thread[] threads = new Thread[clients];
            for (int i = 0; i < clients; i++) {
                int t = i;
                threads[i] = new Thread(() -> {
                    try {
                        while (System.nanoTime() < deadline) {
                            cycles[t].run();
                            counts[t]++;
                        }
                    } catch (Throwable e) {
                        synchronized (failed) {
                            failed[0] = e;
                        }
                    }
                }, "contender-" + i);
                threads[i].start();
            }
            for (Thread th : threads) {
                th.join();
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            long cpu = cpuNanos() - cpu0;
            if (failed[0] != null) {
                throw new RuntimeException(failed[0]);
            }
            double sum = 0;
            double sq = 0;
            for (long n : counts) {
                sum += n;
                sq += (double) n * n;
            }
            Report r = new Report(pool ? "pool contended (" + clients + " clients, " + size + " slots)"
                    : "semaphore contended (" + clients + " clients, " + size + " permits)");
            r.cyclesPerSec = sum / elapsed;
            if (sq > 0) {
                r.jain = sum * sum / (clients * sq);
                r.cpuUsPerCycle = cpu / 1e3 / sum;
            }
            return r;
        } finally {
            for (OurConn c : conns) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    static final class Report {
        final String name;
        double cyclesPerSec;
        Double p50;
        Double p99;
        Double jain;
        Double cpuUsPerCycle;

        Report(String name) {
            this.name = name;
        }

        static String num(Double v, String fmt) {
            return v == null ? "null" : String.format(Locale.ROOT, fmt, v);
        }

        /** Report::json's shape and number formats. */
        String json(String lang) {
            return String.format(Locale.ROOT,
                    "{\"lang\":\"%s\",\"workload\":\"%s\",\"cycles_per_sec\":%.1f,\"handoff_p50_ms\":%s,\"handoff_p99_ms\":%s,\"jain\":%s,\"cpu_us_per_cycle\":%s}",
                    lang, name, cyclesPerSec, num(p50, "%.4f"), num(p99, "%.4f"), num(jain, "%.4f"), num(cpuUsPerCycle, "%.1f"));
        }
    }
}
