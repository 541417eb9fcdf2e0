#!/usr/bin/env python3
"""A lock holder that writes to PostgreSQL, for the database-fencing checker's controls (Python
binding, psycopg 3).

    fence_worker.py --endpoints E --dsn DSN --lock NAME --history FILE --process NAME \\
        --mode MODE --until T [--ttl 2] [--work-ms 300]

Until the wall-clock time ``--until``: takes the lock (recorded ``acquire``, ok with ``token``),
begins a transaction (recorded ``write`` invoke), works, then in that transaction checks the
lock's fence against the database's mark (``etcdlock.fencing.postgres.check``), inserts
``(resource, process, token)`` into ``ctl_writes`` and commits (``write`` ok, or failed
``StaleFence``), and releases. Modes:

- ``correct``: as above.
- ``unchecked``: skips the fence check: a holder paused past its TTL commits its write after a
  newer holder's (FD1).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import psycopg  # noqa: E402

import etcdlock  # noqa: E402
from etcdlock.fencing import StaleFence, postgres  # noqa: E402
from history import Recorder  # noqa: E402

MODES = ("correct", "unchecked")


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    for flag in ("--endpoints", "--dsn", "--lock", "--history", "--process"):
        p.add_argument(flag, required=True)
    p.add_argument("--mode", choices=MODES, default="correct")
    p.add_argument("--until", type=float, required=True, help="wall-clock time (time.time()) to stop")
    p.add_argument("--ttl", type=int, default=2)
    p.add_argument("--work-ms", type=int, default=300)
    a = p.parse_args(argv)
    rec = Recorder(a.history, a.process)
    rec.event("start", pid=os.getpid())
    client = etcdlock.Client(a.endpoints)
    conn = psycopg.connect(a.dsn)  # READ COMMITTED, PostgreSQL's default
    rng = random.Random(a.process)
    lock = client.lock(a.lock, ttl=a.ttl)
    while time.time() < a.until:
        op = rec.invoke("acquire")
        if not lock.acquire(timeout=8.0):
            rec.fail(op, "LockTimeout")
            continue
        fence = lock.fence()
        rec.ok(op, token=fence.token)
        w = rec.invoke("write", token=fence.token)
        try:
            with conn.transaction():
                time.sleep(a.work_ms / 1000 * rng.uniform(0.7, 1.3))
                if a.mode != "unchecked":
                    postgres.check(conn, fence)
                conn.execute("INSERT INTO ctl_writes (resource, process, token) VALUES (%s, %s, %s)",
                             (a.lock, a.process, fence.token))
            rec.ok(w)
        except StaleFence:
            rec.fail(w, "StaleFence")
        rel = rec.invoke("release", token=fence.token)
        try:
            lock.release()
            rec.ok(rel)
        except etcdlock.NotHeld as e:
            rec.fail(rel, type(e).__name__)
    conn.close()
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
