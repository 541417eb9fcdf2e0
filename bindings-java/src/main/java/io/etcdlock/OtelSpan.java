package io.etcdlock;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;

/**
 * The one class that refers to OpenTelemetry's API (an optional dependency): loaded only once
 * {@link Tracing#available()} found it on the class path.
 */
final class OtelSpan extends Tracing.Span {
    private static final String SCOPE = "etcdlock";
    private final Span span;

    private OtelSpan(Span span) {
        this.span = span;
    }

    /** A span {@code spanName} in the current context; null if it would not record. */
    static OtelSpan begin(String spanName) {
        Span s = GlobalOpenTelemetry.getOrNoop().getTracer(SCOPE).spanBuilder(spanName).startSpan();
        if (!s.isRecording()) {
            s.end();
            return null;
        }
        return new OtelSpan(s);
    }

    @Override
    OtelSpan attr(String key, String value) {
        span.setAttribute(key, value);
        return this;
    }

    @Override
    OtelSpan attr(String key, long value) {
        span.setAttribute(key, value);
        return this;
    }

    @Override
    void end() {
        span.end();
    }

    @Override
    OtelSpan follow(String spanName) {
        return new OtelSpan(GlobalOpenTelemetry.getOrNoop().getTracer(SCOPE).spanBuilder(spanName).addLink(span.getSpanContext()).startSpan());
    }
}
