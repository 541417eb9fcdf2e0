#!/usr/bin/env python3
"""The history checker's properties for the task queue (``client.queue``), from the clients'
records and etcd's own history of the queue's prefix and the results' prefix. Stdlib only.

    python3 tests/history/queue_check.py --etcd-history etcd.json --queue ctl/q \\
        --results ctl/results/ h-*.jsonl

A worker acks an item with the result ``<results><id>`` = ``"<token>:<process>"`` in the ack's
own transaction (``task.ack(puts=...)``); ``token`` is its claim's fencing token. Records: ``put``
(``id``; ok = etcd has the item), ``claim`` (ok: ``id``, ``token``), ``ack`` (``id``, ``token``).

Q1 nothing-lost: every put that ended ok is, at the end, exactly one of: acked once (its result
   put exactly once, in the same revision that deleted its item), dead (``<queue>/dead/<id>``
   left), or pending (its item key left). Margin: items in each state.
Q2 one-claim: every claim that ended ok held its item alone: at its token's revision its claim
   key was the oldest live key under the item's claim prefix (no other claim or delay), and the
   item existed. Margin: the fewest revisions between a claim and the end of the one before.
Q3 ack-while-claimed: every put under the results prefix was made while the claim it names (the
   key created at its token) was still live: deleted at that same revision (the ack) or later.
   Margin: the fewest revisions a result came before the end of its claim.
Q4 nothing-left: at the end, no claim, no waiting worker, no lease; only pending items (with
   their id and attempts keys) and dead letters (with their id keys).
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import etcd_history  # noqa: E402
import history  # noqa: E402
from check import Result  # noqa: E402


def _slot_of(rest: str) -> str:
    """``<priority>/<seq>`` from what follows ``<queue>/items/`` or ``<queue>/claim/``."""
    return "/".join(rest.split("/")[:2])


class Layout:
    def __init__(self, queue: str, results: str):
        self.q, self.results = queue.rstrip("/"), results
        self.items, self.claims, self.dead = f"{self.q}/items/", f"{self.q}/claim/", f"{self.q}/dead/"

    def under(self, key: str, prefix: str):
        return key[len(prefix):] if key.startswith(prefix) else None


def _replay(events: list[dict], lay: Layout):
    """Per slot: its item's (create, delete, id) and its claim keys' (create, delete, value)."""
    items: dict[str, dict] = {}
    claims: dict[str, dict[str, list]] = defaultdict(dict)  # slot -> key -> [create, delete, value]
    spans: list = []  # every claim key ever: [slot, create, delete, value]
    for e in events:
        k = e["key"]
        rest = lay.under(k, lay.items)
        if rest is not None:
            slot = _slot_of(rest)
            if e["type"] == "put" and slot not in items:
                items[slot] = {"create": e["revision"], "delete": None, "id": (e.get("value") or "").split("\n", 1)[0]}
            elif e["type"] == "delete" and slot in items and items[slot]["delete"] is None:
                items[slot]["delete"] = e["revision"]
            continue
        rest = lay.under(k, lay.claims)
        if rest is not None:
            slot = _slot_of(rest)
            live = claims[slot]
            if e["type"] == "put" and k not in live:
                live[k] = [e["create_revision"], None, e.get("value")]
                spans.append((slot, live[k]))
            elif e["type"] == "delete" and k in live:
                live.pop(k)[1] = e["revision"]
    return items, spans


def check(records: list[dict], hist: dict, queue: str, results: str) -> list[Result]:
    lay = Layout(queue, results)
    events = hist["events"]
    items, spans = _replay(events, lay)
    by_id = {v["id"]: (slot, v) for slot, v in items.items()}
    end = set(hist.get("keys_at_end") or [])
    done = history.completions(records)
    out = []

    # Q1
    result_puts: dict[str, list[dict]] = defaultdict(list)
    for e in events:
        if e["type"] == "put" and e["key"].startswith(results):
            result_puts[e["key"][len(results):]].append(e)
    put_ok = sorted({done[r["id"]].get("task") or r.get("task") for r in records
                     if r["op"] == "put" and r["phase"] == "invoke" and done.get(r["id"], {}).get("phase") == "ok"})
    bad, states = [], defaultdict(int)
    for tid in put_ok:
        slot, item = by_id.get(tid, (None, None))
        acked = [e for e in result_puts.get(tid, []) if item and item["delete"] == e["revision"]]
        dead = f"{lay.dead}{tid}" in end
        pending = item is not None and f"{lay.items}{slot}" in end
        n_results = len(result_puts.get(tid, []))
        state = [s for s, on in (("acked", len(acked) == 1), ("dead", dead), ("pending", pending)) if on]
        if len(state) != 1 or n_results > 1 or (n_results and not acked):
            bad.append(f"task {tid}: {state or 'lost'}, {n_results} result put(s) in etcd, item {item}")
        for s in state:
            states[s] += 1
    out.append(Result("Q1", "nothing-lost", not bad, ", ".join(f"{k} {v}" for k, v in sorted(states.items())) or "-",
                      len(put_ok), bad))

    # Q2
    bad, worst, n = [], None, 0
    claims_ok = [{"task": r.get("task")} | done[r["id"]] for r in records
                 if r["op"] == "claim" and r["phase"] == "invoke" and done.get(r["id"], {}).get("phase") == "ok"]
    for c in claims_ok:
        n += 1
        tok, tid = c.get("token"), c.get("task")
        slot = by_id.get(tid, (None,))[0]
        mine = [s for sl, s in spans if sl == slot and s[0] == tok]
        if not mine:
            bad.append(f"claim of {tid} with token {tok}: no claim key of that item was created at {tok}")
            continue
        older = [s for sl, s in spans if sl == slot and s[0] < tok and (s[1] is None or s[1] > tok)]
        if older:
            bad.append(f"claim of {tid} at {tok}: the claim key created at {older[0][0]} ({older[0][2]!r}) was still live")
        item = items.get(slot)
        if item is None or item["create"] > tok or (item["delete"] is not None and item["delete"] <= tok):
            bad.append(f"claim of {tid} at {tok}: its item did not exist then")
        before = [s[1] for sl, s in spans if sl == slot and s[0] < tok and s[1] is not None]
        if before:
            gap = tok - max(before)
            worst = gap if worst is None else min(worst, gap)
    out.append(Result("Q2", "one-claim", not bad, f"{worst} revs" if worst is not None else "-", n, bad))

    # Q3
    bad, worst, n = [], None, 0
    for tid, puts in result_puts.items():
        slot = by_id.get(tid, (None,))[0]
        for e in puts:
            n += 1
            try:
                tok = int((e.get("value") or "").split(":", 1)[0])
            except ValueError:
                bad.append(f"result {e['key']} at {e['revision']}: no token in {e.get('value')!r}")
                continue
            mine = [s for sl, s in spans if sl == slot and s[0] == tok]
            if not mine:
                bad.append(f"result {e['key']} at {e['revision']}: no claim of {tid} was created at {tok}")
                continue
            ended = mine[0][1]
            if ended is not None and ended < e["revision"]:
                bad.append(f"result {e['key']} at {e['revision']}: its claim (token {tok}) ended at {ended}")
            else:
                margin = (ended if ended is not None else e["revision"]) - e["revision"]
                worst = margin if worst is None else min(worst, margin)
    out.append(Result("Q3", "ack-while-claimed", not bad, f"{worst} revs" if worst is not None else "-", n, bad))

    # Q4
    left = sorted(k for k in end if k.startswith(lay.claims) or k.startswith(f"{lay.q}/workers/"))
    leases = hist.get("leases_at_end") or []
    bad = [f"claim or worker key left: {k}" for k in left] + [f"lease left: {x}" for x in leases]
    out.append(Result("Q4", "nothing-left", not bad, f"{len(left)} keys, {len(leases)} leases", 1, bad))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--etcd-history", required=True)
    p.add_argument("--queue", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("histories", nargs="+")
    a = p.parse_args(argv)
    results = check(history.load(a.histories), etcd_history.load(a.etcd_history), a.queue, a.results)
    for r in results:
        print(r.line())
        for ev in r.evidence[:5]:
            print(f"    {ev}")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
