#!/usr/bin/env bash
# Every test suite, against real etcd servers that the suites start themselves.
# This is the README's test command, and exactly what .ci/run runs. Everything is built once in
# the release profile (cargo test, the C library, the Node addon and the Python wheel share
# target/release), then each binding's suite runs against it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh

echo "== Rust: core unit, integration, fault and interop tests"
cargo test --release --workspace --all-targets
cargo test --release --workspace --doc

echo "== Rust: core integration and fault tests again, on etcd 3.6 (built from Go modules: the version floor)"
etcd_new="$(bash scripts/build-etcd.sh)"
ETCD_BIN="$etcd_new" ETCDCTL_BIN="$PWD/.tools/bin/etcdctl" cargo test --release -p etcdlock --tests

echo "== Rust: the demo example (two workers on a local etcd it starts itself)"
cargo run --quiet --release -p etcdlock --example demo

echo "== C"
bash bindings-c/test.sh

echo "== Node"
bash bindings-node/test.sh

echo "== Python"
bash bindings-python/test.sh

echo "== Fault scenarios on a 3-member etcd 3.6 cluster, every binding's workers, judged by the history checker (tests/history)"
ETCD_BIN="$etcd_new" ETCDCTL_BIN="$PWD/.tools/bin/etcdctl" python3 -m pytest -q tests/history/test_scenarios.py tests/history/test_watch_faults.py tests/history/test_soak.py
ETCD_BIN="$etcd_new" bash scripts/soak.sh --minutes 1

echo "== Packaging: the wheel, the sdist, the npm tarball and the C library, installed and used without cargo, rustc or protoc"
bash scripts/test-packaging.sh

echo "== Conformance: every binding names every scenario that applies to it"
python3 tests/conformance/check.py

echo "== Benchmark smoke run: every language's bench runs (numbers are not checked here)"
python3 bench/run.py --rounds 1 --seconds 0.2
# The Rust bench's TLS rows and their plain twins (its own etcd serving both, client certificates),
# on etcd 3.6: 3.5 before 3.5.8 serves gRPC over TLS at half speed whoever the client (bench/README.md).
ETCD_BIN="$etcd_new" cargo run --quiet --release -p etcdlock-bench -- --rounds 1 --seconds 0.2 --only tls

echo "== The history checker's positive controls (tests/history: a correct lock must pass P1-P6, five broken ones must be caught)"
python3 tests/history/test_check.py
python3 tests/history/controls.py

echo "== The demo (all four languages, every episode, checked by tests/history/check.py; exits non-zero if a check fails)"
./demo.sh --duration 20

echo "== The demo over TLS (client certificates made for the run; every worker connects with https://)"
./demo.sh --tls --duration 12 --no-build
