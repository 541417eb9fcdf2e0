#!/usr/bin/env python3
"""A once-per-period trigger for the once checker's controls, on the Python binding.

    once_worker.py --endpoints E --name N --results R --history FILE --process NAME \\
        --mode MODE --every 6 --until T [--ttl 2] [--work-ms 1000] [--trigger-ms 400]

Until the wall-clock time ``--until`` it triggers the job ``N`` every ``--trigger-ms`` (with
jitter). A trigger is recorded ``trigger`` (ok: ``slot``, and ``token`` when it won). A winner
runs the job: ``--work-ms`` of work, then its result ``R<slot>/<token>`` = process, written
fenced by its slot, then marks the period done (recorded ``done``, ok or failed). Modes:

- ``correct``: as above.
- ``plain-lock``: a lock is no dedup (go-co-op/gocron#841): it takes the slot's lock with a
  try-lock, never looks for nor writes a done mark, and releases the lock after the job; each
  trigger that finds the lock free runs the job again in the same period (O1).
- ``unfenced``: writes its result with a plain put, whether or not its slot still holds, then
  marks done (which fails once the claim is lost). A winner paused past its TTL writes a result
  after another trigger has taken the slot (O3).
- ``done-first``: marks the period done as soon as it wins, then runs the job and writes its
  result unfenced. A winner killed mid-job leaves a period marked done whose job never
  finished (O4).
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

MODES = ("correct", "plain-lock", "unfenced", "done-first")


def slot_now(every: float) -> int:
    """The period boundary nearest now, as the library picks it."""
    return int((time.time() * 1000 + every * 500) // (every * 1000))


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    for flag in ("--endpoints", "--name", "--results", "--history", "--process"):
        p.add_argument(flag, required=True)
    p.add_argument("--mode", choices=MODES, default="correct")
    p.add_argument("--every", type=float, required=True)
    p.add_argument("--until", type=float, required=True, help="wall-clock time (time.time()) to stop triggering")
    p.add_argument("--ttl", type=int, default=2)
    p.add_argument("--work-ms", type=int, default=1000)
    p.add_argument("--trigger-ms", type=int, default=400)
    a = p.parse_args(argv)
    rec = Recorder(a.history, a.process)
    rec.event("start", pid=os.getpid())
    client = etcdlock.Client(a.endpoints)
    rng = random.Random(a.process)
    while time.time() < a.until:
        op = rec.invoke("trigger")
        if a.mode == "plain-lock":
            won = plain_lock(client, a, rec, op)
        else:
            slot = client.once(a.name, every=a.every, ttl=a.ttl).claim()
            rec.ok(op, slot=None if slot is None else slot.slot, token=None if slot is None else slot.fencing_token)
            won = slot is not None and run(client, a, rec, slot)
        if not won:
            time.sleep(a.trigger_ms / 1000 * rng.uniform(0.5, 1.5))
    client.close()
    return 0


def run(client, a, rec: Recorder, slot) -> bool:
    if a.mode == "done-first":
        mark_done(rec, slot)
    time.sleep(a.work_ms / 1000)
    fence = {"if_held": slot} if a.mode == "correct" else {}
    try:
        client.put(f"{a.results}{slot.slot}/{slot.fencing_token}", a.process, **fence)
    except etcdlock.NotHeld:
        pass  # the claim was lost: marking done below fails too, and is recorded so
    if a.mode != "done-first":
        mark_done(rec, slot)
    return True


def mark_done(rec: Recorder, slot) -> None:
    op = rec.invoke("done", slot=slot.slot, token=slot.fencing_token)
    try:
        slot.done()
        rec.ok(op)
    except etcdlock.NotHeld as e:
        rec.fail(op, type(e).__name__)


def plain_lock(client, a, rec: Recorder, op: str) -> bool:
    n = slot_now(a.every)
    lock = client.lock(f"{a.name}/slot/{n}", ttl=a.ttl)
    if not lock.acquire(timeout=0):
        rec.ok(op, slot=None, token=None)
        return False
    rec.ok(op, slot=n, token=lock.fencing_token)
    time.sleep(a.work_ms / 1000)
    done = rec.invoke("done", slot=n, token=lock.fencing_token)
    try:
        client.put(f"{a.results}{n}/{lock.fencing_token}", a.process, if_held=lock)
        rec.ok(done)  # the job's success, as this worker sees it: the lock was the only check
    except etcdlock.NotHeld as e:
        rec.fail(done, type(e).__name__)
    lock.release()
    return True


if __name__ == "__main__":
    sys.exit(main())
