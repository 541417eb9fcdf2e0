#!/usr/bin/env python3
"""Client instructions per cycle, the lock next to the raw-RPC loop, counted by valgrind's
callgrind while the Rust bench process runs each workload against one etcd (data in /dev/shm).

Throughput on a shared 2-core VM drifts by +-15 % between windows; instruction counts move by
under 1 % between runs, so a change to the library's request path shows in them at once.
They leave out what instructions do not measure (cache misses, lock contention, waiting), so
they complement `run.py` and `--example paired`, never replace them.

    python3 bench/instructions.py [--seconds 4] [--workloads "lock uncontended,raw uncontended"]
                                  [--bench target/release/etcdlock-bench] [--out DIR]

Needs valgrind (bindings-c/test.sh installs it for the C suite).  `callgrind_annotate --inclusive=yes --tree=calling DIR/<file>` shows where they go.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests"))
import etcd_harness  # noqa: E402


def count(bench: str, endpoint: str, workload: str, seconds: float, out: str) -> tuple[float, float]:
    """(cycles, instructions) of one window of `workload`, after a warm-up window."""
    proc = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
         bench, "--endpoints", endpoint, "--serve"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def window() -> dict:
        proc.stdin.write(f"{seconds} {workload}\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    window()
    subprocess.run(["callgrind_control", "--instr=on", str(proc.pid)], check=True, capture_output=True)
    report = window()
    subprocess.run(["callgrind_control", "--instr=off", str(proc.pid)], check=True, capture_output=True)
    proc.stdin.close()
    proc.wait(timeout=60)
    totals = subprocess.run(["callgrind_annotate", out], check=True, capture_output=True, text=True).stdout
    ir = next(int(m.group(1).replace(",", "")) for m in re.finditer(r"^\s*([\d,]+) .*PROGRAM TOTALS", totals, re.M))
    return report["cycles_per_sec"] * seconds, ir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--workloads", default="lock uncontended,raw uncontended")
    ap.add_argument("--bench", default=os.path.join(REPO, "target", "release", "etcdlock-bench"))
    ap.add_argument("--out", default=None, help="keep the callgrind files here")
    args = ap.parse_args()
    if not os.path.exists(args.bench):
        subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "etcdlock-bench"], check=True, cwd=REPO)
    out_dir = args.out or tempfile.mkdtemp(prefix="etcdlock-callgrind-")
    os.makedirs(out_dir, exist_ok=True)
    with etcd_harness.Cluster(1, data_root="/dev/shm" if os.path.isdir("/dev/shm") else None) as cluster:
        for workload in args.workloads.split(","):
            out = os.path.join(out_dir, re.sub(r"\W+", "_", workload.strip()) + ".callgrind")
            cycles, ir = count(args.bench, cluster.endpoints[0], workload.strip(), args.seconds, out)
            print(f"{workload.strip():>28}: {ir / cycles:>9,.0f} instructions per cycle ({cycles:.0f} cycles)  {out}")


if __name__ == "__main__":
    main()
