#!/usr/bin/env python3
"""The history checker's properties for pools of named slots (``client.pool``), from etcd's own
history of the pool's prefix and the results' prefix (a LiveWatcher's, with observation times).
Stdlib only.

    python3 tests/history/pool_check.py --etcd-history etcd.json --pool ctl/pool \\
        --results ctl/pool-results/ --reuse-delay 3

A holder of slot ``s`` writes ``<results><s>/<token>`` (``token``: its slot key's create
revision) through its holding (fenced), while it holds.

PL1 one-holder: a slot key ``<pool>/slot/<s>`` is never written while it lives by anyone but
    the put that created it (a second holder would overwrite it), and every result was written
    while the slot key it names (created at its token) lived. Margin: the fewest revisions
    between a result and the end of its holder's key.
PL2 rest-after-death: a slot key that ended without its ``free/<s>`` marker being put in the
    same revision (its holder died: lease expired or revoked) is not created again before
    ``--reuse-delay`` seconds after that (etcd's events as the watch observed them). Margin: the
    shortest gap from a death to the slot's next holder.
PL3 nothing-left: no slot key, no queue key and no lease but resting slots' left at the end.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import etcd_history  # noqa: E402
from check import Result  # noqa: E402

SLACK_NS = 50_000_000  # observation jitter between two events of one watch


def _spans(events: list[dict], pool: str):
    """Per slot: [create revision, end revision, end t_obs, died, overwritten-by] per holder key;
    and the revisions at which a free marker was put."""
    spans: dict[str, list[list]] = defaultdict(list)
    live: dict[str, list] = {}
    freed: dict[str, set[int]] = defaultdict(set)
    for e in events:
        k = e["key"]
        if k.startswith(f"{pool}/free/") and e["type"] == "put":
            freed[k[len(f"{pool}/free/"):]].add(e["revision"])
        if not k.startswith(f"{pool}/slot/"):
            continue
        s = k[len(f"{pool}/slot/"):]
        if e["type"] == "put":
            if s in live:
                live[s][4].append(e["revision"])  # a write to a live holder key
            else:
                live[s] = [e["create_revision"], None, None, None, [], e.get("t_obs")]
                spans[s].append(live[s])
        elif s in live:
            span = live.pop(s)
            span[1], span[2] = e["revision"], e.get("t_obs")
    for s, ss in spans.items():
        for span in ss:
            span[3] = span[1] is not None and span[1] not in freed[s]
    return spans


def check(hist: dict, pool: str, results: str, reuse_delay_s: float) -> list[Result]:
    pool = pool.rstrip("/")
    events = hist["events"]
    spans = _spans(events, pool)
    out = []

    # PL1
    bad, worst, n = [], None, 0
    for s, ss in spans.items():
        bad += [f"slot {s}: its key created at {sp[0]} was written again at {sp[4]} while it lived" for sp in ss if sp[4]]
    for e in events:
        if e["type"] != "put" or not e["key"].startswith(results):
            continue
        n += 1
        s, _, tok = e["key"][len(results):].partition("/")
        mine = [sp for sp in spans.get(s, []) if str(sp[0]) == tok]
        if not mine:
            bad.append(f"result {e['key']} at {e['revision']}: no key of slot {s} was created at {tok}")
        elif mine[0][1] is not None and mine[0][1] < e["revision"]:
            bad.append(f"result {e['key']} at {e['revision']}: its holder's key ended at {mine[0][1]}")
        else:
            margin = (mine[0][1] or e["revision"]) - e["revision"]
            worst = margin if worst is None else min(worst, margin)
    out.append(Result("PL1", "one-holder", not bad, f"{worst} revs" if worst is not None else "-", n, bad))

    # PL2
    bad, worst, deaths = [], None, 0
    for s, ss in spans.items():
        for died, nxt in zip(ss, ss[1:]):
            if not died[3]:
                continue
            deaths += 1
            if died[2] is None or nxt[5] is None:
                bad.append(f"slot {s}: no observation time for the death at {died[1]} or the next holder at {nxt[0]}")
                continue
            gap = (nxt[5] - died[2]) / 1e9
            worst = gap if worst is None else min(worst, gap)
            if gap * 1e9 < reuse_delay_s * 1e9 - SLACK_NS:
                bad.append(f"slot {s}: its holder died at revision {died[1]}, the next holder came {gap:.3f} s later (revision {nxt[0]})")
    out.append(Result("PL2", "rest-after-death", not bad, f"{worst:.3f} s" if worst is not None else "-", deaths, bad))

    # PL3
    end = set(hist.get("keys_at_end") or [])
    left = sorted(k for k in end if k.startswith((f"{pool}/slot/", f"{pool}/queue/")))
    resting = {str(e.get("lease")) for e in events if e["key"].startswith(f"{pool}/cool/") and e["type"] == "put" and e["key"] in end}
    leases = [x for x in hist.get("leases_at_end") or [] if int(str(x), 16) not in {int(r, 16) for r in resting if r and r != "None"}]
    bad = [f"key left: {k}" for k in left] + [f"lease left: {x}" for x in leases]
    out.append(Result("PL3", "nothing-left", not bad, f"{len(left)} keys, {len(leases)} leases", 1, bad))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--etcd-history", required=True)
    p.add_argument("--pool", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--reuse-delay", type=float, required=True)
    a = p.parse_args(argv)
    results = check(etcd_history.load(a.etcd_history), a.pool, a.results, a.reuse_delay)
    for r in results:
        print(r.line())
        for ev in r.evidence[:5]:
            print(f"    {ev}")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
