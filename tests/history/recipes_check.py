#!/usr/bin/env python3
"""The history checker's properties for the primitives beside the mutex: a semaphore of N, a
read-write lock, an election. Same records as check.py (the clients' history and etcd's), and
the same verdict lines.

    python3 tests/history/recipes_check.py --kind semaphore --permits 3 --etcd-history etcd.json \\
        --lock-prefix ctl/lock/ --data-prefix ctl/data/x history.jsonl [more.jsonl ...]

R1 writes-by-holder, by the primitive's rule, from etcd's history alone: every put under the data
prefix was made by a recorded write (same key and value, ended ok or unknown) whose token's queue
key held *at that revision* by the rule:
- ``semaphore``: fewer than N live waiter keys of its name are older than it (at most N);
- ``rwlock``: a writer's key (value ``rw=w;...``, or no marker: a plain lock) is the oldest live
  key; a reader's (``rw=r;...``) has no older live writer's key (readers xor a writer);
- ``election`` (and ``mutex``): it is the oldest live key (one leader per term).
Plus check.py's P4 nothing-left and P6 held-before-delete, which hold for every primitive. (P1,
P3 and P5 are the mutex's head rule; P2 needs one holder at a time.)
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from typing import Callable, Optional

import check
from check import Result

KINDS = ("mutex", "semaphore", "rwlock", "election")

# alive: key -> (create revision, value) of one name's live keys; -> None if `token` holds,
# else why not.
Rule = Callable[[dict[str, tuple[int, str]], int], Optional[str]]


def _writer(value: Optional[str]) -> bool:
    return not (value or "").startswith("rw=r;")


def rule(kind: str, permits: int = 1) -> Rule:
    def rule_fn(alive: dict[str, tuple[int, str]], token: int) -> Optional[str]:
        mine = next((v for cr, v in alive.values() if cr == token), None)
        older = sorted((cr, v) for cr, v in alive.values() if cr < token)
        if kind == "semaphore":
            return None if len(older) < permits else f"{len(older)} older keys were live (permits {permits})"
        if kind == "rwlock" and not _writer(mine):
            writers = [cr for cr, v in older if _writer(v)]
            return None if not writers else f"a reader while the writer key {writers[0]} was live before it"
        return None if not older else f"not the oldest key ({older[0][0]} was live before it)"
    return rule_fn


def r1(ops: list[dict], events: list[dict], lock_prefix: str, data_prefix: str, holds: Rule) -> Result:
    writes = [o for o in ops if o["op"] == "write"]
    by_kv: dict[tuple, list[dict]] = defaultdict(list)
    for w in writes:
        by_kv[(w.get("data_key"), None if w.get("value") is None else str(w["value"]))].append(w)
    alive: dict[str, dict[str, tuple[int, str]]] = defaultdict(dict)  # name -> key -> (token, value)
    name_of: dict[int, str] = {}  # token -> name, for every key ever seen
    bad, n = [], 0
    committed = set()
    for e in sorted(events, key=lambda e: e["revision"]):
        key = e["key"]
        if key.startswith(lock_prefix) and "/" in key[len(lock_prefix.rstrip("/")):]:
            name = key.rsplit("/", 1)[0]
            if e["type"] == "put":
                cr = alive[name].get(key, (e.get("create_revision") or e["revision"], None))[0]
                alive[name][key] = (cr, e.get("value") or "")
                name_of[cr] = name
            else:
                alive[name].pop(key, None)
            continue
        if e["type"] != "put" or not key.startswith(data_prefix):
            continue
        n += 1
        committed.add((key, e.get("value")))
        r = e["revision"]
        cands = by_kv.get((key, e.get("value")), []) + \
            [w for w in by_kv.get((key, None), []) if w["phase"] in ("unknown", None)]
        live = [w for w in cands if w["phase"] in ("ok", "unknown", None)]
        if not live:
            bad.append(f"put {key}={e.get('value')!r} at rev {r} matches no write that may have committed")
            continue
        why = []
        for w in live:
            tok = int(w.get("token") or 0)
            name = name_of.get(tok)
            if name is None or all(cr != tok for cr, _ in alive[name].values()):
                why.append(f"{w['process']} token {tok}: its key was not live")
                continue
            reason = holds(alive[name], tok)
            if reason is None:
                break
            why.append(f"{w['process']} token {tok}: {reason}")
        else:
            bad.append(f"put {key}={e.get('value')!r} at rev {r} not by a holder: " + "; ".join(why[:2]))
    for w in writes:
        if w["phase"] == "ok":
            n += 1
            if (w.get("data_key"), str(w.get("value"))) not in committed:
                bad.append(f"{w['process']} was told its write {w.get('data_key')}={w.get('value')!r} committed, "
                           "but etcd's history has no such put")
    return Result("R1", "writes-by-holder (by the primitive's rule)", not bad, "-" if not bad else f"{len(bad)} bad", n, bad)


def run_check(records: list[dict], hist: dict, lock_prefix: str, data_prefix: str, kind: str, permits: int = 1,
              grace_ms: float = check.GRACE_MS) -> list[Result]:
    events = hist["events"]
    inst = check.lock_model(events, lock_prefix)
    ops, evs = check.client_ops(records)
    return [
        r1(ops, events, lock_prefix, data_prefix, rule(kind, permits)),
        check.p4(hist, inst, lock_prefix),
        check.p6(check.holds(ops, evs), inst, grace_ms * 1e6),
    ]


def main(argv=None) -> int:
    import etcd_history
    import history

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", choices=KINDS, required=True)
    p.add_argument("--permits", type=int, default=1)
    p.add_argument("--etcd-history", required=True)
    p.add_argument("--lock-prefix", required=True)
    p.add_argument("--data-prefix", required=True)
    p.add_argument("histories", nargs="+")
    a = p.parse_args(argv)
    results = run_check(history.load(a.histories), etcd_history.load(a.etcd_history), a.lock_prefix,
                        a.data_prefix, a.kind, a.permits)
    return 0 if check.report(results) else 1


if __name__ == "__main__":
    sys.exit(main())
