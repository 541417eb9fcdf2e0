#!/usr/bin/env python3
"""Positive controls of the pool checker (pool_check.py): the same holders and nemesis with a
correct holder and with three broken ones, each of which the checker must catch.

    python3 tests/history/pool_controls.py [--modes correct,unfenced,impatient,barge]

Each run, on a single-member etcd of its own: 5 holders (pool_worker.py, Python binding) take
one of 3 slots (TTL 2 s, reuse delay 3 s), work ~300 ms, write their result through the holding
and release, for 12 s. The nemesis SIGSTOPs a holder that has just taken a slot for TTL + 1.5 s
(its slot rests, then goes to another), and SIGKILLs another (a fresh holder takes its place).

| mode | the bug | must be VIOLATED |
|---|---|---|
| correct | none | nothing |
| unfenced | writes its result with a plain put | PL1 (the paused holder's result after its key ended) |
| impatient | deletes the resting marks before acquiring | PL2 (a dead holder's slot handed out before the reuse delay) |
| barge | one holder writes the first slot's key itself, over its holder | PL1 (a live holder key written again) |

Exits 1 if the correct run violates anything (or the nemesis did not both pause and kill), or a
broken mode is not reported on its property.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import control_modes  # noqa: E402
import etcd_harness  # noqa: E402
import etcd_history  # noqa: E402
import history  # noqa: E402
import pool_check  # noqa: E402

POOL, RESULTS, SLOTS = "ctl/pool", "ctl/pool-results/", "s0,s1,s2"
TTL, REUSE, RUN_S = 2, 3.0, 12.0
EXPECT = {"correct": set(), "unfenced": {"PL1"}, "impatient": {"PL2"}, "barge": {"PL1"}}


def fresh_holder(paths: list[str], other_than: str | None, limit_s: float):
    """(process, pid) of a holder that took a slot within the last 150 ms and has not begun to
    release it, waiting at most ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        recs = [r for p in paths if os.path.exists(p) for r in history.load([p])]
        pids = {r["process"]: r["pid"] for r in recs if r["op"] == "start"}
        last = max((r for r in recs if r["op"] == "acquire" and r["phase"] == "ok" and r["process"] != other_than),
                   key=lambda r: r["t"], default=None)
        if last and time.monotonic_ns() - last["t"] < 150_000_000 and pids.get(last["process"]) and not any(
                r["process"] == last["process"] and r["op"] == "release" and r["t"] > last["t"] for r in recs):
            return last["process"], pids[last["process"]]
        time.sleep(0.01)
    return None


def run(mode: str, log) -> tuple[list, str, bool]:
    tmp = tempfile.mkdtemp(prefix=f"etcdlock-poolctl-{mode}-")
    procs: list[subprocess.Popen] = []
    try:
        with etcd_harness.Cluster(1) as c:
            watcher = etcd_history.LiveWatcher(c.endpoints_str, [POOL + "/", RESULTS]).start()
            until = time.time() + RUN_S
            paths: list[str] = []

            def holder(name: str, m: str = "correct") -> subprocess.Popen:
                path = os.path.join(tmp, f"{name}.jsonl")
                paths.append(path)
                cmd = [sys.executable, os.path.join(HERE, "pool_worker.py"), "--endpoints", c.endpoints_str, "--pool", POOL,
                       "--slots", SLOTS, "--results", RESULTS, "--history", path, "--process", name, "--mode", m,
                       "--until", str(until), "--ttl", str(TTL), "--reuse-delay", str(REUSE)]
                p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(tmp, f"{name}.err"), "w"))
                procs.append(p)
                return p

            try:
                for i in range(5):
                    holder(f"w{i}", "barge" if mode == "barge" and i == 0 else ("correct" if mode == "barge" else mode))
                nem = history.Recorder(os.path.join(tmp, "nemesis.jsonl"), "nemesis")
                paused = killed = False
                h = fresh_holder(paths, None, 6.0)
                if h:
                    os.kill(h[1], signal.SIGSTOP)
                    nem.event("pause", target=h[0], pid=h[1])
                    time.sleep(TTL + 1.5)
                    os.kill(h[1], signal.SIGCONT)
                    nem.event("resume", target=h[0], pid=h[1])
                    paused = True
                    log(f"    nemesis: paused {h[0]} for {TTL + 1.5:.1f} s")
                h = fresh_holder(paths, h[0] if h else None, 4.0)
                if h:
                    os.kill(h[1], signal.SIGKILL)
                    nem.event("kill", target=h[0], pid=h[1])
                    killed = True
                    holder("w5", "correct" if mode == "barge" else mode)
                    log(f"    nemesis: killed {h[0]} holding a slot")
                for p in procs:
                    try:
                        p.wait(timeout=max(5.0, until - time.time() + 15))
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait(5)
                        log(f"    a holder (pid {p.pid}) did not finish in time: killed")
                hist = watcher.finish(settle_s=TTL + REUSE + 1, timeout=30)
            finally:
                watcher.stop()
                for p in procs:
                    if p.poll() is None:
                        os.kill(p.pid, signal.SIGCONT)
                        p.kill()
                        p.wait(5)
        records = history.load(paths + [os.path.join(tmp, "nemesis.jsonl")])
        results = pool_check.check(hist, POOL, RESULTS, REUSE)
        takes = sum(1 for r in records if r["op"] == "acquire" and r["phase"] == "ok")
        return results, f"{takes} slots taken, {len(hist['events'])} etcd events", paused and killed
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modes", default=",".join(EXPECT))
    a = p.parse_args(argv)
    return control_modes.run_modes("pool", EXPECT, control_modes.parse_modes(p, a.modes, EXPECT), run)


if __name__ == "__main__":
    sys.exit(main())
