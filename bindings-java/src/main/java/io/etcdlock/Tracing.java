package io.etcdlock;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * Spans through the OpenTelemetry API, when opentelemetry-api (1.57 or newer) is on the class
 * path: the core's span names, attributes and outcomes ({@code etcdlock.acquire} with the wait,
 * {@code etcdlock.hold} from acquisition to release or loss, {@code etcdlock.release},
 * {@code etcdlock.campaign} and {@code etcdlock.lead}, {@code etcdlock.task.claim},
 * {@code etcdlock.task.ack}, {@code etcdlock.register}; see the README's "Traces"). A pool's
 * acquire, hold and release are {@code etcdlock.acquire}, {@code etcdlock.hold} and
 * {@code etcdlock.release} too, named by the pool, with {@code etcdlock.slots} (the slot ids,
 * comma-joined); a lock set's are named by its members' names, comma-joined.
 *
 * <p>opentelemetry-api is an optional dependency: everything that refers to it is in
 * {@link OtelSpan}, loaded only after {@link #available()} said yes (checked once). Without it a
 * span costs a read of a static field. With it, spans come from
 * {@code GlobalOpenTelemetry.getOrNoop()} (never {@code get()}, which would fix the global
 * instance as a no-op before the application sets its own), instrumentation scope
 * {@code etcdlock}; a span that does not record (no SDK, or not sampled) is dropped at once, so
 * that nothing more is done for it (no hold, no lost callback).
 */
final class Tracing {
    static final String ACQUIRE = "etcdlock.acquire";
    static final String HOLD = "etcdlock.hold";
    static final String RELEASE = "etcdlock.release";
    static final String CAMPAIGN = "etcdlock.campaign";
    static final String LEAD = "etcdlock.lead";
    static final String TASK_CLAIM = "etcdlock.task.claim";
    static final String TASK_ACK = "etcdlock.task.ack";
    static final String REGISTER = "etcdlock.register";

    private static volatile Boolean available; // null until checked

    private Tracing() {}

    /** One open span (an {@link OtelSpan}); package code never sees OpenTelemetry's types. */
    abstract static class Span {
        abstract Span attr(String key, String value);

        abstract Span attr(String key, long value);

        abstract void end();

        /** A new span named {@code spanName}, in the current context, linked to this one. */
        abstract Span follow(String spanName);
    }

    /**
     * A recording span {@code spanName} with {@code etcdlock.name = name}, or null: no
     * opentelemetry-api, or a span that would not record.
     */
    static Span begin(String spanName, String name) {
        if (!available()) {
            return null;
        }
        try {
            Span s = OtelSpan.begin(spanName);
            return s == null ? null : s.attr("etcdlock.name", name);
        } catch (LinkageError e) {
            available = false; // an opentelemetry-api older than 1.57 (no getOrNoop): no spans
            return null;
        }
    }

    static boolean available() {
        Boolean a = available;
        if (a == null) {
            a = probe();
            available = a;
        }
        return a;
    }

    private static boolean probe() {
        try {
            Class.forName("io.opentelemetry.api.GlobalOpenTelemetry", false, Tracing.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** Ends a wait's span (acquire, campaign, claim) with {@code acquired} and the token. */
    static void acquired(Span span, long token) {
        span.attr("etcdlock.outcome", "acquired").attr("etcdlock.fencing_token", token).end();
    }

    /** Ends {@code span} with the outcome of error kind {@code kind}: see {@link #failed(Span, Throwable, boolean)}. */
    static void failed(Span span, String kind, boolean wait) {
        String outcome;
        if (wait && ("LOCK_TIMEOUT".equals(kind) || "WOULD_BLOCK".equals(kind))) {
            outcome = "timeout";
        } else if ("CANCELLED".equals(kind)) {
            outcome = "cancelled";
        } else {
            outcome = "error";
        }
        span.attr("etcdlock.outcome", outcome).attr("etcdlock.error_kind", kind).end();
    }

    /**
     * Ends {@code span} with {@code e}'s outcome: in a wait's span {@code timeout} for
     * {@code LOCK_TIMEOUT} and {@code WOULD_BLOCK}, {@code cancelled} for {@code CANCELLED},
     * else {@code error}; and its kind.
     */
    static void failed(Span span, Throwable e, boolean wait) {
        failed(span, kindOf(e), wait);
    }

    static String kindOf(Throwable e) {
        if (e instanceof EtcdLockException) {
            return ((EtcdLockException) e).kind();
        }
        if (e instanceof IllegalArgumentException || e instanceof NullPointerException) {
            return "INVALID_ARGUMENT";
        }
        return "INTERNAL";
    }

    /** Ends {@code span} with {@code outcome}. */
    static void ok(Span span, String outcome) {
        span.attr("etcdlock.outcome", outcome).end();
    }

    /**
     * Opens the hold span {@code spanName} of {@code owner} (a guard, a pool's holding, a held
     * lock set), linked to its acquire's {@code waited}; ended at release, at loss (a lost
     * callback on {@code lost}, armed by {@code arm}) or, for one nobody closed, when
     * {@code owner} is collected ({@code dropped}). Neither the callback nor the Cleaner refers
     * to {@code owner}.
     *
     * @param slots a pool's slots (comma-joined), or null
     */
    static Hold hold(Span waited, String spanName, String name, long token, String slots, Object owner, LostSink lost, Runnable arm) {
        Span s = waited.follow(spanName).attr("etcdlock.name", name).attr("etcdlock.fencing_token", token);
        if (slots != null) {
            s.attr("etcdlock.slots", slots);
        }
        Hold h = new Hold(s);
        NativeHandle.CLEANER.register(owner, () -> h.end("dropped", null));
        lost.add(reason -> h.end("lost", reason), arm);
        return h;
    }

    /**
     * Runs {@code release} (a release call) in an {@code etcdlock.release} span when traced,
     * and ends the hold {@code h} (or null): {@code released}, or {@code lost} (with
     * {@code lostReason}'s reason) if it failed because the holding was lost.
     *
     * @param slots a pool's slots (comma-joined), or null
     */
    static void released(Hold h, String name, long token, String slots, Runnable release, Supplier<String> lostReason) {
        Span span = begin(RELEASE, name);
        if (span != null) {
            span.attr("etcdlock.fencing_token", token);
            if (slots != null) {
                span.attr("etcdlock.slots", slots);
            }
        }
        try {
            release.run();
        } catch (RuntimeException e) {
            if (h != null) {
                String why = lostReason.get();
                h.end(why == null ? "released" : "lost", why);
            }
            if (span != null) {
                failed(span, e, false);
            }
            throw e;
        }
        if (h != null) {
            h.end("released", null);
        }
        if (span != null) {
            ok(span, "released");
        }
    }

    /**
     * An open hold (or leadership) span, ended once: at release, loss or the guard's collection.
     * What a lost callback or the Cleaner keeps is this, never the guard.
     */
    static final class Hold {
        private final AtomicReference<Span> span;

        Hold(Span span) {
            this.span = new AtomicReference<>(span);
        }

        void end(String outcome, String lostReason) {
            Span s = span.getAndSet(null);
            if (s == null) {
                return;
            }
            s.attr("etcdlock.outcome", outcome);
            if (lostReason != null) {
                s.attr("etcdlock.error_kind", "LOCK_LOST").attr("etcdlock.lost_reason", lostReason);
            }
            s.end();
        }
    }
}
