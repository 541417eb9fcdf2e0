#!/usr/bin/env python3
"""Positive controls of the lock set checker (lockset_check.py): the same holders and nemesis
with a correct holder and with three broken ones, each of which the checker must catch.

    python3 tests/history/lockset_controls.py [--modes correct,unfenced,one-by-one,first-only]

Each run, on a single-member etcd of its own: 4 holders (lockset_worker.py, Python binding)
take random sets of 2 or 3 of 4 names in random orders (TTL 2 s, timeout 8 s), work ~100 ms,
write their result through the set and release, for 12 s. The nemesis SIGSTOPs a holder that
has just taken its set for TTL + 1.5 s (its set goes to others), and SIGKILLs another (a fresh
holder takes its place).

| mode | the bug | must be VIOLATED |
|---|---|---|
| correct | none | nothing |
| unfenced | writes its result with a plain put | LS1 (the paused holder's result after its keys ended) |
| one-by-one | a lock per name, taken in the caller's order | LS3 (opposite orders wait for each other until a timeout) |
| first-only | takes the first name only | LS2 (a result for names it did not hold) |

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
import lockset_check  # noqa: E402
from pool_controls import fresh_holder  # noqa: E402

NAMES = ["ctl/ls/n0", "ctl/ls/n1", "ctl/ls/n2", "ctl/ls/n3"]
RESULTS = "ctl/ls-results/"
TTL, RUN_S = 2, 12.0
EXPECT = {"correct": set(), "unfenced": {"LS1"}, "one-by-one": {"LS3"}, "first-only": {"LS2"}}


def run(mode: str, log) -> tuple[list, str, bool]:
    with control_modes.Run("lockset", mode, [n + "/" for n in NAMES] + [RESULTS]) as r:
        until = time.time() + RUN_S

        def holder(name: str) -> None:
            r.spawn(name, "lockset_worker.py", ["--names", ",".join(NAMES), "--results", RESULTS, "--mode", mode,
                                                "--until", str(until), "--ttl", str(TTL)])

        for i in range(4):
            holder(f"w{i}")
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
            holder("w4")
            log(f"    nemesis: killed {h[0]} holding its set")
        hist = r.finish(until - time.time() + 20, TTL + 1, log)
        records = r.records()
    results = lockset_check.check(hist, records, NAMES, RESULTS)
    takes = sum(1 for x in records if x["op"] == "acquire" and x["phase"] == "ok")
    return results, f"{takes} sets taken, {len(hist['events'])} etcd events", paused and killed


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modes", default=",".join(EXPECT))
    a = p.parse_args(argv)
    return control_modes.run_modes("lockset", EXPECT, control_modes.parse_modes(p, a.modes, EXPECT), run)


if __name__ == "__main__":
    sys.exit(main())
