#!/usr/bin/env python3
"""A lock set holder for the lock set checker's controls, on the Python binding.

    lockset_worker.py --endpoints E --names n0,n1,n2,n3 --results R --history FILE \\
        --process NAME --mode MODE --until T [--ttl 2] [--timeout 8] [--work-ms 100]

Until the wall-clock time ``--until`` it picks 2 or 3 of the names in a random order, takes them
(recorded ``acquire``, ok with ``token`` and ``names``), works, writes its result
``R<token>`` = ``<process>|<names>`` through the set (fenced by every member), and releases.
Modes:

- ``correct``: as above (``client.lock_set``).
- ``unfenced``: writes its result with a plain put after the work, held or not: a holder paused
  past its TTL writes after its set went to another (LS1).
- ``one-by-one``: takes each name with a lock of its own, in the order picked, each with the
  timeout (Curator's ``InterProcessMultiLock``); on a timeout it releases what it took. Two
  such workers with opposite orders wait for each other until one times out (LS3); its result
  is fenced by the last lock only, whose token the other names' keys do not share (LS2).
- ``first-only``: takes only the first name and writes the result for all of them (LS2).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import etcdlock  # noqa: E402
from history import Recorder  # noqa: E402

MODES = ("correct", "unfenced", "one-by-one", "first-only")


def acquire(handle, timeout):
    """``handle.acquire`` (a ``Lock`` or ``LockSet``: False on a timeout), raising LockTimeout."""
    if not handle.acquire(timeout=timeout):
        raise etcdlock.LockTimeout(f"not acquired within {timeout} s")


class OneByOne:
    """Each name's own lock, taken in order; what was taken is released on a failure."""

    def __init__(self, client, names, ttl, timeout):
        self.locks, self.token = [], None
        try:
            for n in names:
                lock = client.lock(n, ttl=ttl)
                acquire(lock, timeout)
                self.locks.append(lock)
        except BaseException:
            self.release()
            raise
        self.token = self.locks[-1].fencing_token

    def release(self):
        for lock in reversed(self.locks):
            try:
                lock.release()
            except etcdlock.NotHeld:
                pass


def take(client, mode, names, ttl, timeout):
    """(holding, token, what fences the result) for the mode."""
    if mode == "one-by-one":
        h = OneByOne(client, names, ttl, timeout)
        return h, h.token, h.locks[-1]
    if mode == "first-only":
        lock = client.lock(names[0], ttl=ttl)
        acquire(lock, timeout)
        return lock, lock.fencing_token, lock
    locks = client.lock_set(names, ttl=ttl)
    acquire(locks, timeout)
    return locks, locks.fencing_token, None if mode == "unfenced" else locks


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    for flag in ("--endpoints", "--names", "--results", "--history", "--process"):
        p.add_argument(flag, required=True)
    p.add_argument("--mode", choices=MODES, default="correct")
    p.add_argument("--until", type=float, required=True, help="wall-clock time (time.time()) to stop")
    p.add_argument("--ttl", type=int, default=2)
    p.add_argument("--timeout", type=float, default=8.0)
    p.add_argument("--work-ms", type=int, default=100)
    a = p.parse_args(argv)
    rec = Recorder(a.history, a.process)
    rec.event("start", pid=os.getpid())
    client = etcdlock.Client(a.endpoints)
    rng = random.Random(a.process)
    all_names = a.names.split(",")
    while time.time() < a.until:
        names = rng.sample(all_names, rng.choice((2, 3)))
        op = rec.invoke("acquire", names=names)
        try:
            held, token, fence = take(client, a.mode, names, a.ttl, a.timeout)
        except etcdlock.LockTimeout:
            rec.fail(op, "LockTimeout", names=names)
            continue
        rec.ok(op, token=token, names=names)
        time.sleep(a.work_ms / 1000 * rng.uniform(0.5, 1.5))
        try:
            client.put(f"{a.results}{token}", f"{a.process}|{','.join(names)}", if_held=fence)
        except etcdlock.NotHeld:
            pass
        rel = rec.invoke("release", token=token)
        try:
            held.release()
            rec.ok(rel)
        except etcdlock.NotHeld as e:
            rec.fail(rel, type(e).__name__)
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
