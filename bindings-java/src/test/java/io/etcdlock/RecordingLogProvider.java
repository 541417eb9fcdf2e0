package io.etcdlock;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Marker;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;
import org.slf4j.event.LoggingEvent;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.LoggingEventAware;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * A tiny SLF4J 2 provider for the tests (registered in META-INF/services): the logger
 * {@code etcdlock} records every event, key-value pairs included, in {@link #RECORDS}; every
 * other logger (jetcd's, say) is off.
 */
public final class RecordingLogProvider implements SLF4JServiceProvider {
    /** What the logger {@code etcdlock} received, in order (the oldest dropped past 20000). */
    static final List<Rec> RECORDS = new CopyOnWriteArrayList<>();

    /** One event: its level, message, key-value pairs and the thread it was logged on. */
    record Rec(Level level, String message, Map<String, Object> fields, String thread) {}

    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final MDCAdapter mdc = new NOPMDCAdapter();

    @Override
    public ILoggerFactory getLoggerFactory() {
        return Recorder::new;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {}

    static final class Recorder extends LegacyAbstractLogger implements LoggingEventAware {
        private static final long serialVersionUID = 1L;
        private final boolean on;

        Recorder(String name) {
            this.name = name;
            this.on = name.equals("etcdlock");
        }

        @Override
        public boolean isTraceEnabled() {
            return on;
        }

        @Override
        public boolean isDebugEnabled() {
            return on;
        }

        @Override
        public boolean isInfoEnabled() {
            return on;
        }

        @Override
        public boolean isWarnEnabled() {
            return on;
        }

        @Override
        public boolean isErrorEnabled() {
            return on;
        }

        @Override
        public void log(LoggingEvent e) {
            Map<String, Object> fields = new LinkedHashMap<>();
            if (e.getKeyValuePairs() != null) {
                for (KeyValuePair kv : e.getKeyValuePairs()) {
                    fields.put(kv.key, kv.value);
                }
            }
            add(new Rec(e.getLevel(), e.getMessage(), fields, Thread.currentThread().getName()));
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(Level level, Marker marker, String msg, Object[] args, Throwable t) {
            add(new Rec(level, msg, Map.of(), Thread.currentThread().getName()));
        }

        private void add(Rec r) {
            if (on) {
                if (RECORDS.size() > 20_000) {
                    RECORDS.remove(0);
                }
                RECORDS.add(r);
            }
        }
    }
}
