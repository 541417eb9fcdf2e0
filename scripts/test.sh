#!/usr/bin/env bash
# Every test suite, against real etcd servers that the suites start themselves.
# This is the README's test command, and exactly what .ci/run runs. Everything is built once in
# the release profile (cargo test, the C library, the Node addon and the Python wheel share
# target/release), then each binding's suite runs against it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/lib/stages.sh

stage "install the tools (etcd 3.5.1, etcdctl, openssl)" bash scripts/install-deps.sh

# One fault test does not apply to 3.5.1; it runs on 3.6.16 and 3.5.35 below.
echo "skipped on etcd 3.5.1: a_frozen_then_resumed_leader_costs_no_lock (FAULT-PAUSE-LEADER-001: before 3.5.13 a resumed old leader can revoke leases kept alive through the new one, etcd-io/etcd#15247)"
stage "Rust: core unit, integration, fault and interop tests (etcd 3.5.1)" \
    cargo test --release --workspace --all-targets -- --skip a_frozen_then_resumed_leader_costs_no_lock
stage "Rust: doc tests" cargo test --release --workspace --doc

stage "etcd 3.6.16 built from the Go module proxy" bash scripts/build-etcd.sh v3.6.16
stage "etcd 3.5.35 built from the Go module proxy" bash scripts/build-etcd.sh v3.5.35
etcd_new="$(bash scripts/build-etcd.sh v3.6.16)"
etcd_35="$(bash scripts/build-etcd.sh v3.5.35)"
ctl="$PWD/.tools/bin/etcdctl"

stage "Rust: core integration and fault tests (etcd 3.6.16)" \
    env ETCD_BIN="$etcd_new" ETCDCTL_BIN="$ctl" cargo test --release -p etcdlock --tests
stage "Rust: core integration and fault tests (etcd 3.5.35)" \
    env ETCD_BIN="$etcd_35" ETCDCTL_BIN="$ctl" cargo test --release -p etcdlock --tests

export ETCD_BIN="$etcd_new"
stage "Rust: the demo example" cargo run --quiet --release -p etcdlock --example demo
stage "C" bash bindings-c/test.sh
stage "Node" bash bindings-node/test.sh
stage "Python" bash bindings-python/test.sh
stage "Fault scenarios (history checker)" env ETCDCTL_BIN="$ctl" python3 -m pytest -q --durations=30 tests/history/test_scenarios.py tests/history/test_watch_faults.py tests/history/test_partition.py tests/history/test_soak.py
stage "soak 1 min" bash scripts/soak.sh --minutes 1
stage "Packaging" bash scripts/test-packaging.sh
stage "Conformance" python3 tests/conformance/check.py
stage "Bench smoke" python3 bench/run.py --rounds 1 --seconds 0.2
stage "Bench TLS smoke" cargo run --quiet --release -p etcdlock-bench -- --rounds 1 --seconds 0.2 --only tls
stage "Bench scale smoke" cargo run --quiet --release -p etcdlock-bench --example scale -- --locks 200 --waiters 40 --clients 4 --leases 200 --lease-ttl 5 --idle 0.5
stage "history checker controls" bash -c 'python3 tests/history/test_check.py && python3 tests/history/controls.py'
stage "demo" ./demo.sh --duration 20
stage "demo TLS" ./demo.sh --tls --duration 12 --no-build
stages_report
