package io.etcdlock;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;

/**
 * Loads libetcdlock_jni once: from {@code -Detcdlock.native.path=FILE} if set, otherwise from the
 * copy inside the jar ({@code META-INF/native/linux-x86_64/}), extracted to a private directory
 * (mode 700: no other user can swap the file between the copy and the load) under
 * {@code -Detcdlock.native.workdir=DIR} if set, else under {@code java.io.tmpdir}, deleted at
 * exit. Also installs the exit hook that closes every client, so that a JVM that exits revokes
 * the leases it held (the other bindings do the same at exit).
 *
 * <p>The jar's library is built for Linux x86-64 with glibc. Any other platform (another OS or
 * architecture, or a musl libc as on Alpine) is refused before loading, with an error naming the
 * platform, rather than the dynamic loader's obscure one.
 */
final class NativeLoader {
    static final String PATH_PROPERTY = "etcdlock.native.path";
    static final String WORKDIR_PROPERTY = "etcdlock.native.workdir";
    /**
     * Test hook only: {@code glibc} or {@code musl} stands in for the libc this JVM runs on, so
     * that the musl refusal can be checked on a glibc machine. Not for production use.
     */
    static final String TEST_LIBC_PROPERTY = "etcdlock.native.test.libc";
    private static final String PLATFORM = "linux-x86_64";
    private static final String RESOURCE = "/META-INF/native/" + PLATFORM + "/libetcdlock_jni.so";
    private static boolean loaded;

    private NativeLoader() {}

    static synchronized void load() {
        if (loaded) {
            return;
        }
        String override = System.getProperty(PATH_PROPERTY);
        if (override != null && !override.isEmpty()) {
            System.load(Path.of(override).toAbsolutePath().toString());
        } else {
            checkPlatform();
            Path lib = extract();
            try {
                System.load(lib.toString());
            } catch (UnsatisfiedLinkError e) {
                // Typically a noexec mount (the copy succeeded, mapping it executable did not).
                UnsatisfiedLinkError err = new UnsatisfiedLinkError("cannot load " + lib + " (extracted from the jar): "
                        + e.getMessage() + "; if its directory is on a noexec file system, set -D" + WORKDIR_PROPERTY
                        + "=<a directory that allows executables>");
                err.initCause(e);
                throw err;
            }
        }
        loaded = true;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> Native.shutdown(2000), "etcdlock-exit"));
    }

    /** Refuses, naming the platform, anything but the jar's linux-x86_64 glibc library. */
    private static void checkPlatform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String hint = "; build libetcdlock_jni for it with cargo (cargo build --release -p etcdlock-java) and pass -D"
                + PATH_PROPERTY + "=/path/to/libetcdlock_jni.so";
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            String name = os.replace(' ', '_') + "-" + arch;
            throw new UnsatisfiedLinkError("etcdlock: the jar carries a native library for " + PLATFORM
                    + " (glibc) only, not for this platform (" + name + ")" + hint);
        }
        if (isMusl()) {
            throw new UnsatisfiedLinkError("etcdlock: the jar carries a native library for " + PLATFORM
                    + " with glibc only, and this JVM runs on musl libc (" + PLATFORM + "-musl, e.g. Alpine)"
                    + "; use a glibc-based image (Debian, Ubuntu, UBI)" + hint);
        }
    }

    /**
     * Whether this JVM runs on musl libc: the test hook if set, else the C library this process
     * has mapped (a glibc machine may have musl installed beside it, so its loader's presence
     * alone says little), else musl's loader without glibc's.
     */
    private static boolean isMusl() {
        String pretend = System.getProperty(TEST_LIBC_PROPERTY);
        if (pretend != null && !pretend.isEmpty()) {
            return pretend.equals("musl");
        }
        try {
            String maps = Files.readString(Path.of("/proc/self/maps"), StandardCharsets.ISO_8859_1);
            if (maps.contains("/ld-musl-") || maps.contains("/libc.musl-")) {
                return true;
            }
            if (maps.contains("/libc.so.6") || maps.contains("/libc-2.")) {
                return false;
            }
        } catch (IOException | SecurityException e) {
            // No /proc (a sandbox): fall through to the file system.
        }
        return hasFile("/lib", "ld-musl-") && !Files.exists(Path.of("/lib64/ld-linux-x86-64.so.2"));
    }

    private static boolean hasFile(String dir, String prefix) {
        String[] names = new java.io.File(dir).list();
        if (names == null) {
            return false;
        }
        for (String n : names) {
            if (n.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    private static Path extract() {
        String workdir = System.getProperty(WORKDIR_PROPERTY);
        boolean own = workdir != null && !workdir.isEmpty();
        Path base = Path.of(own ? workdir : System.getProperty("java.io.tmpdir", "/tmp"));
        String where = base + (own ? " (-D" + WORKDIR_PROPERTY + ")" : " (java.io.tmpdir)");
        try (InputStream in = NativeLoader.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("libetcdlock_jni.so is not in the jar (" + RESOURCE + "); set -D"
                        + PATH_PROPERTY);
            }
            if (own) {
                Files.createDirectories(base);
            }
            Path dir = Files.createTempDirectory(base, "etcdlock-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Path lib = dir.resolve("libetcdlock_jni.so");
            // Once loaded, the mapping survives the unlink: deleting at exit leaves no litter.
            // Registered before the file, the directory is deleted after it (reverse order).
            dir.toFile().deleteOnExit();
            Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
            lib.toFile().deleteOnExit();
            return lib;
        } catch (IOException e) {
            UnsatisfiedLinkError err = new UnsatisfiedLinkError("cannot extract libetcdlock_jni.so to " + where + ": " + e
                    + "; set -D" + WORKDIR_PROPERTY + "=<a writable directory that allows executables>");
            err.initCause(e);
            throw err;
        }
    }
}
