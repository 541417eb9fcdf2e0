#!/usr/bin/env python3
"""Positive controls of the prefix cache checker (cache_check.py): the same writes and nemesis
with our cache and with two broken copies, each of which the checker must catch.

    python3 tests/history/cache_controls.py [--modes correct,from-now,torn-snapshot]

Each run, on a single-member etcd of its own: a follower (cache_worker.py, Python binding)
reaches etcd through a proxy (bindings-python/tests/cutproxy.py); a writer here puts and deletes
10 keys under the prefix (~150 changes/s, deleting and creating keys again) for 8 s. The nemesis
cuts the follower off for 2 s twice: the first time the history is compacted meanwhile (the
copy must read the prefix again: a resync), the second time not (its watch resumes).

| mode | the bug | must be VIOLATED |
|---|---|---|
| correct | none (one resync) | nothing |
| from-now | a plain watch dropped and opened again from "now" every second | CA1 (changes lost between watches), CA2 |
| torn-snapshot | the copy's revision read apart from its entries | CA2 |

Exits 1 if the correct run violates anything (or did not resync), or a broken mode is not
reported on its properties.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bindings-python", "tests"))

import cache_check  # noqa: E402
import control_modes  # noqa: E402
import etcd_harness  # noqa: E402
import etcdlock  # noqa: E402
from cutproxy import CutProxy  # noqa: E402

PREFIX = "ctl/cache/"
RUN_S = 8.0
EXPECT = {"correct": set(), "from-now": {"CA1", "CA2"}, "torn-snapshot": {"CA2"}}


def writer(endpoints: str, until: float, stop: threading.Event) -> None:
    rng = random.Random(7)
    with etcdlock.Client(endpoints) as c:
        n = 0
        while time.time() < until and not stop.is_set():
            key = f"{PREFIX}k{rng.randrange(10)}"
            if rng.random() < 0.3:
                c.delete(key)
            else:
                c.put(key, f"v{n}")
            n += 1
            time.sleep(0.006)


def run(mode: str, log) -> tuple[list, str, bool]:
    with control_modes.Run("cache", mode, [PREFIX]) as r:
        port = int(r.endpoints.split(",")[0].rsplit(":", 1)[1])
        proxy = CutProxy(port)
        until = time.time() + RUN_S + 1.5
        stop = threading.Event()
        w = threading.Thread(target=writer, args=(r.endpoints, time.time() + RUN_S, stop), daemon=True)
        w.start()
        r.spawn("f0", "cache_worker.py", ["--prefix", PREFIX, "--mode", mode, "--until", str(until)], endpoints=proxy.endpoint)
        time.sleep(1.5)
        with etcdlock.Client(r.endpoints) as c:
            proxy.cut()
            r.nemesis.event("cut")
            time.sleep(1.0)
            head = c.put(f"{PREFIX}.compact", "x")
            subprocess.run([etcd_harness.find_etcdctl(), f"--endpoints={r.endpoints}", "compaction", str(head)],
                           check=True, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
            r.nemesis.event("compact", revision=head)
            time.sleep(1.0)
            proxy.restore()
            r.nemesis.event("restore")
            time.sleep(1.5)
            proxy.cut()
            time.sleep(2.0)
            proxy.restore()
        w.join(RUN_S + 5)
        hist = r.finish(until - time.time() + 15, 0, log, cross_check=False)
        records = r.records()
        proxy.close()
    results = cache_check.check(hist, records, PREFIX)
    resyncs = sum(1 for x in records if x["op"] == "ev" and x.get("type") == "resynced")
    evs = sum(1 for x in records if x["op"] == "ev")
    return results, f"{evs} events, {resyncs} resyncs, {len(hist['events'])} etcd events", mode != "correct" or resyncs >= 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modes", default=",".join(EXPECT))
    a = p.parse_args(argv)
    return control_modes.run_modes("cache", EXPECT, control_modes.parse_modes(p, a.modes, EXPECT), run)


if __name__ == "__main__":
    sys.exit(main())
