#!/usr/bin/env bash
# Builds bench/go (etcd's Go client and its concurrency.Mutex, the peer bench/run.py measures the
# bindings against) into target/bench/bench_go and prints its path. The modules come from the Go
# module proxy at the versions bench/go/go.sum pins, as scripts/build-etcd.sh gets etcd's.
#   bash scripts/build-go-bench.sh        (needs Go, which the machine has)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null 2>&1; then
    echo "build-go-bench.sh: no Go toolchain on PATH or in /usr/local/go/bin" >&2
    exit 1
fi
out="$root/target/bench/bench_go"
mkdir -p "$(dirname "$out")"
(cd "$root/bench/go" && go build -trimpath -o "$out" .) >&2
echo "$out"
