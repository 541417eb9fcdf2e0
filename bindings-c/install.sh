#!/usr/bin/env bash
# Installs the C library: libetcdlock.so.VERSION (SONAME libetcdlock.so.ABI, stripped: ABI is
# MAJOR.MINOR while MAJOR is 0, else MAJOR) with its libetcdlock.so.ABI and libetcdlock.so links,
# libetcdlock.a, include/etcdlock.h and the C++
# RAII wrapper include/etcdlock.hpp (with include/etcdlock_tasks.hpp, include/etcdlock_pool.hpp,
# include/etcdlock_cache.hpp and include/etcdlock_lockset.hpp, which it includes),
# pkg-config files (etcdlock.pc: shared; etcdlock-static.pc: the archive, with
# `pkg-config --static`), a CMake package (find_package(etcdlock CONFIG) -> etcdlock::etcdlock,
# etcdlock::etcdlock_static) and, in share/licenses/etcdlock/, LICENSE, THIRD-PARTY-LICENSES
# (the Rust crates linked into the library, with their licence texts) and NOTICE.
#
#   bash bindings-c/install.sh [options] [PREFIX]
#     PREFIX / --prefix DIR   where the files go (default /usr/local)
#     --libdir DIR            default PREFIX/lib (e.g. PREFIX/lib/x86_64-linux-gnu)
#     --no-build              install what target/release holds (default: cargo build it first)
#     --no-strip              keep the symbols and line tables (debuggers, valgrind suppressions)
#     --uninstall             remove exactly the files and links an install puts there
#   DESTDIR=/stage ...        stage the install under /stage (paths inside the files stay PREFIX)
#
# Then: cc app.c $(pkg-config --cflags --libs etcdlock)                  (shared)
#       cc app.c $(pkg-config --static --cflags --libs etcdlock-static)  (static)
# with PKG_CONFIG_PATH=LIBDIR/pkgconfig when PREFIX is not a standard one, and LIBDIR in the
# dynamic loader's path (ldconfig, or LD_LIBRARY_PATH) for the shared library: no rpath is set.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

prefix=/usr/local libdir="" build=1 uninstall=0 strip=1
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="$2"; shift 2 ;;
        --prefix=*) prefix="${1#*=}"; shift ;;
        --libdir) libdir="$2"; shift 2 ;;
        --libdir=*) libdir="${1#*=}"; shift ;;
        --no-build) build=0; shift ;;
        --no-strip) strip=0; shift ;;
        --uninstall) uninstall=1; shift ;;
        -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
        -*) echo "install.sh: unknown option $1" >&2; exit 2 ;;
        *) prefix="$1"; shift ;;
    esac
done
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac
prefix="${prefix%/}"
libdir="${libdir:-$prefix/lib}"
case "$libdir" in /*) ;; *) libdir="$prefix/$libdir" ;; esac
includedir="$prefix/include"
destdir="${DESTDIR:-}"
destdir="${destdir%/}"

version="$(sed -n 's/^#define ETCDLOCK_VERSION "\(.*\)"$/\1/p' "$root/include/etcdlock.h")"
major="${version%%.*}"
minor="${version#*.}"
minor="${minor%%.*}"
[ -n "$version" ] && [ -n "$major" ] && [ -n "$minor" ] || { echo "install.sh: no ETCDLOCK_VERSION in include/etcdlock.h" >&2; exit 1; }
# The ABI version in the SONAME (bindings-c/build.rs): every 0.x minor release may break the ABI.
abi="$major"
[ "$major" != 0 ] || abi="$major.$minor"

case "$(uname -s)" in
    Darwin) so=libetcdlock.dylib; so_abi="libetcdlock.$abi.dylib"; so_real="libetcdlock.$version.dylib" ;;
    *) so=libetcdlock.so; so_abi="libetcdlock.so.$abi"; so_real="libetcdlock.so.$version" ;;
esac

# Every path an install creates, relative to DESTDIR (uninstall removes these and nothing else).
files=(
    "$libdir/$so_real" "$libdir/$so_abi" "$libdir/$so" "$libdir/libetcdlock.a"
    "$includedir/etcdlock.h" "$includedir/etcdlock.hpp" "$includedir/etcdlock_tasks.hpp" "$includedir/etcdlock_pool.hpp" "$includedir/etcdlock_cache.hpp" "$includedir/etcdlock_lockset.hpp"
    "$libdir/pkgconfig/etcdlock.pc" "$libdir/pkgconfig/etcdlock-static.pc"
    "$libdir/cmake/etcdlock/etcdlockConfig.cmake" "$libdir/cmake/etcdlock/etcdlockConfigVersion.cmake"
    "$prefix/share/licenses/etcdlock/LICENSE" "$prefix/share/licenses/etcdlock/THIRD-PARTY-LICENSES"
    "$prefix/share/licenses/etcdlock/NOTICE"
)

if [ "$uninstall" = 1 ]; then
    for f in "${files[@]}"; do rm -f "$destdir$f"; done
    # Only the directories that are ours and now empty.
    for d in "$libdir/cmake/etcdlock" "$prefix/share/licenses/etcdlock"; do
        rmdir "$destdir$d" 2>/dev/null || true
    done
    echo "uninstalled etcdlock $version from $destdir$prefix"
    exit 0
fi

if [ "$build" = 1 ]; then
    (cd "$root" && cargo build --release -p etcdlock-c)
fi
# The target dir: CARGO_TARGET_DIR, else cargo's answer after a build, else <repo>/target
# (--no-build asks cargo nothing: it may not be installed).
target="${CARGO_TARGET_DIR:-}"
if [ -z "$target" ] && [ "$build" = 1 ]; then
    target="$(cd "$root" && cargo metadata --format-version 1 --no-deps 2>/dev/null \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])' 2>/dev/null || true)"
fi
target="${target:-$root/target}"
rel="$target/release"
[ -f "$rel/$so" ] && [ -f "$rel/libetcdlock.a" ] || { echo "install.sh: no $rel/$so or libetcdlock.a (build first)" >&2; exit 1; }

# The SONAME comes from bindings-c/build.rs; a library without the right one must not ship.
if command -v readelf >/dev/null 2>&1 && [ "$so" = libetcdlock.so ]; then
    soname="$(readelf -d "$rel/$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
    [ "$soname" = "$so_abi" ] || { echo "install.sh: $rel/$so has SONAME '$soname', expected $so_abi" >&2; exit 1; }
fi

D="$destdir"
install -d "$D$libdir/pkgconfig" "$D$libdir/cmake/etcdlock" "$D$includedir" "$D$prefix/share/licenses/etcdlock"
# Stripped copies: the build keeps line tables for backtraces (~45 MB), the installed .so does not.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$rel/$so" "$tmp/$so"
cp "$rel/libetcdlock.a" "$tmp/libetcdlock.a"
if [ "$strip" = 1 ]; then
    if [ "$so" = libetcdlock.so ]; then
        strip --strip-unneeded "$tmp/$so"
        strip --strip-debug "$tmp/libetcdlock.a"
    else
        strip -x "$tmp/$so"; strip -S "$tmp/libetcdlock.a"
    fi
fi
install -m 0755 "$tmp/$so" "$D$libdir/$so_real"
ln -sfn "$so_real" "$D$libdir/$so_abi"
ln -sfn "$so_abi" "$D$libdir/$so"
install -m 0644 "$tmp/libetcdlock.a" "$D$libdir/libetcdlock.a"
install -m 0644 "$root/include/etcdlock.h" "$D$includedir/etcdlock.h"
install -m 0644 "$root/include/etcdlock.hpp" "$D$includedir/etcdlock.hpp"
install -m 0644 "$root/include/etcdlock_tasks.hpp" "$D$includedir/etcdlock_tasks.hpp"
install -m 0644 "$root/include/etcdlock_pool.hpp" "$D$includedir/etcdlock_pool.hpp"
install -m 0644 "$root/include/etcdlock_cache.hpp" "$D$includedir/etcdlock_cache.hpp"
install -m 0644 "$root/include/etcdlock_lockset.hpp" "$D$includedir/etcdlock_lockset.hpp"
# The licences: ours, the Rust crates linked into the library (with their texts) and the NOTICE.
for f in LICENSE THIRD-PARTY-LICENSES NOTICE; do
    install -m 0644 "$root/$f" "$D$prefix/share/licenses/etcdlock/$f"
done

subst() { # subst TEMPLATE OUT
    sed -e "s|@PREFIX@|$prefix|g" -e "s|@LIBDIR@|$libdir|g" -e "s|@INCLUDEDIR@|$includedir|g" \
        -e "s|@VERSION@|$version|g" -e "s|@MAJOR@|$major|g" \
        -e "s|@SO_REAL@|$so_real|g" -e "s|@SO_ABI@|$so_abi|g" "$1" > "$2"
}
subst "$here/packaging/etcdlock.pc.in" "$D$libdir/pkgconfig/etcdlock.pc"
subst "$here/packaging/etcdlock-static.pc.in" "$D$libdir/pkgconfig/etcdlock-static.pc"
subst "$here/packaging/etcdlockConfig.cmake.in" "$D$libdir/cmake/etcdlock/etcdlockConfig.cmake"
subst "$here/packaging/etcdlockConfigVersion.cmake.in" "$D$libdir/cmake/etcdlock/etcdlockConfigVersion.cmake"
echo "installed etcdlock $version under $D$prefix (libdir $libdir)"
