package io.etcdlock;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Loads libetcdlock_jni once: from {@code -Detcdlock.native.path=FILE} if set, otherwise from the
 * copy inside the jar ({@code META-INF/native/linux-x86_64/}), extracted to a private temporary
 * directory (mode 700: no other user can swap the file between the copy and the load), deleted
 * at exit. Also installs the exit hook that closes every client, so that a JVM that exits
 * revokes the leases it held (the other bindings do the same at exit).
 */
final class NativeLoader {
    static final String PATH_PROPERTY = "etcdlock.native.path";
    private static final String RESOURCE = "/META-INF/native/linux-x86_64/libetcdlock_jni.so";
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
            System.load(extract().toString());
        }
        loaded = true;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> Native.shutdown(2000), "etcdlock-exit"));
    }

    private static Path extract() {
        String os = System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            throw new UnsatisfiedLinkError("etcdlock ships a native library for linux-x86_64 only (this is " + os + "-"
                    + arch + "); build it with cargo and pass -D" + PATH_PROPERTY + "=/path/to/libetcdlock_jni.so");
        }
        try (InputStream in = NativeLoader.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("libetcdlock_jni.so is not in the jar (" + RESOURCE + "); set -D"
                        + PATH_PROPERTY);
            }
            Path dir = Files.createTempDirectory("etcdlock-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Path lib = dir.resolve("libetcdlock_jni.so");
            // Once loaded, the mapping survives the unlink: deleting at exit leaves no litter.
            // Registered before the file, the directory is deleted after it (reverse order).
            dir.toFile().deleteOnExit();
            Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
            lib.toFile().deleteOnExit();
            return lib;
        } catch (IOException e) {
            UnsatisfiedLinkError err = new UnsatisfiedLinkError("cannot extract libetcdlock_jni.so: " + e);
            err.initCause(e);
            throw err;
        }
    }
}
