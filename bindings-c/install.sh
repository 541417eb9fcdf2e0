#!/usr/bin/env bash
# Installs libetcdlock.{so,a}, etcdlock.h and etcdlock.pc under PREFIX (default /usr/local).
#   bash bindings-c/install.sh [PREFIX]          # builds in release mode first
# Then: cc app.c $(PKG_CONFIG_PATH=PREFIX/lib/pkgconfig pkg-config --cflags --libs etcdlock)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
prefix="${1:-/usr/local}"
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"

(cd "$root" && cargo build --release -p etcdlock-c)
target="$(cd "$root" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
version="$(sed -n 's/^#define ETCDLOCK_VERSION "\(.*\)"$/\1/p' "$root/include/etcdlock.h")"

install -d "$prefix/lib/pkgconfig" "$prefix/include"
install -m 0755 "$target/release/libetcdlock.so" "$prefix/lib/libetcdlock.so"
install -m 0644 "$target/release/libetcdlock.a" "$prefix/lib/libetcdlock.a"
install -m 0644 "$root/include/etcdlock.h" "$prefix/include/etcdlock.h"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" "$here/etcdlock.pc.in" > "$prefix/lib/pkgconfig/etcdlock.pc"
echo "installed etcdlock $version under $prefix"
