#!/usr/bin/env bash
# Every test suite, against real etcd servers that the suites start themselves.
# This is the README's test command, and exactly what .ci/run runs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh

echo "== Rust: core unit, integration, fault and interop tests"
cargo test --release --workspace --all-targets
cargo test --release --workspace --doc

echo "== Rust: the demo example (two workers on a local etcd it starts itself)"
cargo run --quiet --release -p etcdlock --example demo

echo "== C"
bash bindings-c/test.sh

echo "== Node"
bash bindings-node/test.sh

echo "== Python"
bash bindings-python/test.sh
