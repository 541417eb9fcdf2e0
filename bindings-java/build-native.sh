#!/usr/bin/env bash
# Builds libetcdlock_jni.so with cargo (release) and copies it to DEST/META-INF/native/linux-x86_64/,
# where the jar takes it from and the loader (io.etcdlock.NativeLoader) looks for it.
# Run by Maven (exec-maven-plugin, generate-resources) with DEST = target/classes.
set -euo pipefail
dest="${1:?usage: build-native.sh DEST_DIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/.."
cargo build --release -p etcdlock-java --quiet
target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
mkdir -p "$dest/META-INF/native/linux-x86_64"
out="$dest/META-INF/native/linux-x86_64/libetcdlock_jni.so"
# Without the line tables the release profile keeps for backtraces: 47 MB to 10 (under 4 MB in the jar).
# The JNI symbols are dynamic symbols, which strip --strip-debug keeps.
if command -v strip >/dev/null; then
    strip --strip-debug -o "$out" "$target/release/libetcdlock_jni.so"
else
    cp "$target/release/libetcdlock_jni.so" "$out"
fi
