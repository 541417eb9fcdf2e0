#!/usr/bin/env python3
"""The history checker's properties for the prefix cache (``client.cache``), from etcd's own
history of the prefix (a LiveWatcher's, complete from revision 1) and a follower's records of the
copy's events and snapshots (cache_worker.py). Stdlib only.

    python3 tests/history/cache_check.py --etcd-history etcd.json --history w.jsonl --prefix P

CA1 events-are-history: after the first snapshot (at revision S), the copy's events are etcd's
    events under the prefix after S, in order, each once, with the right value and previous
    value; except that a ``resynced`` marker may follow events at its revision that take the copy
    from what it had to etcd's state at that revision (a resync's differences), after which
    etcd's events follow from there.
CA2 snapshot-is-etcd: every snapshot's entries are etcd's state under the prefix at the
    revision the snapshot says it is at.
CA3 caught-up: the last snapshot is at or past every change etcd made under the prefix before it
    was taken (observation times): the copy kept following.
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import etcd_history  # noqa: E402
import history  # noqa: E402
from check import Result  # noqa: E402


def state_at(events: list[dict], rev: int) -> dict[str, str]:
    state: dict[str, str] = {}
    for e in events:
        if e["revision"] > rev:
            break
        if e["type"] == "put":
            state[e["key"]] = e["value"]
        else:
            state.pop(e["key"], None)
    return state


def _apply(state: dict, ev: dict) -> None:
    if ev["type"] == "put":
        state[ev["key"]] = ev["value"]
    else:
        state.pop(ev["key"], None)


def check_events(etcd: list[dict], evs: list[dict], start: int) -> tuple[list[str], int]:
    """CA1's evidence, and how many events were matched."""
    bad, matched = [], 0
    state = state_at(etcd, start)
    todo = [e for e in etcd if e["revision"] > start]
    j, i = 0, 0
    evs = [e for e in evs if e["revision"] > start or e["type"] == "resynced"]
    while i < len(evs):
        ev = evs[i]
        if ev["type"] == "resynced":
            bad.append(f"a resynced marker at {ev['revision']} with no differences before it was expected here")
            i += 1
            continue
        want = todo[j] if j < len(todo) else None
        got = (ev["type"], ev["key"], ev.get("value") or "", ev["revision"])
        if want is not None and got == (want["type"], want["key"], want.get("value") or "" if want["type"] == "put" else "", want["revision"]):
            if (ev.get("prev_value") or None) != (state.get(ev["key"]) or None) and ev.get("prev_value") is not None:
                bad.append(f"event {got}: previous value {ev.get('prev_value')!r}, the copy had {state.get(ev['key'])!r}")
            _apply(state, ev)
            matched += 1
            i, j = i + 1, j + 1
            continue
        # A resync: events at one revision, then the marker at it, taking the copy to etcd's state.
        k = i
        while k < len(evs) and evs[k]["type"] != "resynced" and evs[k]["revision"] == ev["revision"]:
            k += 1
        if k < len(evs) and evs[k]["type"] == "resynced" and evs[k]["revision"] == ev["revision"]:
            for d in evs[i:k]:
                _apply(state, d)
            at = evs[k]["revision"]
            if state != state_at(etcd, at):
                bad.append(f"the resync to {at} left the copy unlike etcd's state there")
            state = state_at(etcd, at)
            j = next((n for n, e in enumerate(todo) if e["revision"] > at), len(todo))
            i = k + 1
            continue
        bad.append(f"event {got}: etcd's next change under the prefix was "
                   + (f"{(want['type'], want['key'], want.get('value'), want['revision'])}" if want else "none"))
        # Go on from this event's revision, to report each gap once.
        _apply(state, ev)
        j = next((n for n, e in enumerate(todo) if e["revision"] > ev["revision"]), len(todo))
        i += 1
    return bad, matched


def check(hist: dict, records: list[dict], prefix: str) -> list[Result]:
    etcd = [e for e in hist["events"] if e["key"].startswith(prefix)]
    snaps = [r for r in records if r["op"] == "snap"]
    evs = [r for r in records if r["op"] == "ev"]
    out = []
    if not snaps:
        return [Result(p, n, False, "-", 0, ["no snapshot recorded"]) for p, n in
                (("CA1", "events-are-history"), ("CA2", "snapshot-is-etcd"), ("CA3", "caught-up"))]

    bad, matched = check_events(etcd, evs, snaps[0]["revision"])
    out.append(Result("CA1", "events-are-history", not bad, f"{sum(1 for e in evs if e['type'] == 'resynced')} resyncs", matched, bad))

    bad = []
    for sn in snaps:
        want = state_at(etcd, sn["revision"])
        if sn["entries"] != want:
            missing = sorted(set(want.items()) - set(sn["entries"].items()))[:3]
            extra = sorted(set(sn["entries"].items()) - set(want.items()))[:3]
            bad.append(f"snapshot at {sn['revision']}: lacks {missing}, has {extra} (etcd's state there)")
    out.append(Result("CA2", "snapshot-is-etcd", not bad, "-", len(snaps), bad))

    last = snaps[-1]
    before = [e["revision"] for e in etcd if e.get("t_obs") is not None and e["t_obs"] < last["t"] - 200_000_000]
    behind = max(before, default=0) - last["revision"]
    bad = [f"the last snapshot is at {last['revision']}, {behind} revisions behind etcd's changes 200 ms before it"] if behind > 0 else []
    out.append(Result("CA3", "caught-up", not bad, f"{max(0, behind)} revs", 1, bad))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--etcd-history", required=True)
    p.add_argument("--history", nargs="+", required=True)
    p.add_argument("--prefix", required=True)
    a = p.parse_args(argv)
    results = check(etcd_history.load(a.etcd_history), history.load(a.history), a.prefix)
    for r in results:
        print(r.line())
        for ev in r.evidence[:5]:
            print(f"    {ev}")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
