// The Java demo worker: acquire -> guarded increment -> work -> release, reported as JSON lines,
// through the Java binding (bindings-java, package io.etcdlock).
//
// Environment: ETCDLOCK_ENDPOINTS, DEMO_LOCK, DEMO_COUNTER, DEMO_TTL, DEMO_WORK_MS,
// DEMO_UNTIL_NS (a CLOCK_MONOTONIC deadline; System.nanoTime reads that clock on Linux); with
// https:// endpoints (demo.sh --tls) also DEMO_TLS_CA, DEMO_TLS_CERT, DEMO_TLS_KEY (PEM file paths).
// DEMO_MODE=election or DEMO_MODE=semaphore runs the demo's second phase instead (demo/coordination.py):
// campaign in DEMO_ELECTION proposing DEMO_LABEL and, while leading, proclaim and make fenced writes
// to DEMO_TERM_KEY every DEMO_WRITE_MS; or loop acquire -> hold DEMO_HOLD_MS -> release on the
// semaphore DEMO_SEMAPHORE with DEMO_PERMITS permits. Both stop at DEMO_UNTIL_NS.
// DEMO_MODE=tasks runs the demo's third phase (demo/tasks.py): loop claim from the queue DEMO_QUEUE
// (DEMO_CLAIM_MS at most) -> work DEMO_WORK_MS -> ack with the result DEMO_RESULTS<id> =
// "<token>:DEMO_LABEL" in the ack's own transaction (task.ack(puts, deletes)), until DEMO_UNTIL_NS
// has passed and the queue is empty.
// With DEMO_SERVICE set, the mutex worker registers itself there as DEMO_LABEL while it runs.
//
// Built by demo/workers.py (javac, once, into target/demo/java) and run as
//   java -cp bindings-java/target/etcdlock-0.1.0.jar:target/demo/java Worker
import io.etcdlock.ClientOptions;
import io.etcdlock.DistributedLock;
import io.etcdlock.DistributedSemaphore;
import io.etcdlock.Election;
import io.etcdlock.EtcdLockClient;
import io.etcdlock.EtcdLockException;
import io.etcdlock.Leadership;
import io.etcdlock.LockGuard;
import io.etcdlock.LockOptions;
import io.etcdlock.LockTimeoutException;
import io.etcdlock.NotHeldException;
import io.etcdlock.QueueOptions;
import io.etcdlock.QueueStats;
import io.etcdlock.RegisterOptions;
import io.etcdlock.Registration;
import io.etcdlock.Task;
import io.etcdlock.TaskQueue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

public final class Worker {
    private static final Object OUT = new Object();

    /** One JSON line: {"t": <CLOCK_MONOTONIC ns>, ...fields}; values are Long, Integer or String. */
    static void emit(Object... kv) {
        StringBuilder sb = new StringBuilder(128);
        sb.append("{\"t\":").append(System.nanoTime());
        for (int i = 0; i < kv.length; i += 2) {
            sb.append(",\"").append(kv[i]).append("\":");
            Object v = kv[i + 1];
            if (v instanceof Number) {
                sb.append(v);
            } else {
                quote(sb, String.valueOf(v));
            }
        }
        sb.append('}');
        synchronized (OUT) {
            System.out.println(sb);
            System.out.flush();
        }
    }

    static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }

    static String describe(EtcdLockException e) {
        return e.kind() + ": " + e.getMessage();
    }

    static void sleepMs(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> env = System.getenv();
        String mode = env.getOrDefault("DEMO_MODE", "");
        long until = Long.parseLong(env.get("DEMO_UNTIL_NS"));
        long ttl = Long.parseLong(env.get("DEMO_TTL"));
        long pid = ProcessHandle.current().pid();
        ClientOptions.Builder options = ClientOptions.builder().endpoints(env.get("ETCDLOCK_ENDPOINTS").split(","));
        if (env.get("DEMO_TLS_CA") != null && !env.get("DEMO_TLS_CA").isEmpty()) {
            options.tls(Path.of(env.get("DEMO_TLS_CA")), path(env.get("DEMO_TLS_CERT")), path(env.get("DEMO_TLS_KEY")));
        }
        if (mode.equals("election") || mode.equals("semaphore") || mode.equals("tasks")) {
            try (EtcdLockClient client = EtcdLockClient.connect(options.build())) {
                if (mode.equals("election")) {
                    election(client, env, ttl, until);
                } else if (mode.equals("semaphore")) {
                    semaphore(client, env, ttl, until);
                } else {
                    tasks(client, env, ttl, until);
                }
            }
            emit("ev", "done");
            System.exit(0);
        }
        long work = Long.parseLong(env.get("DEMO_WORK_MS"));
        String counterKey = env.get("DEMO_COUNTER");
        try (EtcdLockClient client = EtcdLockClient.connect(options.build())) {
            // The value is who queues: the report's queue inspection shows it.
            DistributedLock lock = client.lock(env.get("DEMO_LOCK"),
                    LockOptions.ttl(Duration.ofSeconds(ttl)).value(("java pid " + pid).getBytes(StandardCharsets.UTF_8)));
            Registration reg = register(client, env, ttl, pid);
            emit("ev", "ready");
            while (System.nanoTime() < until) {
                emit("ev", "waiting");
                LockGuard held;
                try {
                    held = lock.acquire();
                } catch (EtcdLockException e) {
                    emit("ev", "error", "error", describe(e));
                    sleepMs(200);
                    continue;
                }
                try {
                    long token = held.fencingToken();
                    emit("ev", "acquired", "token", token, "key", held.key());
                    held.onLost(reason -> emit("ev", "lost", "token", token, "reason", reason));
                    sleepMs(work);
                    Long current = null; // no write without the value it increments; release all the same
                    try {
                        Optional<byte[]> got = client.get(counterKey);
                        current = got.map(b -> Long.parseLong(new String(b, StandardCharsets.UTF_8).trim())).orElse(0L);
                    } catch (EtcdLockException e) {
                        emit("ev", "error", "error", "read " + describe(e));
                    }
                    if (current != null) {
                        long next = current + 1;
                        try {
                            held.putIfHeld(counterKey, Long.toString(next).getBytes(StandardCharsets.UTF_8));
                            emit("ev", "wrote", "token", token, "value", next);
                        } catch (EtcdLockException e) { // NOT_HELD: refused; a timeout: unknown (run.py tells them apart)
                            emit("ev", "write_refused", "token", token, "value", next, "error", e.kind());
                        }
                    }
                    emit("ev", "releasing", "token", token);
                    try {
                        held.release();
                        emit("ev", "released", "token", token);
                    } catch (EtcdLockException e) {
                        emit("ev", "release_failed", "token", token, "error", e.kind());
                    }
                } finally {
                    try {
                        held.close(); // frees the handle (already released, or lost)
                    } catch (EtcdLockException e) {
                        // LockLostException: reported by onLost and release_failed already
                    }
                }
            }
            if (reg != null) {
                try {
                    reg.close(); // deregisters: the key deleted, the lease revoked
                } catch (EtcdLockException e) {
                    emit("ev", "error", "error", "unregister " + describe(e));
                }
            }
            emit("ev", "metrics", "text", client.metricsText());
        }
        emit("ev", "done");
        System.exit(0);
    }

    /** Registers this worker in DEMO_SERVICE (if set) as DEMO_LABEL, reporting losses. */
    static Registration register(EtcdLockClient client, Map<String, String> env, long ttl, long pid) {
        String service = env.get("DEMO_SERVICE");
        if (service == null || service.isEmpty()) {
            return null;
        }
        Registration reg = client.register(service, env.get("DEMO_LABEL"),
                ("java pid " + pid).getBytes(StandardCharsets.UTF_8), RegisterOptions.ttl(Duration.ofSeconds(ttl)));
        reg.onLost(reason -> emit("ev", "unregistered", "reason", reason));
        reg.onRestored(lease -> emit("ev", "registered_again", "lease", lease));
        reg.onTakenOver(() -> emit("ev", "unregistered", "reason", "taken_over"));
        return reg;
    }

    /** Nanoseconds left before until (CLOCK_MONOTONIC ns), 0 once it passed. */
    static long left(long until) {
        return Math.max(0, until - System.nanoTime());
    }

    /** A wait of what is left before until, at least a millisecond. */
    static Duration timeoutUntil(long until) {
        return Duration.ofNanos(Math.max(1_000_000L, left(until)));
    }

    static void election(EtcdLockClient client, Map<String, String> env, long ttl, long until) throws InterruptedException {
        String label = env.get("DEMO_LABEL");
        String termKey = env.get("DEMO_TERM_KEY");
        long every = Long.parseLong(env.get("DEMO_WRITE_MS"));
        Election elect = client.election(env.get("DEMO_ELECTION"), Duration.ofSeconds(ttl));
        emit("ev", "ready");
        while (left(until) > 0) {
            emit("ev", "campaigning");
            Leadership leadership;
            try {
                leadership = elect.campaign(label, timeoutUntil(until));
            } catch (EtcdLockException e) { // LOCK_TIMEOUT at the deadline
                emit("ev", "campaign_ended", "error", e.kind());
                if (left(until) > 0) {
                    sleepMs(200);
                }
                continue;
            }
            try {
                long token = leadership.fencingToken();
                emit("ev", "leading", "token", token, "key", leadership.key());
                leadership.onLost(reason -> emit("ev", "lost", "token", token, "reason", reason));
                try {
                    emit("ev", "proclaimed", "token", token, "rev", leadership.proclaim(label + " leads"));
                } catch (EtcdLockException e) {
                    emit("ev", "proclaim_refused", "token", token, "error", e.kind());
                }
                for (long seq = 1; left(until) > 0 && leadership.isHeld(); seq++) {
                    byte[] value = (label + " token " + token + " write " + seq).getBytes(StandardCharsets.UTF_8);
                    try {
                        long rev = leadership.putIfHeld(termKey, value);
                        emit("ev", "term_write", "token", token, "seq", seq, "rev", rev);
                    } catch (EtcdLockException e) {
                        emit("ev", "term_refused", "token", token, "seq", seq, "error", e.kind());
                    }
                    sleepMs(every);
                }
                try {
                    leadership.resign();
                    emit("ev", "resigned", "token", token);
                } catch (EtcdLockException e) {
                    emit("ev", "resign_failed", "token", token, "error", e.kind());
                }
            } finally {
                try {
                    leadership.close(); // frees the handle (already resigned, or lost)
                } catch (EtcdLockException e) {
                    // LockLostException: reported by onLost and resign_failed already
                }
            }
        }
    }

    static void semaphore(EtcdLockClient client, Map<String, String> env, long ttl, long until) throws InterruptedException {
        DistributedSemaphore slots = client.semaphore(env.get("DEMO_SEMAPHORE"), Integer.parseInt(env.get("DEMO_PERMITS")),
                LockOptions.ttl(Duration.ofSeconds(ttl)));
        long hold = Long.parseLong(env.get("DEMO_HOLD_MS"));
        emit("ev", "ready");
        while (left(until) > 0) {
            emit("ev", "waiting");
            LockGuard permit;
            try {
                permit = slots.acquire(timeoutUntil(until));
            } catch (EtcdLockException e) { // LOCK_TIMEOUT at the deadline
                emit("ev", "error", "error", describe(e));
                if (left(until) > 0) {
                    sleepMs(200);
                }
                continue;
            }
            try {
                long token = permit.fencingToken();
                emit("ev", "acquired", "token", token, "key", permit.key());
                sleepMs(hold);
                emit("ev", "releasing", "token", token);
                try {
                    permit.release();
                    emit("ev", "released", "token", token);
                } catch (EtcdLockException e) {
                    emit("ev", "release_failed", "token", token, "error", e.kind());
                }
            } finally {
                try {
                    permit.close(); // frees the handle (already released, or lost)
                } catch (EtcdLockException e) {
                    // LockLostException: reported by release_failed already
                }
            }
        }
    }

    /** The third phase's worker: claim -> work -> ack with the result. */
    static void tasks(EtcdLockClient client, Map<String, String> env, long ttl, long until) throws InterruptedException {
        String label = env.get("DEMO_LABEL");
        String results = env.get("DEMO_RESULTS");
        long work = Long.parseLong(env.get("DEMO_WORK_MS"));
        Duration wait = Duration.ofMillis(Long.parseLong(env.get("DEMO_CLAIM_MS")));
        TaskQueue q = client.queue(env.get("DEMO_QUEUE"), QueueOptions.ttl(Duration.ofSeconds(ttl))
                .maxAttempts(Integer.parseInt(env.get("DEMO_MAX_ATTEMPTS"))).worker(label.getBytes(StandardCharsets.UTF_8)));
        emit("ev", "ready");
        while (true) {
            Task task;
            try {
                task = q.claim(wait);
            } catch (LockTimeoutException e) {
                if (left(until) == 0) {
                    QueueStats s = q.stats();
                    if (s.pending() + s.delayed() + s.claimed() == 0) {
                        return;
                    }
                }
                continue;
            } catch (EtcdLockException e) {
                emit("ev", "error", "error", "claim " + describe(e));
                sleepMs(200);
                continue;
            }
            String id = task.id();
            long token = task.fencingToken();
            try {
                emit("ev", "claimed", "id", id, "token", token, "attempts", task.attempts());
                sleepMs(work);
                try { // the result and the ack in one transaction, only while the claim holds
                    long rev = task.ack(Map.of(results + id, (token + ":" + label).getBytes(StandardCharsets.UTF_8)), List.of());
                    emit("ev", "acked", "id", id, "token", token, "rev", rev);
                } catch (NotHeldException e) { // the claim was lost: nothing written
                    emit("ev", "refused", "id", id, "token", token, "stage", "ack", "error", e.kind());
                } catch (EtcdLockException e) { // a timeout: the ack may or may not have been committed
                    emit("ev", "ack_unknown", "id", id, "token", token, "error", describe(e));
                }
            } finally {
                try {
                    task.close(); // frees the handle (already acked or nacked)
                } catch (EtcdLockException e) {
                    // LockLostException: reported above already
                }
            }
        }
    }

    static Path path(String p) {
        return p == null || p.isEmpty() ? null : Path.of(p);
    }
}
