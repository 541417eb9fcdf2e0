#!/usr/bin/env python3
"""The history checker's property for fencing at the database, from the database's own record of
the writes it committed (in commit order) and etcd's history of the lock's queue. Stdlib only.

    python3 tests/history/fence_check.py --etcd-history etcd.json --writes writes.json --lock L

``writes.json``: ``[[seq, resource, process, token], ...]`` as the table ``ctl_writes`` holds them
(``seq``: a sequence taken at insert, so in commit order for writes serialised on the mark's row).

FD1 holder-order: per resource, the tokens of the committed writes never go down in commit
    order: no write commits after a newer holder's (the stale holder's, paused past its TTL).
    Margin: the fewest committed writes between two holders' first writes.
FD2 written-by-a-holder: every committed token is the create revision of a key of the lock's
    queue that was its oldest live key (its holder) at some revision.
FD3 nothing-left: no queue key and no lease left at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import etcd_history  # noqa: E402
from check import Result  # noqa: E402


def _holders(events: list[dict], lock: str) -> set[int]:
    """The create revisions of every key that was the lock's holder (its queue's oldest live
    key) at some revision."""
    live: dict[str, int] = {}
    held: set[int] = set()
    for e in events:
        if not e["key"].startswith(lock + "/"):
            continue
        if e["type"] == "put":
            live.setdefault(e["key"], e["create_revision"])
        else:
            live.pop(e["key"], None)
        if live:
            held.add(min(live.values()))
    return held


def check(hist: dict, writes: list[list], lock: str) -> list[Result]:
    out = []
    writes = sorted(writes)  # by seq

    # FD1
    bad, highest = [], {}
    for seq, resource, process, token in writes:
        top = highest.get(resource)
        if top is not None and token < top[0]:
            bad.append(f"write {seq} by {process} with token {token} committed after {top[1]}'s with token {top[0]}")
        if top is None or token > top[0]:
            highest[resource] = (token, process)
    out.append(Result("FD1", "holder-order", not bad, f"{len({w[3] for w in writes})} holders", len(writes), bad))

    # FD2
    held = _holders(hist["events"], lock)
    bad = [f"write {seq} by {process}: token {token} was never the lock's holder" for seq, _, process, token in writes if token not in held]
    out.append(Result("FD2", "written-by-a-holder", not bad, "-", len(writes), bad))

    # FD3
    end = set(hist.get("keys_at_end") or [])
    left = sorted(k for k in end if k.startswith(lock + "/"))
    leases = list(hist.get("leases_at_end") or [])
    bad = [f"key left: {k}" for k in left] + [f"lease left: {x}" for x in leases]
    out.append(Result("FD3", "nothing-left", not bad, f"{len(left)} keys, {len(leases)} leases", 1, bad))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--etcd-history", required=True)
    p.add_argument("--writes", required=True)
    p.add_argument("--lock", required=True)
    a = p.parse_args(argv)
    with open(a.writes) as f:
        writes = json.load(f)
    results = check(etcd_history.load(a.etcd_history), writes, a.lock)
    for r in results:
        print(r.line())
        for ev in r.evidence[:5]:
            print(f"    {ev}")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
