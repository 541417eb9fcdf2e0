#!/usr/bin/env python3
"""Positive controls of the once-per-period checker (once_check.py): the same triggers and
nemesis with a correct job and with three broken ones, each of which the checker must catch.

    python3 tests/history/once_controls.py [--modes correct,plain-lock,unfenced,done-first]

Each run, on a single-member etcd of its own: 3 triggers (once_worker.py, Python binding, a
job every 6 s, claim TTL 2 s, 600 ms of work) trigger the job every ~400 ms from the middle of
one period to the end of the next two. In the first full period the nemesis SIGKILLs the winner
mid-job (starting a fresh trigger in its place); in the second it SIGSTOPs the winner for TTL +
1.5 s. Both periods must still end done, by a job that finished (O4).

| mode | the bug | must be VIOLATED |
|---|---|---|
| correct | none: the result fenced by the slot, then the period marked done | nothing |
| plain-lock | a try-lock of the slot and no done mark: a lock is no dedup (gocron#841) | O1 (the job ran several times in a period) |
| unfenced | writes its result with a plain put, then marks done | O3 (the paused winner's result after its claim ended) |
| done-first | marks the period done before the job | O4 (the killed winner's period done with no result) |

Exits 1 if the correct run violates anything (or the nemesis did not both kill and pause), or a
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
import once_check  # noqa: E402
from once_worker import slot_now  # noqa: E402

NAME, RESULTS = "ctl/job", "ctl/job-results/"
EVERY, TTL = 6.0, 2
EXPECT = {"correct": set(), "plain-lock": {"O1"}, "unfenced": {"O3"}, "done-first": {"O4"}}


def winner_of(paths: list[str], slot: int, limit_s: float):
    """(process, pid) of the first trigger that wins ``slot``, waiting at most ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        recs = [r for p in paths if os.path.exists(p) for r in history.load([p])]
        pids = {r["process"]: r["pid"] for r in recs if r["op"] == "start"}
        for r in recs:
            if r["op"] == "trigger" and r["phase"] == "ok" and r.get("slot") == slot and r.get("token") and pids.get(r["process"]):
                return r["process"], pids[r["process"]]
        time.sleep(0.01)
    return None


def run(mode: str, log) -> tuple[list, str, bool]:
    with control_modes.Run("once", mode, [NAME + "/", RESULTS]) as r:
        # Start 1.5 s before the next period: periods `first` and `first + 1` are then seen
        # whole, and triggers stop 1 s before the second one ends. (Period n is the time
        # nearest the boundary n * EVERY: from (n - 0.5) * EVERY to (n + 0.5) * EVERY.)
        while (slot_now(EVERY) + 0.5) * EVERY - time.time() > 1.5:
            time.sleep(0.05)
        first = slot_now(EVERY) + 1
        until = (first + 1.5) * EVERY - 1.0

        def trigger(name: str) -> None:
            r.spawn(name, "once_worker.py", ["--name", NAME, "--results", RESULTS, "--mode", mode, "--every", str(EVERY),
                                             "--until", str(until), "--ttl", str(TTL), "--work-ms", "600"])

        for i in range(3):
            trigger(f"w{i}")
        killed = paused = False
        h = winner_of(r.paths, first, EVERY + 2)
        if h:
            control_modes.kill(r, h)
            killed = True
            trigger("w3")
            log(f"    nemesis: killed {h[0]}, the winner of period {first}")
        h = winner_of(r.paths, first + 1, EVERY + 2)
        if h:
            control_modes.pause(r, h, TTL + 1.5)
            paused = True
            log(f"    nemesis: paused {h[0]}, the winner of period {first + 1}, for {TTL + 1.5:.1f} s")
        hist = r.finish(until - time.time() + 10, TTL + 1, log)
        records = r.records()
    results = once_check.check(records, hist, NAME, RESULTS, range(first, first + 2))
    wins = sum(1 for x in records if x["op"] == "trigger" and x["phase"] == "ok" and x.get("token"))
    triggers = sum(1 for x in records if x["op"] == "trigger" and x["phase"] == "ok")
    return results, f"{triggers} triggers, {wins} won, periods {first}-{first + 1}, {len(hist['events'])} etcd events", killed and paused


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modes", default=",".join(EXPECT))
    a = p.parse_args(argv)
    return control_modes.run_modes("once", EXPECT, control_modes.parse_modes(p, a.modes, EXPECT), run)


if __name__ == "__main__":
    sys.exit(main())
