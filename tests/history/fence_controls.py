#!/usr/bin/env python3
"""Positive control of the database-fencing checker (fence_check.py): the same holders and
nemesis with holders that check their fence in the database and with holders that skip it.

    python3 tests/history/fence_controls.py [--modes correct,unchecked]

Each run, on a single-member etcd and a PostgreSQL of its own: 4 holders (fence_worker.py,
Python binding, psycopg 3) take one lock in turn (TTL 2 s) and each time write one row in a
transaction after ~300 ms of work, for 12 s. The nemesis SIGSTOPs a holder in the middle of its
transaction's work for TTL + 1.5 s: others hold and write meanwhile, then it resumes.

| mode | the bug | must be VIOLATED |
|---|---|---|
| correct | none (its late write is refused: StaleFence) | nothing |
| unchecked | no fence check in the transaction | FD1 (the paused holder's write committed after newer ones) |

Exits 1 if the correct run violates anything (or the nemesis did not pause a holder whose write
the database then refused), or the broken mode is not reported on FD1.
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
import fence_check  # noqa: E402
import history  # noqa: E402
from pg_harness import Postgres  # noqa: E402

LOCK = "ctl/fenced"
TTL, RUN_S = 2, 12.0
EXPECT = {"correct": set(), "unchecked": {"FD1"}}


def writing_holder(paths: list[str], limit_s: float):
    """(process, pid) of a holder whose write began within the last 100 ms and has not ended."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        recs = [r for p in paths if os.path.exists(p) for r in history.load([p])]
        pids = {r["process"]: r["pid"] for r in recs if r["op"] == "start"}
        ended = {r["id"] for r in recs if r["op"] == "write" and r["phase"] != "invoke"}
        open_ = [r for r in recs if r["op"] == "write" and r["phase"] == "invoke" and r["id"] not in ended]
        last = max(open_, key=lambda r: r["t"], default=None)
        if last and time.monotonic_ns() - last["t"] < 100_000_000 and pids.get(last["process"]):
            return last["process"], pids[last["process"]]
        time.sleep(0.01)
    return None


def run(mode: str, log) -> tuple[list, str, bool]:
    with Postgres() as pg, control_modes.Run("fence", mode, [LOCK + "/"]) as r:
        from etcdlock.fencing import postgres
        import psycopg
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            postgres.install(conn)
            conn.execute("CREATE TABLE ctl_writes (seq bigserial PRIMARY KEY, resource text, process text, token bigint)")
        until = time.time() + RUN_S
        for i in range(4):
            r.spawn(f"w{i}", "fence_worker.py", ["--dsn", pg.dsn, "--lock", LOCK, "--mode", mode, "--until", str(until), "--ttl", str(TTL)])
        h = writing_holder(r.paths, 6.0)
        if h:
            control_modes.pause(r, h, TTL + 1.5)
            log(f"    nemesis: paused {h[0]} in its transaction for {TTL + 1.5:.1f} s")
        hist = r.finish(until - time.time() + 20, TTL + 1, log)
        records = r.records()
        with psycopg.connect(pg.dsn) as conn:
            writes = [list(row) for row in conn.execute("SELECT seq, resource, process, token FROM ctl_writes")]
    results = fence_check.check(hist, writes, LOCK)
    refused = [x for x in records if x["op"] == "write" and x["phase"] == "fail" and x.get("error") == "StaleFence"]
    paused_refused = bool(h) and (mode != "correct" or any(x["process"] == h[0] for x in refused))
    return results, f"{len(writes)} writes committed, {len(refused)} refused as stale, {len(hist['events'])} etcd events", paused_refused


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modes", default=",".join(EXPECT))
    a = p.parse_args(argv)
    return control_modes.run_modes("fence", EXPECT, control_modes.parse_modes(p, a.modes, EXPECT), run)


if __name__ == "__main__":
    sys.exit(main())
