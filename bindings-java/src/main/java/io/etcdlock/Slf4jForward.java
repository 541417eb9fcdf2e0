package io.etcdlock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * The only class that refers to SLF4J (loaded once {@link Logging#available()} found it and a
 * provider). Each record goes to the logger {@code etcdlock} with its text as the message and,
 * as SLF4J 2 key-value pairs, {@code area} ({@code lock}, {@code lease}, {@code watch},
 * {@code connection}), {@code event} (the fixed message) and each field by name.
 */
final class Slf4jForward {
    static final Logger LOG = LoggerFactory.getLogger("etcdlock");
    private static final Level[] LEVELS = {null, Level.ERROR, Level.WARN, Level.INFO, Level.DEBUG, Level.TRACE};

    private Slf4jForward() {}

    /** The core's number of the most verbose level the logger wants (5 trace ... 1 error, 0 none). */
    static int wantedLevel() {
        for (int n = 5; n >= 1; n--) {
            if (LOG.isEnabledForLevel(LEVELS[n])) {
                return n;
            }
        }
        return 0;
    }

    static void log(int level, String area, String message, String text, String[] keys, Object[] values) {
        Level l = LEVELS[Math.max(1, Math.min(5, level))];
        LoggingEventBuilder b = LOG.atLevel(l).setMessage(text).addKeyValue("area", area).addKeyValue("event", message);
        for (int i = 0; i < keys.length; i++) {
            b = b.addKeyValue(keys[i], values[i]);
        }
        b.log();
    }
}
