#!/usr/bin/env bash
# Every test suite, against real etcd servers that the suites start themselves. This is the
# README's test command, and exactly what .ci/run runs.
#   bash scripts/test.sh           every suite (~30 min on 2 cores from a fresh clone; budget 35)
#   bash scripts/test.sh --quick   the unit tests, the core on one etcd version and each binding's
#                                  suite; the stages it leaves out are listed as skipped
# Each suite is a named stage (scripts/lib/stages.sh): a failed stage does not stop the others,
# the end prints a table of wall and CPU time per stage and lists every failure, and the exit
# status is non-zero if any stage failed.
#
# Everything is compiled once, by the first build stage (workspace-hack/ makes every later
# cargo, npm and maturin build reuse it). Then the suites run in groups: those that mostly wait
# on etcd (fault injection, lease expiry, watch resumption) run three or four at a time, beside
# at most one that needs the CPU; the benchmark smokes and the demos run with nothing beside
# them. The stage table at the end shows what each stage cost and what is left of the budget.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

quick=0
for arg in "$@"; do
    case "$arg" in
        --quick) quick=1 ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "test.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
    esac
done
source scripts/lib/stages.sh
# full NAME CMD...: a stage of the full run only; --quick lists it as skipped.
full() { if [ "$quick" = 1 ]; then stage_skip "$1" "left out by --quick"; else stage "$@"; fi; }
full_bg() { if [ "$quick" = 1 ]; then stage_skip "$1" "left out by --quick"; else stage_bg "$@"; fi; }

ctl="$PWD/.tools/bin/etcdctl"
etcd_new="$PWD/.tools/etcd-v3.6.16/etcd"
etcd_35="$PWD/.tools/etcd-v3.5.35/etcd"
# The bindings' suites run on 3.6.16; --quick builds no etcd and uses the installed 3.5.1.
etcd_bindings="$etcd_new"
[ "$quick" = 0 ] || etcd_bindings="$PWD/.tools/bin/etcd"

stage "the stage runner's self-test" bash scripts/lib/test-stages.sh
stage "install the tools (etcd 3.5.1, etcdctl, openssl)" bash scripts/install-deps.sh
stage "every build shares one feature resolution" bash scripts/check-features.sh
stage "no layer of core imports from one above it" bash scripts/check-layers.sh
stage "every script the docs name is executable" bash scripts/check-run-bits.sh
stage "the declared rust-version covers the locked tree" python3 scripts/check-rust-version.py
# The Go resolver program (tests/interop) too: the registry test would build it itself, later.
full_bg "etcd 3.6.16 and 3.5.35, and the Go resolver program, built from the Go module proxy" \
    bash -c 'bash scripts/build-etcd.sh v3.6.16 && bash scripts/build-etcd.sh v3.5.35 && bash scripts/build-go-resolver.sh >/dev/null'
# The bindings' crates hold no Rust tests (their suites below test the libraries they build):
# under `cargo test --all-targets` each would only compile once more, as an empty test harness
# (a minute of CPU apiece). The stage before the build keeps it so.
rust_targets=(--workspace --all-targets --exclude etcdlock-c --exclude etcdlock-python --exclude etcdlock-java --exclude etcdlock-node)
# Beside the build, in target directories of their own (nothing they compile is shared with it;
# ~2:20 of CPU together, where no stage is timing anything): a clean copy's `cargo publish
# --dry-run` with a scratch crate built from the packaged crates, no protoc anywhere; and the
# checked-in protobuf code against tonic-prost-build's.
full_bg "Rust: the crate publishes and builds from its package with no protoc" bash scripts/check-crate.sh
full_bg "the checked-in protobuf code is what tonic-prost-build generates" bash scripts/check-proto-gen.sh
# The documentation site, beside the build too (rustdoc in its own target directory; it needs
# nothing the build makes): API references from the code (rustdoc, TypeDoc, javadoc, Doxygen;
# each generator's warnings as errors), every public Python name documented, mkdocs build
# --strict into site/ and its broken-link control (scripts/docs.sh; alone, ~1:30 wall and ~1:10
# CPU with rustdoc's dependencies and its npm tools fresh, 0:20 once they are built).
full_bg "docs site (API references, mkdocs build --strict)" bash scripts/docs.sh
stage "the bindings' crates hold no Rust tests" bash -c '! grep -rnE "#\[(tokio::)?test\b|#\[cfg\(test\)\]" bindings-*/src'
stage "Rust: build every crate, test and example (release)" \
    cargo test --release "${rust_targets[@]}" --no-run
# The core once more with its features `postgres` (the database fencing helper on tokio-postgres)
# and `prometheus` (the collector for a `prometheus` crate registry), off in every build above:
# their own test binaries and the fence cost example (core/Cargo.toml's required-features). One
# build for both: the core compiles once more, not twice. scripts/check-features.sh checks that it
# shares the workspace's dependency features: it compiles the core and the two crates' own
# dependencies, nothing else.
stage "Rust: build the core with features postgres and prometheus (their tests and example)" \
    cargo test --release -p etcdlock --features postgres,prometheus --test fencing_postgres --test metrics_prometheus --example fence_cost --no-run
stage_wait

# The groups below run one after another. In each, the stages that mostly wait on etcd (fault
# injection, lease expiry, watch resumption) run in the background beside at most one stage
# that needs the CPU, in the foreground. A new suite joins the group whose foreground it does
# not compete with (docs/testing.md, "Adding a suite").

# Two tests do not apply to 3.5.1; they run on 3.6.16 and 3.5.35 below.
echo "skipped on etcd 3.5.1: a_frozen_then_resumed_leader_costs_no_lock (FAULT-PAUSE-LEADER-001: before 3.5.13 a resumed old leader can revoke leases kept alive through the new one, etcd-io/etcd#15247)"
echo "skipped on etcd 3.5.1: a_quiet_watch_resumes_past_a_compaction_of_what_it_did_not_watch (WATCH-PROGRESS-001: before 3.5.8 etcd answers progress requests for unsynced watches too, so the client does not use them, etcd-io/etcd#15220)"
stage_bg "Rust: unit, integration, fault and interop tests (etcd 3.5.1)" \
    cargo test --release "${rust_targets[@]}" -- --skip a_frozen_then_resumed_leader_costs_no_lock --skip a_quiet_watch_resumes_past_a_compaction
stage_bg "Python" env ETCD_BIN="$etcd_bindings" bash bindings-python/test.sh
stage_bg "C" env ETCD_BIN="$etcd_bindings" bash bindings-c/test.sh
# A throwaway PostgreSQL (tests/pg_harness.py) and the shared etcd; then the README's and the
# module's examples that need the feature (its doc tests: ~1 s, nothing compiles again).
stage_bg "Rust: fencing at PostgreSQL and the prometheus collector (core with features postgres, prometheus)" \
    bash -c 'cargo test --release -p etcdlock --features postgres,prometheus --test fencing_postgres --test metrics_prometheus && cargo test --release -p etcdlock --features postgres,prometheus --doc -- postgres PrometheusCollector ReadmeDoctests RustManualDoctests'
# The foreground: the workers' builds (C's and Node's libraries, which their suites then reuse),
# then Node (its contention test wants the CPU the builds above take at their start), then Java.
full "the demo's and the soak's workers (Rust, C, Node)" \
    python3 -c 'import sys; sys.path.insert(0, "demo"); import workers; workers.build(["rust", "c", "node"])'
stage "Node" env ETCD_BIN="$etcd_bindings" bash bindings-node/test.sh
stage "Java" env ETCD_BIN="$etcd_bindings" bash bindings-java/test.sh
# Not etcdlock-etcd-client's: its upstream examples need an etcd on 127.0.0.1:2379 (its `doctest =
# false` does not hold against an explicit --doc). The core's examples of its main entry points
# run, each against a one-member etcd of its own (etcd-testkit, in hidden lines: .tools/bin/etcd,
# or ETCD_BIN; ~0.5 s to start, two tests at a time).
stage "Rust: doc tests" cargo test --release --workspace --doc --exclude etcdlock-etcd-client
stage_wait

export ETCD_BIN="$etcd_new"
# The core's tests again on the newest etcd and on the last 3.5 (same binaries: nothing compiles).
full_bg "Rust: core integration and fault tests (etcd 3.6.16)" \
    env ETCDCTL_BIN="$ctl" cargo test --release -p etcdlock --tests
full_bg "history checker: unit tests and positive controls" \
    bash -c 'python3 tests/history/test_check.py && python3 tests/history/controls.py'
# The demo, and the spans read back from OpenTelemetry's in-memory exporter through
# tracing-opentelemetry (each example starts its own etcd and exits non-zero if a check fails).
full_bg "Rust: the demo and OpenTelemetry examples" bash -c 'cargo run --quiet --release -p etcdlock --example demo && cargo run --quiet --release -p etcdlock --example opentelemetry'
full_bg "history checker: once-per-period, pool and database-fencing rules, controls" \
    bash -c 'python3 tests/history/once_controls.py && python3 tests/history/pool_controls.py && python3 tests/history/fence_controls.py'
full "Fault scenarios (history checker)" env ETCDCTL_BIN="$ctl" python3 -m pytest -q --durations=15 \
    tests/history/test_scenarios.py tests/history/test_watch_faults.py tests/history/test_partition.py tests/history/test_late_copies.py tests/history/test_soak.py
stage_wait

full_bg "Rust: core integration and fault tests (etcd 3.5.35)" \
    env ETCD_BIN="$etcd_35" ETCDCTL_BIN="$ctl" cargo test --release -p etcdlock --tests
full_bg "soak 1 min" bash scripts/soak.sh --minutes 1
full_bg "history checker: semaphore, rwlock, election and task queue rules, controls" \
    bash -c 'python3 tests/history/test_recipes_check.py && python3 tests/history/controls.py --kind semaphore --permits 2 --workers 6 && python3 tests/history/controls.py --kind rwlock && python3 tests/history/controls.py --kind election && python3 tests/history/queue_controls.py'
full_bg "history checker: prefix cache and lock set rules, controls" \
    bash -c 'python3 tests/history/cache_controls.py && python3 tests/history/lockset_controls.py'
# The Grafana dashboard (docs/grafana/) against a scrape of `etcdlock run --health-addr` (~3 s).
full_bg "the Grafana dashboard queries only exported metrics, and shows them all" python3 tests/dashboard/check.py
full "Packaging" bash scripts/test-packaging.sh
stage "Conformance" python3 tests/conformance/check.py
stage_wait

# Benchmark smoke runs and the demos: each alone (they time what they do).
full "Bench smoke" python3 bench/run.py --rounds 1 --seconds 0.2
full "Bench TLS smoke" cargo run --quiet --release -p etcdlock-bench -- --rounds 1 --seconds 0.2 --only tls
full "Bench scale smoke" cargo run --quiet --release -p etcdlock-bench --example scale -- --locks 200 --waiters 40 --clients 4 --leases 200 --lease-ttl 5 --idle 0.5
full "Bench task queue smoke" cargo run --quiet --release -p etcdlock-bench --example tasks -- --tasks 100 --workers 4
full "Bench lock set smoke" cargo run --quiet --release -p etcdlock-bench --example lockset -- --seconds 0.2
full "Bench fence cost smoke" bash -c 'python3 bench/fence.py --transactions 100 --rounds 1 && cargo run --quiet --release -p etcdlock --features postgres,prometheus --example fence_cost -- 100 1'
full "Bench prefix cache smoke" cargo run --quiet --release -p etcdlock-bench --example cache -- --keys 2000 --writers 4 --seconds 0.5
full "Bench election failover smoke" cargo run --quiet --release -p etcdlock-bench --example failover -- --rounds 1 --ttl 2 --go
full "demo" ./demo.sh --duration 20
full "demo TLS" ./demo.sh --tls --duration 12 --no-build
stages_report
