#!/usr/bin/env python3
"""The history checker: client histories (history.py records) against etcd's own history
(etcd_history.py), property by property. Stdlib only.

    python3 tests/history/check.py --etcd-history etcd.json --lock-prefix demo/lock/ \\
        --data-prefix demo/data/ h-*.jsonl

prints one line per property, ``P1 <name>: ok|VIOLATED  worst margin ...  (n checked)``, then
up to a few lines of evidence for each violated one, and exits 1 if any is violated. As a
module: ``check(records, etcd_hist, lock_prefix, data_prefix) -> list[Result]``.

Lock keys are ``<name>/<lease hex>`` under the lock prefix; a key's instance is named by its
create revision (the fencing token), because one lease puts the same key again for each
acquisition. The queue head of a name at a revision is its live key with the lowest create
revision. Times are CLOCK_MONOTONIC ns: the clients' ``t`` and the live watcher's ``t_obs`` (the
moment etcd's event was read, an upper bound of when it happened).

P1 writes-by-holder: every put under the data prefix in etcd's history matches a recorded
   ``write`` (same data_key and value, ended ok/unknown or not at all) whose token's key was the
   head of its queue at the put's revision; every write acknowledged ok is in etcd's history.
   Margin: the fewest revisions between a write and the end of its writer's tenure.
P2 tokens-increase: per name, tokens of successful acquires ordered by completion time
   strictly increase. Margin: the smallest step.
P3 fifo: per name, every claimed token's key was at some revision the head of the queue (no
   barging past a live earlier key; keys deleted before the head are skipped), and claims don't
   overlap: each starts after every earlier held interval ended (grace). Margin: the largest
   overlap (negative: the smallest gap between holders).
P4 nothing-left: no key under the lock prefix and no lease left at the end.
P5 no-ghost: an acquire that ended fail/unknown (or never ended) left no holder: its key (from
   ``key``, or ``name`` + ``lease`` hex) is deleted within --p5-bound-ms of the failure; and
   every key that became head without any successful acquire claiming it stopped being head
   within that bound. Margin: the worst time from failure (or from becoming head) to deletion.
P6 held-before-delete: a held interval (acquire ok -> release invoke, lost event, or the
   nemesis's pause/kill of that process) ends no later than the server deleted its key, plus
   --grace-ms. Margin: the worst end minus observed deletion, in ms.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import etcd_history  # noqa: E402
import history  # noqa: E402

GRACE_MS = 50.0
P5_BOUND_MS = 2000.0
INF = math.inf


@dataclass
class Result:
    prop: str
    name: str
    ok: bool
    worst: str
    n: int
    evidence: list[str] = field(default_factory=list)

    def line(self) -> str:
        return f"{self.prop} {self.name}: {'ok' if self.ok else 'VIOLATED'}  worst margin {self.worst}  ({self.n} checked)"


def _ms(ns: float) -> str:
    if ns == INF:
        return "inf"
    if ns == -INF:
        return "-inf"
    return f"{ns / 1e6:+.1f} ms"


def _lease_int(x) -> Optional[int]:
    if x is None:
        return None
    if isinstance(x, int):
        return x
    try:
        return int(str(x), 16)
    except ValueError:
        return None


# ------------------------------------------------------------------ etcd's side -------------

@dataclass
class Instance:
    """One life of a queue key: from its creating put to its delete."""
    key: str
    name: str
    token: int  # create revision
    lease: Optional[int]
    t_create: Optional[int]
    del_rev: Optional[int] = None
    t_del: Optional[int] = None
    head_rev: Optional[int] = None
    t_head: Optional[int] = None
    head_end_rev: Optional[int] = None
    t_head_end: Optional[int] = None


def lock_model(events: list[dict], lock_prefix: str) -> dict[int, Instance]:
    inst: dict[int, Instance] = {}
    alive: dict[str, dict[str, int]] = defaultdict(dict)
    head: dict[str, Optional[int]] = {}
    for e in events:
        key = e["key"]
        if not key.startswith(lock_prefix) or "/" not in key[len(lock_prefix.rstrip("/")):]:
            continue
        name = key.rsplit("/", 1)[0]
        rev, t = e["revision"], e.get("t_obs")
        if e["type"] == "put":
            if key not in alive[name]:
                cr = e.get("create_revision") or rev
                alive[name][key] = cr
                inst[cr] = Instance(key, name, cr, _lease_int(e.get("lease")), t)
        else:
            cr = alive[name].pop(key, None)
            if cr is not None:
                inst[cr].del_rev, inst[cr].t_del = rev, t
        new = min(alive[name].values()) if alive[name] else None
        old = head.get(name)
        if new != old:
            if old is not None:
                inst[old].head_end_rev, inst[old].t_head_end = rev, t
            if new is not None:
                inst[new].head_rev, inst[new].t_head = rev, t
            head[name] = new
    return inst


# ------------------------------------------------------------------ the clients' side -------

REFUSED = re.compile(r"notheld|locklost", re.I)


def client_ops(records: list[dict]) -> tuple[list[dict], list[dict]]:
    """(ops, events): each op merges its invoke with its completion: t_inv, t_end (None if it
    never completed), phase (ok/fail/unknown/None), and every field of both."""
    ops: dict[str, dict] = {}
    events = []
    for r in records:  # invokes first: a completion never needs to come later in the list
        if r["phase"] == "invoke":
            ops[r["id"]] = {**r, "t_inv": r["t"], "t_end": None, "phase": None}
    for r in records:
        ph = r["phase"]
        if ph == "invoke":
            continue
        elif ph == "event":
            events.append(r)
        else:
            op = ops.get(r["id"])
            if op is None:
                raise ValueError(f"completion without invoke: {r}")
            inv_fields = {k: v for k, v in op.items()}
            op.update({k: v for k, v in r.items() if k not in ("t",)})
            for k in ("token", "key", "name", "data_key", "value"):  # the invoke's say, unless the end adds it
                if op.get(k) is None and inv_fields.get(k) is not None:
                    op[k] = inv_fields[k]
            op["t_end"], op["phase"] = r["t"], ph
    return sorted(ops.values(), key=lambda o: o["t_inv"]), events


@dataclass
class Hold:
    process: str
    name: str
    token: int
    key: Optional[str]
    t_start: int
    t_end: Optional[int] = None
    how: str = "open"  # release | lost | pause | kill | open


def holds(ops: list[dict], events: list[dict]) -> list[Hold]:
    by_proc: dict[str, list[tuple[int, str, dict]]] = defaultdict(list)
    for o in ops:
        if o["op"] == "release":
            by_proc[o["process"]].append((o["t_inv"], "release", o))
    for e in events:
        if e["op"] == "lost":
            by_proc[e["process"]].append((e["t"], "lost", e))
        elif e["op"] in ("pause", "kill") and e.get("target"):
            by_proc[e["target"]].append((e["t"], e["op"], e))
    for v in by_proc.values():
        v.sort(key=lambda x: x[0])
    out = []
    for o in ops:
        if o["op"] != "acquire" or o["phase"] != "ok":
            continue
        token = o.get("token")
        key = o.get("key")
        name = o.get("name") or (key.rsplit("/", 1)[0] if key else None)
        h = Hold(o["process"], name, int(token) if token else 0, key, o["t_end"])
        for t, kind, r in by_proc.get(o["process"], []):
            if t < h.t_start:
                continue
            if kind in ("release", "lost"):
                same = (r.get("token") is not None and int(r["token"]) == h.token) or \
                       (r.get("token") is None and (r.get("key") == key or r.get("key") is None))
                if not same:
                    continue
            h.t_end, h.how = t, kind
            break
        out.append(h)
    return out


# ------------------------------------------------------------------ properties --------------

def p1(ops, inst, events, data_prefix) -> Result:
    writes = [o for o in ops if o["op"] == "write"]
    by_kv: dict[tuple, list[dict]] = defaultdict(list)
    for w in writes:
        by_kv[(w.get("data_key"), None if w.get("value") is None else str(w["value"]))].append(w)
    puts = [e for e in events if e["type"] == "put" and e["key"].startswith(data_prefix)]
    committed = {(e["key"], e.get("value")) for e in puts}
    bad, worst, n = [], INF, 0
    for e in puts:
        n += 1
        r = e["revision"]
        # A write whose value was not recorded (and whose outcome is not known) may be any put.
        cands = by_kv.get((e["key"], e.get("value")), []) + \
            [w for w in by_kv.get((e["key"], None), []) if w["phase"] in ("unknown", None)]
        live = [w for w in cands if w["phase"] in ("ok", "unknown", None)]
        if not cands:
            bad.append(f"put {e['key']}={e.get('value')!r} at rev {r} matches no recorded write")
            continue
        if not live:
            bad.append(f"put {e['key']}={e.get('value')!r} at rev {r} committed although its write was refused "
                       f"({cands[0]['process']}, token {cands[0].get('token')})")
            continue
        best, why = None, []
        for w in live:
            tok = int(w.get("token") or 0)
            i = inst.get(tok)
            if i is None:
                why.append(f"{w['process']} token {tok}: no such queue key")
            elif i.head_rev is None or not (i.head_rev < r and (i.head_end_rev is None or r < i.head_end_rev)):
                state = "deleted" if i.del_rev is not None and i.del_rev < r else "alive but not the head"
                holder = [x.token for x in inst.values() if x.name == i.name and x.head_rev is not None
                          and x.head_rev < r and (x.head_end_rev is None or r < x.head_end_rev)]
                why.append(f"{w['process']} token {tok}: its key {i.key} was {state} "
                           f"(holder at rev {r}: {holder[0] if holder else 'none'})")
            else:
                m = (i.head_end_rev - r) if i.head_end_rev is not None else INF
                best = m if best is None else max(best, m)
        if best is None:
            bad.append(f"put {e['key']}={e.get('value')!r} at rev {r} not by the holder: " + "; ".join(why[:2]))
        else:
            worst = min(worst, best)
    for w in writes:
        if w["phase"] == "ok":
            n += 1
            if (w.get("data_key"), str(w.get("value"))) not in committed:
                bad.append(f"{w['process']} was told its write {w.get('data_key')}={w.get('value')!r} "
                           f"(token {w.get('token')}) committed, but etcd's history has no such put")
    worst_s = f"{worst} revs before the holder's key left the head" if worst != INF else "-"
    return Result("P1", "writes-by-holder", not bad, worst_s, n, bad)


def p2(hs: list[Hold]) -> Result:
    bad, worst, n = [], INF, 0
    by_name = defaultdict(list)
    for h in hs:
        by_name[h.name].append(h)
    for name, lst in by_name.items():
        lst.sort(key=lambda h: h.t_start)
        for a, b in zip(lst, lst[1:]):
            n += 1
            step = b.token - a.token
            worst = min(worst, step)
            if step <= 0:
                bad.append(f"{name}: {b.process} acquired token {b.token} after {a.process} acquired token {a.token}")
    return Result("P2", "tokens-increase", not bad, f"{worst} revs" if worst != INF else "-", len(hs), bad)


def p3(hs: list[Hold], inst: dict[int, Instance], grace_ns: float) -> Result:
    bad, worst, n = [], -INF, 0
    by_name = defaultdict(list)
    for h in hs:
        by_name[h.name].append(h)
    for name, lst in by_name.items():
        lst.sort(key=lambda h: h.t_start)
        max_end, max_by = None, None
        for h in lst:
            n += 1
            i = inst.get(h.token)
            if i is None or i.name != name:
                bad.append(f"{name}: {h.process} claimed token {h.token}, which is no queue key of {name}")
            elif i.head_rev is None:
                bad.append(f"{name}: {h.process} claimed token {h.token}, whose key never was the queue head")
            if max_end is not None:
                overlap = max_end - h.t_start
                worst = max(worst, overlap)
                if overlap > grace_ns:
                    bad.append(f"{name}: {h.process} (token {h.token}) held while {max_by.process} (token "
                               f"{max_by.token}) still held it, for {_ms(overlap)} "
                               f"({'its hold never ended' if max_by.how == 'open' else max_by.how + ' ended it'})")
            end = h.t_end if h.t_end is not None else INF
            if max_end is None or end > max_end:
                max_end, max_by = end, h
    return Result("P3", "fifo", not bad, f"{_ms(worst)} overlap" if worst != -INF else "-", n, bad)


def p4(hist: dict, inst: dict[int, Instance], lock_prefix: str) -> Result:
    keys = [k for k in hist.get("keys_at_end", []) if k.startswith(lock_prefix)]
    leases = hist.get("leases_at_end", [])
    alive = [i for i in inst.values() if i.del_rev is None]
    bad = [f"key left: {k}" for k in keys] + [f"lease left: {lease}" for lease in leases]
    bad += [f"key alive at the sentinel: {i.key} (token {i.token})" for i in alive if i.key not in keys]
    worst = f"{len(keys)} keys, {len(leases)} leases left"
    return Result("P4", "nothing-left", not bad, worst, len(inst) + 1, bad)


def _has_times(inst) -> bool:
    return all(i.t_create is not None for i in inst.values())


def p5(ops, hs: list[Hold], inst: dict[int, Instance], bound_ns: float, t_last: int) -> Result:
    if inst and not _has_times(inst):
        return Result("P5", "no-ghost", False, "-", 0, ["etcd's history has no observation times "
                                                        "(record it with etcd_history.LiveWatcher)"])
    bad, worst, n = [], -INF, 0
    by_key = defaultdict(list)
    for i in inst.values():
        by_key[i.key].append(i)
    acq = [o for o in ops if o["op"] == "acquire"]
    next_inv = {}
    per_proc = defaultdict(list)
    for o in acq:
        per_proc[(o["process"], o.get("name"))].append(o)
    for lst in per_proc.values():
        for a, b in zip(lst, lst[1:]):
            next_inv[a["id"]] = b["t_inv"]
    unidentified = 0
    for o in acq:
        if o["phase"] == "ok":
            continue
        t_end = o["t_end"] if o["t_end"] is not None else t_last
        key = o.get("key")
        if not key and o.get("name") and o.get("lease") is not None:
            key = f"{o['name']}/{_lease_int(o['lease']):x}"
        if not key:
            unidentified += 1
            continue
        n += 1
        cut = min(t_end + bound_ns, next_inv.get(o["id"], INF))
        cands = [i for i in by_key.get(key, []) if i.t_create is not None and i.t_create < cut]
        if not cands:
            continue  # its key was never created
        i = max(cands, key=lambda i: i.token)
        gone = i.t_del if i.t_del is not None else INF
        m = gone - t_end
        worst = max(worst, m)
        if m > bound_ns:
            bad.append(f"{o['process']}'s acquire ended {o['phase'] or 'never'} ({o.get('error', '')}) but its key "
                       f"{key} (token {i.token}) stayed {('until ' + _ms(m) + ' later') if gone != INF else 'to the end'}"
                       f"{' and became the holder' if i.head_rev is not None else ''}")
    claimed = {h.token for h in hs}
    for i in inst.values():
        if i.head_rev is None or i.token in claimed:
            continue
        n += 1
        end = i.t_head_end if i.t_head_end is not None else (i.t_del if i.t_del is not None else INF)
        m = end - i.t_head
        worst = max(worst, m)
        if m > bound_ns:
            bad.append(f"key {i.key} (token {i.token}) was the queue head for {_ms(m)} "
                       f"{'(to the end) ' if end == INF else ''}and no acquire claimed it: a ghost holder")
    w = f"{_ms(worst)} (bound {bound_ns / 1e6:.0f} ms)" if worst != -INF else f"- (bound {bound_ns / 1e6:.0f} ms)"
    if unidentified:
        w += f"; {unidentified} failed acquires without a key (checked as unclaimed heads)"
    return Result("P5", "no-ghost", not bad, w, n, bad)


def p6(hs: list[Hold], inst: dict[int, Instance], grace_ns: float) -> Result:
    if inst and not _has_times(inst):
        return Result("P6", "held-before-delete", False, "-", 0, ["etcd's history has no observation times "
                                                                  "(record it with etcd_history.LiveWatcher)"])
    bad, worst, n = [], -INF, 0
    how = defaultdict(int)
    for h in hs:
        i = inst.get(h.token)
        if i is None or i.t_del is None:
            continue  # no such key (P3) or never deleted (P4)
        n += 1
        how[h.how] += 1
        end = h.t_end if h.t_end is not None else INF
        m = end - i.t_del
        worst = max(worst, m)
        if m > grace_ns:
            bad.append(f"{h.process} (token {h.token}) still held {_ms(m)} after etcd deleted its key "
                       f"{i.key} (ended by: {h.how})")
    ends = ", ".join(f"{k} {v}" for k, v in sorted(how.items()))
    w = f"{_ms(worst)}" if worst != -INF else "-"
    return Result("P6", "held-before-delete", not bad, f"{w} (grace {grace_ns / 1e6:.0f} ms; ended by {ends or '-'})",
                  n, bad)


def check(records: list[dict], hist: dict, lock_prefix: str, data_prefix: str,
          grace_ms: float = GRACE_MS, p5_bound_ms: float = P5_BOUND_MS) -> list[Result]:
    events = hist["events"]
    inst = lock_model(events, lock_prefix)
    ops, evs = client_ops(records)
    hs = holds(ops, evs)
    t_last = max([r["t"] for r in records] + [e["t_obs"] for e in events if e.get("t_obs")] + [0])
    g = grace_ms * 1e6
    return [
        p1(ops, inst, events, data_prefix),
        p2(hs),
        p3(hs, inst, g),
        p4(hist, inst, lock_prefix),
        p5(ops, hs, inst, p5_bound_ms * 1e6, t_last),
        p6(hs, inst, g),
    ]


def report(results: list[Result], out=sys.stdout, evidence: int = 5) -> bool:
    for r in results:
        print(r.line(), file=out)
        if not r.ok:
            for e in r.evidence[:evidence]:
                print(f"    {e}", file=out)
            if len(r.evidence) > evidence:
                print(f"    ... and {len(r.evidence) - evidence} more", file=out)
    return all(r.ok for r in results)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--etcd-history", required=True, help="file saved by etcd_history.save")
    p.add_argument("--lock-prefix", required=True)
    p.add_argument("--data-prefix", required=True)
    p.add_argument("--grace-ms", type=float, default=GRACE_MS, help="clock-read grace for P3 and P6 (default 50)")
    p.add_argument("--p5-bound-ms", type=float, default=P5_BOUND_MS,
                   help="how long a failed acquire's key or an unclaimed head may live (default 2000)")
    p.add_argument("--evidence", type=int, default=5, help="violations printed per property (default 5)")
    p.add_argument("histories", nargs="+", help="history.py JSON-lines files")
    a = p.parse_args(argv)
    records = history.load(a.histories)
    hist = etcd_history.load(a.etcd_history)
    results = check(records, hist, a.lock_prefix, a.data_prefix, a.grace_ms, a.p5_bound_ms)
    return 0 if report(results, evidence=a.evidence) else 1


if __name__ == "__main__":
    sys.exit(main())
