#!/usr/bin/env python3
"""A pool holder for the pool checker's controls, on the Python binding.

    pool_worker.py --endpoints E --pool P --slots s0,s1,s2 --results R --history FILE \\
        --process NAME --mode MODE --until T [--ttl 2] [--reuse-delay 3] [--work-ms 300]

Until the wall-clock time ``--until`` it takes one slot (recorded ``acquire``, ok with ``slot``
and ``token``), works, writes its result ``R<slot>/<token>`` = process through its holding
(fenced), and releases it. Modes:

- ``correct``: as above.
- ``unfenced``: writes its result with a plain put after the work, held or not: a holder paused
  past its TTL writes after its slot went to another (PL1).
- ``impatient``: deletes the pool's resting marks (``<pool>/cool/``) before each acquire, so a
  dead holder's slot is handed out at once (PL2).
- ``barge``: writes ``<pool>/slot/<first slot>`` itself, over whoever holds it (PL1).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # tests/, for etcd_harness

import etcdlock  # noqa: E402
from history import Recorder  # noqa: E402

MODES = ("correct", "unfenced", "impatient", "barge")


def etcdctl(endpoints: str, *args: str) -> str:
    import etcd_harness
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ETCD_", "ETCDCTL_"))}
    env["ETCDCTL_API"] = "3"
    return subprocess.run([etcd_harness.find_etcdctl(), f"--endpoints={endpoints}", *args], capture_output=True,
                          text=True, timeout=10, env=env, stdin=subprocess.DEVNULL, check=True).stdout


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    for flag in ("--endpoints", "--pool", "--slots", "--results", "--history", "--process"):
        p.add_argument(flag, required=True)
    p.add_argument("--mode", choices=MODES, default="correct")
    p.add_argument("--until", type=float, required=True, help="wall-clock time (time.time()) to stop")
    p.add_argument("--ttl", type=int, default=2)
    p.add_argument("--reuse-delay", type=float, default=3.0)
    p.add_argument("--work-ms", type=int, default=300)
    a = p.parse_args(argv)
    rec = Recorder(a.history, a.process)
    rec.event("start", pid=os.getpid())
    client = etcdlock.Client(a.endpoints)
    pool = client.pool(a.pool, slots=a.slots.split(","), ttl=a.ttl, reuse_delay=a.reuse_delay)
    rng = random.Random(a.process)
    while time.time() < a.until:
        if a.mode == "barge":
            barge(a, rec)
            continue
        if a.mode == "impatient":
            etcdctl(a.endpoints, "del", "--prefix", f"{a.pool}/cool/")
        op = rec.invoke("acquire")
        try:
            held = pool.acquire(count=1, timeout=3.0)
        except etcdlock.LockTimeout:
            rec.fail(op, "LockTimeout")
            continue
        slot = held.slots[0]
        token = held.tokens[slot]
        rec.ok(op, slot=slot, token=token)
        time.sleep(a.work_ms / 1000 * rng.uniform(0.7, 1.3))
        result = f"{a.results}{slot}/{token}"
        try:
            if a.mode == "unfenced":
                client.put(result, a.process)
            else:
                client.put(result, a.process, if_held=held)
        except etcdlock.NotHeld:
            pass
        rel = rec.invoke("release", slot=slot, token=token)
        try:
            held.release()
            rec.ok(rel)
        except etcdlock.NotHeld as e:
            rec.fail(rel, type(e).__name__)
    client.close()
    return 0


def barge(a, rec: Recorder) -> None:
    """Takes the first slot by writing its key, whoever holds it; then a result for it."""
    import json
    slot = a.slots.split(",")[0]
    op = rec.invoke("acquire")
    token = json.loads(etcdctl(a.endpoints, "put", f"{a.pool}/slot/{slot}", "barged", "-w", "json"))["header"]["revision"]
    rec.ok(op, slot=slot, token=token)
    time.sleep(a.work_ms / 1000)
    etcdctl(a.endpoints, "put", f"{a.results}{slot}/{token}", a.process)
    etcdctl(a.endpoints, "del", f"{a.pool}/slot/{slot}")
    time.sleep(0.5)


if __name__ == "__main__":
    sys.exit(main())
