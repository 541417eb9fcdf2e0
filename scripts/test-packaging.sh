#!/usr/bin/env bash
# Packaging test (issues #20, #39): builds every artifact once with scripts/package.sh, then installs
# each into a clean place with cargo, rustc, rustup and protoc unusable (stubs first on PATH that
# fail and log the call; no PROTOC), and uses it against an etcd started here:
#   - the wheel in a fresh venv: the Python README's sync and asyncio examples
#     (no C compiler either: cc/gcc/c++/g++ are stubbed too);
#   - the npm tarball in an empty npm project: the Node README's examples, CJS and ESM, and the
#     loader's error for a platform without a prebuilt addon (compilers stubbed too);
#   - the C library (bindings-c/install.sh --no-build) into a fresh prefix: examples/basic.c
#     built by a CMake project (find_package(etcdlock CONFIG)) and by plain cc with pkg-config,
#     each shared (no rpath) and static, and examples/basic.cpp (the C++ RAII wrapper
#     include/etcdlock.hpp) both ways, shared; DESTDIR staging and --uninstall;
#   - the `etcdlock` command line's tarball, unpacked: stripped, no library beyond the C
#     library's, `run` and `status` against the etcd;
#   - the sdist, unpacked in an empty directory and built into a wheel by pip (cargo allowed
#     here, protoc not), which then passes the same venv test;
#   - the jar (scripts/package.sh java) installed by `mvn install:install-file` into a scratch
#     local Maven repository; a scratch Maven project that depends on it is compiled and run
#     (acquire, release, acquire again) with no cargo or rustc on PATH and nothing but the jar
#     on its class path (slf4j-api is optional: not there); its -sources and -javadoc jars, its
#     manifest and pom; the consumer again on JDK 25 with and without --enable-native-access,
#     and with an unwritable java.io.tmpdir, another architecture, musl (tests/packaging/java.sh);
#   - every binary in every artifact (the wheel's extension, the addon, the jar's JNI library, the
#     C library, the command line) needs glibc 2.17 at most (tests/packaging/glibc.py: the newest
#     GLIBC_ symbol version), and the wheel is tagged manylinux_2_17 and says so to auditwheel;
#   - in every artifact, LICENSE, THIRD-PARTY-LICENSES and NOTICE, and every crate of the graph
#     of the crate the artifact is built from named in the THIRD-PARTY-LICENSES it ships
#     (tests/packaging/notices.py; mimalloc's C code too, in the Node addon).
# `bash scripts/test-packaging.sh java` builds and checks the jar only; `... c` the C library only
# (cargo build -p etcdlock-c, then install.sh and its consumers).
# Prints "ok - ..." / "FAIL - ..." lines and exits non-zero if any check failed. Every command
# that could hang runs under `timeout`. Takes ~4 minutes when target/release is current, most of
# it the sdist's build (the crates it holds are compiled from its own copy).
set -euo pipefail
only="${1:-all}"
case "$only" in all|java|c) ;; *) echo "usage: scripts/test-packaging.sh [java|c]" >&2; exit 2 ;; esac
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
[ -x .tools/bin/etcd ] && [ -x .tools/py-build/bin/cargo-zigbuild ] || bash scripts/install-deps.sh
PY="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)"
major="${version%%.*}"
minor="${version#*.}"
minor="${minor%%.*}"
# The C library's ABI version (its SONAME libetcdlock.so.$abi): MAJOR.MINOR while MAJOR is 0,
# as every 0.x minor release may break the ABI (bindings-c/README.md, "ABI and SONAME").
abi="$major"
[ "$major" != 0 ] || abi="$major.$minor"
# A bound that an unstripped or debug build breaks (the unstripped .so is several times this), with
# room for the library to grow: the stripped .so was 7.5 MB before the election, semaphore and
# read-write lock, 8.2 MB with them, 10.1 MB with the task queue, once-per-period jobs, pools,
# fences and the prefix cache (2026-12-07).
max_mb=14

tmp="$(mktemp -d /tmp/etcdlock-packaging.XXXXXX)"
cleanup() {
    "$PY" tests/etcd_harness.py stop --state "$tmp/etcd.json" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

passed=0 failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
fail() { echo "FAIL - $*"; failed=$((failed + 1)); }
check() { # check NAME CMD...: runs CMD quietly (output shown on failure)
    local name="$1" out="$tmp/check.out"
    shift
    if "$@" >"$out" 2>&1; then ok "$name"; else cat "$out"; fail "$name"; fi
}
size_ok() { # size_ok NAME FILE: under max_mb
    local bytes
    bytes=$(stat -c %s "$2")
    echo "   $1: $(awk -v b="$bytes" 'BEGIN { printf "%.1f MB", b / 1e6 }') ($2)"
    if [ "$bytes" -lt $((max_mb * 1000 * 1000)) ]; then ok "$1 is under $max_mb MB"; else fail "$1 is $bytes bytes (over $max_mb MB)"; fi
}

# The release artifacts are linked for glibc 2.17 (scripts/zig-cc.sh): no binary in them may need
# a newer glibc symbol version.
glibc_floor=2.17
glibc_ok() { # glibc_ok NAME ARTIFACT...
    local name="$1"
    shift
    check "$name: every binary needs glibc $glibc_floor at most (newest GLIBC_ symbol version)" \
        "$PY" tests/packaging/glibc.py --max "$glibc_floor" "$@"
    "$PY" tests/packaging/glibc.py --max "$glibc_floor" "$@" 2>/dev/null | sed 's/^/   /' || true
}

# Stubs that stand in for the toolchain: whatever calls them fails, and the call is logged.
stubs="$tmp/stubs"
mkdir -p "$stubs" "$stubs-cc"
for t in cargo rustc rustup protoc; do
    printf '#!/bin/sh\necho "%s $*" >> "%s/calls.log"\necho "packaging test: %s must not be needed here" >&2\nexit 127\n' \
        "$t" "$tmp" "$t" >"$stubs/$t"
    chmod +x "$stubs/$t"
done
for t in cc gcc c++ g++ clang; do
    cp "$stubs/cargo" "$stubs-cc/$t" && sed -i "s/cargo/$t/g" "$stubs-cc/$t"
done
mkdir -p "$stubs/protoc-only"
cp "$stubs/protoc" "$stubs/protoc-only/protoc"
in_dir() { local d="$1"; shift; (cd "$d" && "$@"); }
no_toolchain() { env -u PROTOC -u CARGO -u RUSTC PATH="$stubs:$PATH" "$@"; }
no_toolchain_no_cc() { env -u PROTOC -u CARGO -u RUSTC -u CC -u CXX PATH="$stubs:$stubs-cc:$PATH" "$@"; }
calls_clean() { # calls_clean NAME: nothing called a stub since the last check
    # pip runs `rustc --version` for its User-Agent header (pip/_internal/network/session.py),
    # needed or not: that probe alone does not count.
    if [ -f "$tmp/calls.log" ]; then grep -vx 'rustc --version' "$tmp/calls.log" >"$tmp/calls.tmp" || true; mv "$tmp/calls.tmp" "$tmp/calls.log"; fi
    if [ -s "$tmp/calls.log" ]; then cat "$tmp/calls.log"; fail "$1 (called the stubs above)"; else ok "$1"; fi
    rm -f "$tmp/calls.log"
}

echo "== Packaging: build every artifact once (scripts/package.sh, with cargo but no protoc)"
dist="$tmp/dist"
t0=$SECONDS
builds="node cli python java"
[ "$only" = all ] || builds="$only"
[ "$only" != c ] || builds=""
if [ -z "$builds" ]; then
    :
elif env -u PROTOC PATH="$stubs/protoc-only:$PATH" DIST_DIR="$dist" \
        timeout 3600 bash -c 'for b in "$@"; do bash scripts/package.sh "$b" || exit 1; done' - $builds; then
    ok "scripts/package.sh ${builds// / + } ($((SECONDS - t0)) s)"
else
    fail "scripts/package.sh ${builds// / + }"
fi
calls_clean "the package builds did not call protoc"
check "THIRD-PARTY-LICENSES names every crate the binaries link, with their licence texts (up to date with Cargo.lock)" \
    "$PY" scripts/third-party-licenses.py --check
wheel="$(ls "$dist"/etcdlock-"$version"-*.whl 2>/dev/null | head -1 || true)"
sdist="$dist/etcdlock-$version.tar.gz"
tgz="$dist/etcdlock-$version.tgz"
jar="$dist/etcdlock-$version.jar"
if [ "$only" = all ]; then
    [ -f "$wheel" ] || fail "no wheel in $dist"
    [ -f "$sdist" ] || fail "no sdist in $dist"
    [ -f "$tgz" ] || fail "no npm tarball in $dist"
fi
[ -f "$jar" ] || [ "$only" = c ] || fail "no jar in $dist"

endpoint="$("$PY" tests/etcd_harness.py start --members 1 --state "$tmp/etcd.json" | tail -1)"
export ETCDLOCK_ENDPOINTS="$endpoint"
echo "== Packaging: etcd at $endpoint"

# -------------------------------------------------------------------------------------- Java ---
# (tests/packaging/java.sh: the jar, its sources and javadoc jars, Maven, JDK 25, the loader.)
# shellcheck source=tests/packaging/java.sh
. "$root/tests/packaging/java.sh"
if [ "$only" = java ]; then
    echo "== Packaging: $passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit
fi

# ------------------------------------------------------------------------------------ Python ---
py_blocks="$tmp/py-examples"
mkdir -p "$py_blocks"
# (Not named sync.py / asyncio.py: a script's own directory comes first on sys.path.)
"$PY" tests/packaging/readme_blocks.py bindings-python/README.md python 0 >"$py_blocks/readme_sync.py"
"$PY" tests/packaging/readme_blocks.py bindings-python/README.md python 1 >"$py_blocks/readme_asyncio.py"

wheel_test() { # wheel_test LABEL WHEEL
    local label="$1" whl="$2" venv="$tmp/venv-$1"
    rm -f "$tmp/calls.log"
    check "$label: fresh venv" "$PY" -m venv "$venv"
    check "$label: pip install the wheel (no index, no toolchain)" \
        no_toolchain_no_cc timeout 300 "$venv/bin/pip" install --no-index --no-deps "$whl"
    local ex
    for ex in sync asyncio; do
        # From an empty directory: `import etcdlock` is the installed package.
        if (cd "$tmp" && no_toolchain_no_cc timeout 120 "$venv/bin/python" "$py_blocks/readme_$ex.py" >"$tmp/$ex.out" 2>"$tmp/$ex.err") \
            && [ ! -s "$tmp/$ex.err" ]; then
            ok "$label: README $ex example runs"
        else
            cat "$tmp/$ex.out" "$tmp/$ex.err"; fail "$label: README $ex example"
        fi
    done
    check "$label: imported from the venv, not the checkout" \
        bash -c "cd '$tmp' && '$venv/bin/python' -c 'import etcdlock, sys; p = etcdlock.__file__; print(p); sys.exit(not p.startswith(\"$venv/\"))'"
    calls_clean "$label: nothing called cargo, rustc, protoc or a C compiler"
}

wheel_notices() { # wheel_notices LABEL WHEEL: the licences in .dist-info/licenses/, the notices complete
    local label="$1" whl="$2" d="$tmp/notices-$1" f bad=""
    mkdir -p "$d"
    for f in LICENSE THIRD-PARTY-LICENSES NOTICE; do
        unzip -p "$whl" "etcdlock-$version.dist-info/licenses/$f" >"$d/$f" 2>/dev/null && cmp -s "$d/$f" "$root/$f" || bad="$bad $f"
    done
    if [ -z "$bad" ]; then
        ok "$label: .dist-info/licenses/ holds LICENSE, THIRD-PARTY-LICENSES and NOTICE (the repository's)"
    else
        fail "$label: .dist-info/licenses/ lacks (or has another)$bad"
    fi
    check "$label: every crate linked into the extension (cargo tree -p etcdlock-python) is named in its THIRD-PARTY-LICENSES" \
        "$PY" tests/packaging/notices.py etcdlock-python "$d/THIRD-PARTY-LICENSES"
}

if [ -f "$wheel" ]; then
    echo "== Packaging: Python wheel $(basename "$wheel")"
    size_ok "wheel" "$wheel"
    case "$(basename "$wheel")" in
        *-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl) ok "wheel is abi3 (cp39), tagged manylinux2014 and manylinux_2_17" ;;
        *) fail "wheel tag: $(basename "$wheel") (want cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64)" ;;
    esac
    glibc_ok "wheel" "$wheel"
    # auditwheel (PyPI's own checker, in .tools/py-build) reads the tag back from the symbols: the
    # tag must not promise an older glibc than the extension needs.
    check "auditwheel show: the wheel is consistent with manylinux_2_17_x86_64" bash -c "
        '$root/.tools/py-build/bin/auditwheel' show '$wheel' | tr -s ' \n' ' ' | grep -q 'consistent with the following platform tag: \"manylinux_2_17_x86_64\"'"
    wheel_notices wheel "$wheel"
    wheel_test wheel "$wheel"
fi

# -------------------------------------------------------------------------------------- Node ---
if [ -f "$tgz" ]; then
    echo "== Packaging: npm tarball $(basename "$tgz")"
    size_ok "npm tarball" "$tgz"
    glibc_ok "npm tarball" "$tgz"
    tar tzf "$tgz" >"$tmp/tgz.list"
    check "npm tarball holds prebuilds/<platform>/etcdlock.node, LICENSE, no Rust sources" \
        bash -c "grep -q '^package/prebuilds/linux-x64-gnu/etcdlock.node$' '$tmp/tgz.list' && grep -q '^package/LICENSE$' '$tmp/tgz.list' \
                 && ! grep -Eq 'Cargo.toml|\.rs$|^package/etcdlock.node$' '$tmp/tgz.list'"
    check "npm tarball holds THIRD-PARTY-LICENSES and NOTICE at its root (the repository's)" bash -c "
        tar xzf '$tgz' -O package/THIRD-PARTY-LICENSES | cmp -s - '$root/THIRD-PARTY-LICENSES' \
        && tar xzf '$tgz' -O package/NOTICE | cmp -s - '$root/NOTICE'"
    mkdir -p "$tmp/npm-notices"
    tar -C "$tmp/npm-notices" -xzf "$tgz" package/THIRD-PARTY-LICENSES package/prebuilds/linux-x64-gnu/etcdlock.node 2>/dev/null || true
    check "npm: every crate linked into the addon (cargo tree -p etcdlock-node) and mimalloc's C code are named in its THIRD-PARTY-LICENSES" \
        "$PY" tests/packaging/notices.py etcdlock-node "$tmp/npm-notices/package/THIRD-PARTY-LICENSES" \
        --binary "$tmp/npm-notices/package/prebuilds/linux-x64-gnu/etcdlock.node"
    check "package.json version is Cargo's ($version)" \
        bash -c "tar xzf '$tgz' -O package/package.json | node -e 'let s=\"\";process.stdin.on(\"data\",d=>s+=d).on(\"end\",()=>process.exit(JSON.parse(s).version===\"$version\"?0:1))'"
    proj="$tmp/npm-project"
    mkdir -p "$proj"
    rm -f "$tmp/calls.log"
    check "npm init in an empty project" in_dir "$proj" npm init -y
    check "npm install the tarball (offline, no toolchain)" \
        in_dir "$proj" no_toolchain_no_cc timeout 300 npm install --offline --no-audit --no-fund "$tgz"
    cp bindings-node/examples/quickstart.cjs bindings-node/examples/quickstart.mjs "$proj/"
    for ex in quickstart.cjs quickstart.mjs; do
        if (cd "$proj" && no_toolchain_no_cc timeout 120 node "$ex" >"$tmp/$ex.out" 2>"$tmp/$ex.err") && [ ! -s "$tmp/$ex.err" ]; then
            ok "npm: README example $ex runs"
        else
            cat "$tmp/$ex.out" "$tmp/$ex.err"; fail "npm: README example $ex"
        fi
    done
    calls_clean "npm: nothing called cargo, rustc, protoc or a C compiler"
    # A platform without a prebuilt addon: the same install with its prebuilds/ taken away.
    mv "$proj/node_modules/etcdlock/prebuilds" "$tmp/prebuilds.moved"
    if (cd "$proj" && timeout 60 node -e "require('etcdlock')" >"$tmp/noaddon.out" 2>&1); then
        fail "npm: loading without a prebuilt addon should fail"
    elif grep -q "no native addon for this platform (linux-x64-gnu" "$tmp/noaddon.out"; then
        ok "npm: without an addon for the platform, the error names it (linux-x64-gnu)"
    else
        cat "$tmp/noaddon.out"; fail "npm: error without an addon does not name the platform"
    fi
    mv "$tmp/prebuilds.moved" "$proj/node_modules/etcdlock/prebuilds"
fi

# ----------------------------------------------------------------------------------------- C ---
# --------------------------------------------------------------------------------------- CLI ---
cli_tgz="$(ls "$dist"/etcdlock-cli-"$version"-*.tar.gz 2>/dev/null | head -1 || true)"
if [ -f "$cli_tgz" ]; then
    echo "== Packaging: command line $(basename "$cli_tgz")"
    size_ok "etcdlock-cli tarball" "$cli_tgz"
    glibc_ok "etcdlock-cli tarball" "$cli_tgz"
    mkdir -p "$tmp/cli-root"
    tar -C "$tmp/cli-root" -xzf "$cli_tgz"
    cli_bin="$(ls "$tmp"/cli-root/etcdlock-cli-*/bin/etcdlock)"
    check "etcdlock binary is stripped (no symbol table)" bash -c "! readelf -S '$cli_bin' | grep -q '\.symtab'"
    check "etcdlock needs no library beyond the C library's" \
        bash -c "! ldd '$cli_bin' | grep -v -E 'linux-vdso|ld-linux|libc\.so|libm\.so|libgcc_s|libpthread|libdl|librt'"
    rm -f "$tmp/calls.log"
    check "etcdlock --version" no_toolchain_no_cc timeout 10 "$cli_bin" --version
    check "etcdlock --version names the commit" \
        bash -c "timeout 10 '$cli_bin' --version | grep -Eq '^etcdlock $version \\(commit [0-9a-f]{7,}\\)\$'"
    cli_share="$(dirname "$(dirname "$cli_bin")")/share"
    check "the tarball ships completions (bash, zsh, fish) and man pages under share/" bash -c "
        test -s '$cli_share/bash-completion/completions/etcdlock' && test -s '$cli_share/zsh/site-functions/_etcdlock' \
        && test -s '$cli_share/fish/vendor_completions.d/etcdlock.fish' && test -s '$cli_share/man/man1/etcdlock.1' \
        && test -s '$cli_share/man/man1/etcdlock-run.1'"
    check "its bash completions load" bash -c "source '$cli_share/bash-completion/completions/etcdlock' && complete -p etcdlock"
    cli_top="$(dirname "$(dirname "$cli_bin")")"
    check "the tarball ships LICENSE, THIRD-PARTY-LICENSES and NOTICE (the repository's)" bash -c "
        cmp -s '$cli_top/LICENSE' '$root/LICENSE' && cmp -s '$cli_top/THIRD-PARTY-LICENSES' '$root/THIRD-PARTY-LICENSES' \
        && cmp -s '$cli_top/NOTICE' '$root/NOTICE'"
    check "etcdlock-cli: every crate linked into the command (cargo tree -p etcdlock-cli) is named in its THIRD-PARTY-LICENSES" \
        "$PY" tests/packaging/notices.py etcdlock-cli "$cli_top/THIRD-PARTY-LICENSES"
    cli_name="packaging/cli-$$"
    check "etcdlock run (ETCDLOCK_ENDPOINTS from the environment) runs the command under the lock" \
        no_toolchain_no_cc timeout 30 "$cli_bin" run "$cli_name" -- sh -c 'test -n "$ETCDLOCK_FENCING_TOKEN"'
    if no_toolchain_no_cc timeout 30 "$cli_bin" status "$cli_name" >"$tmp/status.out" 2>&1; then
        cat "$tmp/status.out"; fail "etcdlock status: the lock is free after the run (exit 1 expected)"
    else
        [ $? = 1 ] && grep -q free "$tmp/status.out" && ok "etcdlock status: free after the run" \
            || { cat "$tmp/status.out"; fail "etcdlock status"; }
    fi
    calls_clean "etcdlock: nothing called cargo, rustc, protoc or a C compiler"
else
    [ "$only" = c ] || fail "no etcdlock-cli tarball in $dist"
fi

echo "== Packaging: C library (install.sh --no-build from target/release)"
# install.sh --no-build needs no cargo: the release build above (package.sh) made the library.
check "cargo build --release -p etcdlock-c (no protoc)" env -u PROTOC PATH="$stubs/protoc-only:$PATH" cargo build --quiet --release -p etcdlock-c
stage="$tmp/stage"
rm -f "$tmp/calls.log"
check "install.sh with DESTDIR (no toolchain)" \
    no_toolchain env DESTDIR="$stage" bash bindings-c/install.sh --no-build --prefix /opt/etcdlock
lib="$stage/opt/etcdlock/lib"
check "libetcdlock.so.$version, .so.$abi and .so links, .a, headers, .pc, CMake package, LICENSE, THIRD-PARTY-LICENSES, NOTICE" bash -c "
    [ -f '$lib/libetcdlock.so.$version' ] && [ ! -L '$lib/libetcdlock.so.$version' ] \
    && [ \"\$(readlink '$lib/libetcdlock.so.$abi')\" = libetcdlock.so.$version ] \
    && [ \"\$(readlink '$lib/libetcdlock.so')\" = libetcdlock.so.$abi ] \
    && [ -f '$lib/libetcdlock.a' ] && [ -f '$stage/opt/etcdlock/include/etcdlock.h' ] && [ -f '$stage/opt/etcdlock/include/etcdlock.hpp' ] \
    && [ -f '$lib/pkgconfig/etcdlock.pc' ] && [ -f '$lib/pkgconfig/etcdlock-static.pc' ] \
    && [ -f '$lib/cmake/etcdlock/etcdlockConfig.cmake' ] && [ -f '$lib/cmake/etcdlock/etcdlockConfigVersion.cmake' ] \
    && [ -f '$stage/opt/etcdlock/share/licenses/etcdlock/LICENSE' ] \
    && cmp -s '$stage/opt/etcdlock/share/licenses/etcdlock/THIRD-PARTY-LICENSES' THIRD-PARTY-LICENSES \
    && cmp -s '$stage/opt/etcdlock/share/licenses/etcdlock/NOTICE' NOTICE"
check "C: every crate linked into libetcdlock (cargo tree -p etcdlock-c) is named in share/licenses/etcdlock/THIRD-PARTY-LICENSES" \
    "$PY" tests/packaging/notices.py etcdlock-c "$stage/opt/etcdlock/share/licenses/etcdlock/THIRD-PARTY-LICENSES"
check "SONAME is libetcdlock.so.$abi (readelf -d)" bash -c "readelf -d '$lib/libetcdlock.so.$version' | grep -q 'Library soname: \[libetcdlock.so.$abi\]\$'"
check "the .pc files name the install prefix, not DESTDIR, and set no rpath" bash -c "
    grep -q '^prefix=/opt/etcdlock$' '$lib/pkgconfig/etcdlock.pc' && ! grep -q rpath '$lib/pkgconfig/'*.pc && ! grep -q '$stage' '$lib/pkgconfig/'*.pc"
size_ok "libetcdlock.so" "$lib/libetcdlock.so.$version"
glibc_ok "libetcdlock.so" "$lib/libetcdlock.so.$version"
check "install.sh --uninstall with DESTDIR removes every file" bash -c "
    DESTDIR='$stage' bash bindings-c/install.sh --uninstall --prefix /opt/etcdlock >/dev/null && [ -z \"\$(find '$stage' ! -type d)\" ]"

prefix="$tmp/c-prefix"
check "install.sh into a fresh prefix (no toolchain)" no_toolchain bash bindings-c/install.sh --no-build --prefix "$prefix"
calls_clean "C install: nothing called cargo, rustc or protoc"
example="$root/bindings-c/examples/basic.c"
example_cpp="$root/bindings-c/examples/basic.cpp"
run_c() { # run_c NAME BINARY [ENV...]: runs it, expects "done"
    local name="$1" bin="$2"
    shift 2
    if env "$@" timeout 60 "$bin" >"$tmp/c.out" 2>&1 && grep -q '^done$' "$tmp/c.out"; then ok "$name runs"; else cat "$tmp/c.out"; fail "$name"; fi
}
no_rpath() { # no_rpath NAME BINARY: nothing we ship put an rpath in it
    if readelf -d "$2" | grep -Eq 'RPATH|RUNPATH'; then fail "$1 has an rpath"; else ok "$1 has no rpath"; fi
}
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
check "cc + pkg-config: shared build" cc -std=c11 -Wall -Werror "$example" $(pkg-config --cflags --libs etcdlock) -o "$tmp/basic-shared"
run_c "cc + pkg-config shared (LD_LIBRARY_PATH)" "$tmp/basic-shared" LD_LIBRARY_PATH="$prefix/lib"
no_rpath "cc + pkg-config shared" "$tmp/basic-shared"
check "shared build needs libetcdlock.so.$abi" bash -c "readelf -d '$tmp/basic-shared' | grep -q 'Shared library: \[libetcdlock.so.$abi\]\$'"
# shellcheck disable=SC2046
check "c++ + pkg-config: the C++ wrapper example (etcdlock.hpp), shared" \
    c++ -std=c++11 -Wall -Wextra -Werror -pedantic "$example_cpp" $(pkg-config --cflags --libs etcdlock) -o "$tmp/basic-cpp"
run_c "c++ + pkg-config etcdlock.hpp example" "$tmp/basic-cpp" LD_LIBRARY_PATH="$prefix/lib"
# shellcheck disable=SC2046
check "cc + pkg-config --static: static build" cc -std=c11 -Wall -Werror "$example" $(pkg-config --static --cflags --libs etcdlock-static) -o "$tmp/basic-static"
run_c "cc + pkg-config --static" "$tmp/basic-static"
no_rpath "cc + pkg-config --static" "$tmp/basic-static"
check "static build needs no libetcdlock.so" bash -c "! readelf -d '$tmp/basic-static' | grep -q 'NEEDED.*libetcdlock'"
cm="$tmp/cmake-build"
check "CMake: configure (find_package(etcdlock 0.1 CONFIG))" \
    cmake -S tests/packaging/cmake -B "$cm" -DCMAKE_PREFIX_PATH="$prefix" -DEXAMPLE_C="$example" -DEXAMPLE_CPP="$example_cpp" -DCMAKE_BUILD_TYPE=Release
check "CMake: build etcdlock::etcdlock (C, C++) and etcdlock::etcdlock_static consumers" timeout 600 cmake --build "$cm" -j2
# (CMake gives build-tree executables a RUNPATH to the imported library's directory itself.)
run_c "CMake etcdlock::etcdlock (shared)" "$cm/basic_shared"
run_c "CMake etcdlock::etcdlock_static" "$cm/basic_static"
run_c "CMake etcdlock::etcdlock, C++ (etcdlock.hpp)" "$cm/basic_cpp"
check "CMake: find_package(etcdlock 9.0) is refused (version file)" bash -c "
    mkdir -p '$tmp/cm9' && printf 'cmake_minimum_required(VERSION 3.16)\nproject(x C)\nfind_package(etcdlock 9.0 CONFIG REQUIRED)\n' > '$tmp/cm9/CMakeLists.txt' \
    && ! cmake -S '$tmp/cm9' -B '$tmp/cm9/b' -DCMAKE_PREFIX_PATH='$prefix' >/dev/null 2>&1"
check "install.sh --uninstall removes every file" bash -c "
    bash bindings-c/install.sh --uninstall --prefix '$prefix' >/dev/null && [ -z \"\$(find '$prefix' ! -type d)\" ]"

# ------------------------------------------------------------------------------------- sdist ---
if [ -f "$sdist" ]; then
    echo "== Packaging: sdist $(basename "$sdist"), built into a wheel in an empty directory"
    tar tzf "$sdist" >"$tmp/sdist.list"
    check "sdist holds core, the patched etcd-client, Cargo.lock, LICENSE, THIRD-PARTY-LICENSES, NOTICE" bash -c "
        grep -q '^etcdlock-$version/core/src/lib.rs$' '$tmp/sdist.list' && grep -q '^etcdlock-$version/third_party/etcd-client/src/lib.rs$' '$tmp/sdist.list' \
        && grep -q '^etcdlock-$version/Cargo.lock$' '$tmp/sdist.list' && grep -q '^etcdlock-$version/LICENSE$' '$tmp/sdist.list' \
        && grep -q '^etcdlock-$version/bindings-python/THIRD-PARTY-LICENSES$' '$tmp/sdist.list' \
        && grep -q '^etcdlock-$version/bindings-python/NOTICE$' '$tmp/sdist.list'"
    sbuild="$tmp/sdist-build"
    mkdir -p "$sbuild"
    tar -C "$sbuild" -xzf "$sdist"
    # maturin dates every file in the sdist 2006: older than the copied fingerprints below, so
    # cargo would take the checkout's compiled core and etcd-client as the sdist's (same paths in
    # the workspace, same unit hashes) and compile neither. Dated now, they are compiled.
    find "$sbuild" -type f -exec touch -c {} +
    # pip's isolated build (maturin from the index) with cargo but no protoc, into a copy of the
    # workspace's release build: the crates.io crates are reused from it (compiling them again
    # would cost ~10 minutes of CI). Not into target/ itself: the crates that the sdist holds
    # (core, etcd-client, the binding) sit at the same paths relative to its workspace root as
    # the checkout's, so cargo gives them the same hashes, and building them there would
    # overwrite the checkout's and make every later build compile them all again.
    starget="$tmp/sdist-target"
    mkdir -p "$starget/release"
    t0=$SECONDS
    for d in deps build .fingerprint; do
        [ ! -d "$root/target/release/$d" ] || cp -a --reflink=auto "$root/target/release/$d" "$starget/release/"
    done
    echo "== Packaging: copied target/release for the sdist's build in $((SECONDS - t0)) s"
    t0=$SECONDS
    # The workspace's linker (.cargo/config.toml is not in the sdist: a user's build links with the
    # system's), given here so that the copied units are reused: cargo's fingerprints include it.
    if (cd "$sbuild" && env -u PROTOC PATH="$stubs/protoc-only:$PATH" CARGO_TARGET_DIR="$starget" \
            CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER="$root/scripts/zig-cc.sh" \
            timeout 2400 "$PY" -m pip wheel -v --no-deps --wheel-dir "$sbuild/wheel" "./etcdlock-$version") >"$tmp/sdist.log" 2>&1; then
        ok "sdist builds into a wheel ($((SECONDS - t0)) s)"
    else
        tail -40 "$tmp/sdist.log"; fail "sdist build"
    fi
    swheel="$(ls "$sbuild"/wheel/etcdlock-*.whl 2>/dev/null | head -1)"
    if [ -n "$swheel" ]; then
        check "the sdist's build compiled the sdist's own core and etcd-client" \
            bash -c "grep -Eq 'Compiling (etcdlock-)?etcd-client v[0-9.]+ \\($sbuild/' '$tmp/sdist.log' || { grep -E 'Compiling|Fresh' '$tmp/sdist.log' | grep -v registry | tail -20; exit 1; }"
        wheel_notices sdist-wheel "$swheel"
        wheel_test sdist-wheel "$swheel"
    fi
fi

echo "== Packaging: $passed passed, $failed failed"
[ "$failed" = 0 ]
