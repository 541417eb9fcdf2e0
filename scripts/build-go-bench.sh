#!/usr/bin/env bash
# Builds bench/go (etcd's Go client and its concurrency.Mutex, the peer bench/run.py measures the
# bindings against) into target/bench/bench_go and prints its path.
#   bash scripts/build-go-bench.sh        (needs Go, which the machine has)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"
go_build bench/go target/bench/bench_go
