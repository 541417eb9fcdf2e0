// The Java demo worker: acquire -> guarded increment -> work -> release, reported as JSON lines,
// through the Java binding (bindings-java, package io.etcdlock).
//
// Environment: ETCDLOCK_ENDPOINTS, DEMO_LOCK, DEMO_COUNTER, DEMO_TTL, DEMO_WORK_MS,
// DEMO_UNTIL_NS (a CLOCK_MONOTONIC deadline; System.nanoTime reads that clock on Linux); with
// https:// endpoints (demo.sh --tls) also DEMO_TLS_CA, DEMO_TLS_CERT, DEMO_TLS_KEY (PEM file paths).
// With DEMO_SERVICE set, the worker registers itself there as DEMO_LABEL while it runs: the key
// <DEMO_SERVICE>/<DEMO_LABEL> on a lease of its own (the registry's layout), put again on a new
// lease when that lease is lost. The Java binding has no `register` yet (phase 1), so this is the
// registration done by hand with client.lease and client.put(key, value, lease).
// DEMO_MODE=election or DEMO_MODE=semaphore (the demo's second phase) is not supported: the Java
// binding has no election or semaphore yet; the worker reports an error and exits 2.
//
// Built by demo/workers.py (javac, once, into target/demo/java) and run as
//   java -cp bindings-java/target/etcdlock-0.1.0.jar:target/demo/java Worker
import io.etcdlock.ClientOptions;
import io.etcdlock.DistributedLock;
import io.etcdlock.EtcdLockClient;
import io.etcdlock.EtcdLockException;
import io.etcdlock.Lease;
import io.etcdlock.LockGuard;
import io.etcdlock.LockOptions;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
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
        if (mode.equals("election") || mode.equals("semaphore")) {
            emit("ev", "error", "error", "DEMO_MODE=" + mode + ": the Java binding has no " + mode + " yet");
            System.exit(2);
        }
        long until = Long.parseLong(env.get("DEMO_UNTIL_NS"));
        long work = Long.parseLong(env.get("DEMO_WORK_MS"));
        long ttl = Long.parseLong(env.get("DEMO_TTL"));
        String counterKey = env.get("DEMO_COUNTER");
        long pid = ProcessHandle.current().pid();
        ClientOptions.Builder options = ClientOptions.builder().endpoints(env.get("ETCDLOCK_ENDPOINTS").split(","));
        if (env.get("DEMO_TLS_CA") != null && !env.get("DEMO_TLS_CA").isEmpty()) {
            options.tls(Path.of(env.get("DEMO_TLS_CA")), path(env.get("DEMO_TLS_CERT")), path(env.get("DEMO_TLS_KEY")));
        }
        try (EtcdLockClient client = EtcdLockClient.connect(options.build())) {
            // The value is who queues: the report's queue inspection shows it.
            DistributedLock lock = client.lock(env.get("DEMO_LOCK"),
                    LockOptions.ttl(Duration.ofSeconds(ttl)).value(("java pid " + pid).getBytes(StandardCharsets.UTF_8)));
            Registration reg = env.get("DEMO_SERVICE") == null || env.get("DEMO_SERVICE").isEmpty() ? null
                    : new Registration(client, env.get("DEMO_SERVICE") + "/" + env.get("DEMO_LABEL"),
                            ("java pid " + pid).getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(ttl));
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
                reg.close();
            }
            emit("ev", "metrics", "text", client.metricsText());
        }
        emit("ev", "done");
        System.exit(0);
    }

    static Path path(String p) {
        return p == null || p.isEmpty() ? null : Path.of(p);
    }

    /** <service>/<label> on a lease of its own, put again on a new lease whenever that one is lost. */
    static final class Registration {
        private final EtcdLockClient client;
        private final String key;
        private final byte[] value;
        private final Duration ttl;
        private Lease lease;
        private boolean closed;

        Registration(EtcdLockClient client, String key, byte[] value, Duration ttl) {
            this.client = client;
            this.key = key;
            this.value = value;
            this.ttl = ttl;
            synchronized (this) {
                lease = grant();
            }
        }

        /** A new lease with the key put on it; its loss reported and mended on a thread of our own. */
        private Lease grant() {
            Lease l = client.lease(ttl);
            try {
                client.put(key, value, l);
            } catch (RuntimeException e) {
                l.close();
                throw e;
            }
            l.onLost(reason -> {
                synchronized (this) {
                    if (closed || lease != l) {
                        return;
                    }
                }
                emit("ev", "unregistered", "reason", reason);
                Thread t = new Thread(() -> again(l), "demo-register");
                t.setDaemon(true);
                t.start();
            });
            return l;
        }

        /** Registers again as soon as etcd allows (bounded: until the registration is closed). */
        private void again(Lease lost) {
            lost.close();
            for (int attempt = 0; attempt < 600; attempt++) { // 2 minutes at most
                synchronized (this) {
                    if (closed) {
                        return;
                    }
                }
                try {
                    Lease l = grant();
                    synchronized (this) {
                        if (closed) {
                            l.close();
                            return;
                        }
                        lease = l;
                    }
                    emit("ev", "registered_again", "lease", l.id());
                    return;
                } catch (EtcdLockException e) {
                    sleepMs(200);
                }
            }
        }

        void close() {
            Lease l;
            synchronized (this) {
                closed = true;
                l = lease;
            }
            try {
                l.close(); // revokes: the key goes with it
            } catch (EtcdLockException e) {
                emit("ev", "error", "error", "unregister " + describe(e));
            }
        }
    }
}
