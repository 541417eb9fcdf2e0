#!/usr/bin/env python3
"""Positive controls of the queue checker (queue_check.py): the same workload and nemesis with a
correct worker and with two broken ones, each of which the checker must catch.

    python3 tests/history/queue_controls.py [--modes correct,delete-on-claim,ack-after-loss,barge]

Each run, on a single-member etcd of its own: a producer puts 24 tasks, then 3 workers
(queue_worker.py, Python binding, TTL 2 s, 300 ms of work per task) handle them until none is
left. The nemesis SIGSTOPs a worker that has just claimed a task for TTL + 1.5 s (its claim ends
meanwhile and another worker takes the task), and SIGKILLs another mid-task, starting a fresh
worker in its place.

| mode | the bug | must be VIOLATED |
|---|---|---|
| correct | none: the result and the ack in one fenced transaction | nothing |
| delete-on-claim | deletes the item when it claims it (etcd's `recipe.Queue`) | Q1 (the killed worker's task is lost) |
| ack-after-loss | writes its result unfenced, then acks | Q3 (the paused worker's result after its claim ended) |
| barge | worker w0 takes the first item with a claim key of its own, past the claims there | Q2 (an item claimed while another claim lives) |

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
import queue_check  # noqa: E402

QUEUE, RESULTS = "ctl/q", "ctl/results/"
TTL = 2
EXPECT = {"correct": set(), "delete-on-claim": {"Q1"}, "ack-after-loss": {"Q3"}, "barge": {"Q2"}}


def fresh_claimer(paths: list[str], fresh_ns: int = 200_000_000, other_than: str | None = None):
    """(process, pid) of the worker whose claim succeeded last, within ``fresh_ns``, and that has
    not started acking it; else None."""
    recs = [r for p in paths if os.path.exists(p) for r in history.load([p])]
    pids = {r["process"]: r["pid"] for r in recs if r["op"] == "start"}
    last = None
    for r in recs:
        if r["op"] == "claim" and r["phase"] == "ok" and r["process"] != other_than:
            last = r if last is None or r["t"] > last["t"] else last
    if last is None or time.monotonic_ns() - last["t"] > fresh_ns:
        return None
    if any(r["process"] == last["process"] and r["op"] == "ack" and r["t"] > last["t"] for r in recs):
        return None
    return last["process"], pids.get(last["process"])


def wait_claimer(paths, limit_s=5.0, other_than=None):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        h = fresh_claimer(paths, other_than=other_than)
        if h and h[1]:
            return h
        time.sleep(0.01)
    return None


def run(mode: str, log) -> tuple[list[queue_check.Result], str, bool]:
    with control_modes.Run("queue", mode, [QUEUE + "/", RESULTS]) as r:
        def worker(name: str, extra=()):
            return r.spawn(name, "queue_worker.py", ["--queue", QUEUE, "--results", RESULTS,
                                                     "--mode", "correct" if mode == "barge" else mode, "--ttl", str(TTL), *extra])

        worker("producer", ["--produce", "24"]).wait(30)
        for i in range(3):
            worker(f"w{i}", ["--mode", "barge"] if mode == "barge" and i == 0 else [])
        paused = killed = False
        h = wait_claimer(r.paths)
        if h:
            control_modes.pause(r, h, TTL + 1.5)
            paused = True
            log(f"    nemesis: paused {h[0]} for {TTL + 1.5:.1f} s")
        h = wait_claimer(r.paths, other_than=h[0] if h else None)
        if h:
            control_modes.kill(r, h)
            killed = True
            worker("w3")
            log(f"    nemesis: killed {h[0]} mid-task")
        hist = r.finish(60, TTL + 1, log)
        records = r.records()
    results = queue_check.check(records, hist, QUEUE, RESULTS)
    claims = sum(1 for x in records if x["op"] == "claim" and x["phase"] == "ok")
    acks = sum(1 for x in records if x["op"] == "ack" and x["phase"] == "ok")
    return results, f"{claims} claims, {acks} acks ok, {len(hist['events'])} etcd events", paused and killed


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modes", default=",".join(EXPECT))
    a = p.parse_args(argv)
    return control_modes.run_modes("queue", EXPECT, control_modes.parse_modes(p, a.modes, EXPECT), run)


if __name__ == "__main__":
    sys.exit(main())
