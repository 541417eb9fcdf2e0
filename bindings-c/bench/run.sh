#!/usr/bin/env bash
# Builds bench.c and runs it next to the Rust bench against ONE etcd (started here, data in
# /dev/shm like the Rust bench's own) in one run; prints both JSON sets and a comparison.
#   bash bindings-c/bench/run.sh [--seconds S] [--rounds R]      (defaults 1 s, 5 rounds)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
seconds=1 rounds=5
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        *) echo "usage: $0 [--seconds S] [--rounds R]" >&2; exit 2 ;;
    esac
done
tmp="$(mktemp -d /tmp/etcdlock-c-bench.XXXXXX)"
trap 'python3 tests/etcd_harness.py stop --state "$tmp/etcd.json" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

cargo build --release -p etcdlock-c -p etcdlock-bench
target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
cc -std=c11 -O2 -Wall -Wextra -Werror -I include "$here/bench.c" -L "$target/release" -letcdlock \
    -Wl,-rpath,"$target/release" -lpthread -lm -o "$tmp/bench"

data_root=/dev/shm; [ -d /dev/shm ] && [ -w /dev/shm ] || data_root=/tmp
endpoints="$(python3 tests/etcd_harness.py start --members 1 --state "$tmp/etcd.json" --data-root "$data_root")"
echo "# etcd $endpoints, $rounds rounds of $seconds s per workload" >&2
"$target/release/etcdlock-bench" --endpoints "$endpoints" --seconds "$seconds" --rounds "$rounds" --json | tee "$tmp/rust.json"
"$tmp/bench" --endpoints "$endpoints" --seconds "$seconds" --rounds "$rounds" | tee "$tmp/c.json"

python3 - "$tmp/rust.json" "$tmp/c.json" <<'PY'
import json, sys
rust = {r["workload"]: r for r in map(json.loads, open(sys.argv[1]))}
c = [json.loads(l) for l in open(sys.argv[2])]
fmt = lambda v: "-" if v is None else f"{v:.2f}"
print("\n| workload | Rust cycles/s | C cycles/s | C/Rust | Rust handoff p50/p99 ms | C handoff p50/p99 ms | Rust Jain | C Jain |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for r in c:
    x = rust.get(r["workload"].replace("threads", "tasks"), {})  # 64 threads stand beside 64 tasks
    ratio = r["cycles_per_sec"] / x["cycles_per_sec"] if x.get("cycles_per_sec") else float("nan")
    print(f"| {r['workload']} | {x.get('cycles_per_sec', float('nan')):.0f} | {r['cycles_per_sec']:.0f} | {ratio:.2f} "
          f"| {fmt(x.get('handoff_p50_ms'))} / {fmt(x.get('handoff_p99_ms'))} "
          f"| {fmt(r['handoff_p50_ms'])} / {fmt(r['handoff_p99_ms'])} "
          f"| {fmt(x.get('jain'))} | {fmt(r['jain'])} |")
PY
