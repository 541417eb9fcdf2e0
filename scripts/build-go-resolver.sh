#!/usr/bin/env bash
# Builds tests/interop/go-resolver (etcd's Go naming packages: the endpoints manager and the gRPC
# resolver) into target/interop/go-resolver and prints its path. The modules come from the Go
# module proxy at the versions its go.sum pins. Quick when nothing changed (Go's build cache).
#   bash scripts/build-go-resolver.sh        (needs Go, which the machine has)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null 2>&1; then
    echo "build-go-resolver.sh: no Go toolchain on PATH or in /usr/local/go/bin" >&2
    exit 1
fi
out="$root/target/interop/go-resolver"
mkdir -p "$(dirname "$out")"
(cd "$root/tests/interop/go-resolver" && go build -trimpath -o "$out" .) >&2
echo "$out"
