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
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import control_modes  # noqa: E402
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
    with control_modes.Run("pool", mode, [POOL + "/", RESULTS]) as r:
        until = time.time() + RUN_S

        def holder(name: str, m: str) -> None:
            r.spawn(name, "pool_worker.py", ["--pool", POOL, "--slots", SLOTS, "--results", RESULTS, "--mode", m,
                                             "--until", str(until), "--ttl", str(TTL), "--reuse-delay", str(REUSE)])

        plain = "correct" if mode == "barge" else mode  # barge: one broken worker among correct ones
        for i in range(5):
            holder(f"w{i}", "barge" if mode == "barge" and i == 0 else plain)
        paused = killed = False
        h = fresh_holder(r.paths, None, 6.0)
        if h:
            control_modes.pause(r, h, TTL + 1.5)
            paused = True
            log(f"    nemesis: paused {h[0]} for {TTL + 1.5:.1f} s")
        h = fresh_holder(r.paths, h[0] if h else None, 4.0)
        if h:
            control_modes.kill(r, h)
            killed = True
            holder("w5", plain)
            log(f"    nemesis: killed {h[0]} holding a slot")
        hist = r.finish(until - time.time() + 15, TTL + REUSE + 1, log)
        records = r.records()
    results = pool_check.check(hist, POOL, RESULTS, REUSE)
    takes = sum(1 for x in records if x["op"] == "acquire" and x["phase"] == "ok")
    return results, f"{takes} slots taken, {len(hist['events'])} etcd events", paused and killed


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modes", default=",".join(EXPECT))
    a = p.parse_args(argv)
    return control_modes.run_modes("pool", EXPECT, control_modes.parse_modes(p, a.modes, EXPECT), run)


if __name__ == "__main__":
    sys.exit(main())
