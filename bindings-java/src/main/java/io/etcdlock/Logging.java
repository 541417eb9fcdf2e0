package io.etcdlock;

import java.util.ServiceLoader;

/**
 * The core's log records on the SLF4J logger {@code etcdlock}, when SLF4J 2 and a provider
 * (Logback, slf4j-simple, Log4j's...) are on the class path; otherwise nothing at all: no
 * thread, no native sink, and SLF4J is never touched, so that its "No SLF4J providers were found"
 * notice is not printed either. slf4j-api is an optional dependency: everything that refers to
 * it is in {@link Slf4jForward}, loaded only after {@link #available()} said yes.
 *
 * <p>Levels: the native side only queues records the logger is enabled for, as read at
 * {@link EtcdLockClient#connect} and at each {@code lock()} / {@code lease()} call (a level
 * changed in the logging configuration is picked up by the next such call).
 */
final class Logging {
    /** The service interface of SLF4J 2 providers (SLF4J 1.x has none: not supported). */
    private static final String PROVIDER = "org.slf4j.spi.SLF4JServiceProvider";
    /** How long one native wait for records lasts (the thread then waits again). */
    private static final long DRAIN_WAIT_MS = 10_000;
    private static Boolean available; // guarded by Logging.class; null until checked
    private static int level = -1; // guarded by Logging.class; the level the core was given
    private static Thread thread; // guarded by Logging.class

    private Logging() {}

    /** Starts forwarding on first need, and tells the core the logger's level now. */
    static synchronized void refresh() {
        if (!available()) {
            return;
        }
        int wanted;
        try {
            wanted = Slf4jForward.wantedLevel();
        } catch (LinkageError e) {
            available = false; // an incompatible slf4j-api after all: stay silent
            return;
        }
        if (wanted == level || (level <= 0 && wanted == 0)) {
            level = wanted;
            return;
        }
        if (thread == null) {
            thread = new Thread(Logging::drain, "etcdlock-log");
            thread.setDaemon(true);
            thread.start();
        }
        Native.logLevel(wanted);
        level = wanted;
    }

    /** Whether slf4j-api 2 and a provider for it are there (checked once, without SLF4J printing). */
    static synchronized boolean available() {
        if (available == null) {
            available = probe();
        }
        return available;
    }

    private static boolean probe() {
        ClassLoader cl = Logging.class.getClassLoader();
        try {
            Class<?> spi = Class.forName(PROVIDER, false, cl);
            // SLF4J's own ways to find its provider: the system property, or a service entry.
            return System.getProperty("slf4j.provider") != null || ServiceLoader.load(spi, cl).stream().findAny().isPresent();
        } catch (ClassNotFoundException | LinkageError | RuntimeException e) {
            return false;
        }
    }

    private static void drain() {
        while (true) {
            try {
                Native.logDrain(DRAIN_WAIT_MS);
            } catch (Throwable t) {
                try {
                    Thread.sleep(1000); // never spin on a failing drain
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /**
     * One record, called by the native layer on the {@code etcdlock-log} thread (bindings-java/src/log.rs).
     * {@code kinds}: 0 text, 1 signed, 2 unsigned, 3 flag, per field.
     */
    static void deliver(int level, String area, String message, String text, String[] keys, String[] values, byte[] kinds) {
        try {
            Object[] typed = new Object[values.length];
            for (int i = 0; i < values.length; i++) {
                switch (kinds[i]) {
                    case 1:
                        typed[i] = Long.valueOf(values[i]);
                        break;
                    case 2:
                        typed[i] = Long.parseUnsignedLong(values[i]); // beyond 2^63: negative, as Java's longs are
                        break;
                    case 3:
                        typed[i] = Boolean.valueOf(values[i]);
                        break;
                    default:
                        typed[i] = values[i];
                }
            }
            Slf4jForward.log(level, area, message, text, keys, typed);
        } catch (Throwable t) {
            // A failing logging backend must not stop the records that follow.
        }
    }
}
