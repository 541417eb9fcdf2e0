#!/usr/bin/env python3
"""The history checker's properties for lock sets (``client.lock_set``), from etcd's own history
of the names' queues and the results' prefix (a LiveWatcher's), and the workers' records.
Stdlib only.

    python3 tests/history/lockset_check.py --etcd-history etcd.json --history w*.jsonl \\
        --names ctl/ls/n0,ctl/ls/n1,ctl/ls/n2,ctl/ls/n3 --results ctl/ls-results/

A holder writes one result ``<results><token>`` = ``<process>|<name>,<name>,...`` (the set's
members) through its set (fenced by every member), while it holds. A name's holder at a
revision is the oldest live key of its queue ``<name>/`` (the mutex rule).

LS1 one-holder: every result was written while, for each listed name that has a key created at
    the result's token, that key was the name's holder. Margin: the fewest revisions between a
    result and the end of one of its keys.
LS2 whole-set: every result lists exactly the names its process's acquire recorded, and each of
    them had a live key created at the token (one create revision for the whole set): a set
    holds every member or none.
LS3 progress: no acquire failed with LockTimeout (the timeout is well above the longest pause
    the nemesis causes), and every worker that ran took its set at least once: no deadlock.
LS4 nothing-left: no queue key and no lease left at the end.
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


def _queues(events: list[dict], names: list[str]):
    """Per name: every queue key's [create revision, end revision]; and a function telling a
    name's holder (the oldest live key's create revision) at a revision."""
    spans: dict[str, list[list]] = {n: [] for n in names}
    live: dict[tuple[str, str], list] = {}
    for e in events:
        n = next((n for n in names if e["key"].startswith(n + "/")), None)
        if n is None:
            continue
        if e["type"] == "put" and (n, e["key"]) not in live:
            live[(n, e["key"])] = [e["create_revision"], None]
            spans[n].append(live[(n, e["key"])])
        elif e["type"] == "delete" and (n, e["key"]) in live:
            live.pop((n, e["key"]))[1] = e["revision"]

    def alive(span, rev):
        return span[0] <= rev and (span[1] is None or span[1] > rev)

    def holder(name, rev):
        return min((s[0] for s in spans[name] if alive(s, rev)), default=None)

    def key_at(name, token):
        return next((s for s in spans[name] if s[0] == token), None)

    return holder, key_at, alive


def check(hist: dict, records: list[dict], names: list[str], results: str) -> list[Result]:
    events = hist["events"]
    holder, key_at, alive = _queues(events, names)
    writes = [e for e in events if e["type"] == "put" and e["key"].startswith(results)]
    sets = {(r["process"], r.get("token")): r.get("names", []) for r in records if r["op"] == "acquire" and r["phase"] == "ok"}
    out = []

    # LS1
    bad, worst = [], None
    for e in writes:
        token = int(e["key"][len(results):])
        listed = e["value"].partition("|")[2].split(",")
        for n in listed:
            span = key_at(n, token) if n in names else None
            if span is None:
                continue
            h = holder(n, e["revision"])
            if h != token:
                bad.append(f"result {e['key']} at {e['revision']}: {n}'s holder then was the key created at {h}")
            elif span[1] is not None:
                worst = min(worst, span[1] - e["revision"]) if worst is not None else span[1] - e["revision"]
    out.append(Result("LS1", "one-holder", not bad, f"{worst} revs" if worst is not None else "-", len(writes), bad))

    # LS2
    bad = []
    for e in writes:
        token = int(e["key"][len(results):])
        process, _, listed = e["value"].partition("|")
        listed = listed.split(",")
        want = sets.get((process, token))
        if want is not None and sorted(want) != sorted(listed):
            bad.append(f"result {e['key']}: lists {listed}, its acquire took {want}")
        missing = [n for n in listed if n not in names or not (key_at(n, token) and alive(key_at(n, token), e["revision"]))]
        if missing:
            bad.append(f"result {e['key']} at {e['revision']} by {process}: no live key created at {token} in {missing}: a part of the set")
    out.append(Result("LS2", "whole-set", not bad, "-", len(writes), bad))

    # LS3
    timeouts = [r for r in records if r["op"] == "acquire" and r["phase"] == "fail" and r.get("error") == "LockTimeout"]
    started = {r["process"] for r in records if r["op"] == "start"}
    took = {r["process"] for r in records if r["op"] == "acquire" and r["phase"] == "ok"}
    killed = {r.get("target") for r in records if r["op"] == "kill"}
    idle = sorted(started - took - killed)
    bad = [f"{r['process']}: an acquire of {r.get('names')} timed out" for r in timeouts] + [f"{p} never took its set" for p in idle]
    acquires = sum(1 for r in records if r["op"] == "acquire" and r["phase"] in ("ok", "fail"))
    out.append(Result("LS3", "progress", not bad, f"{len(timeouts)} timeouts", acquires, bad))

    # LS4
    end = set(hist.get("keys_at_end") or [])
    left = sorted(k for k in end if any(k.startswith(n + "/") for n in names))
    leases = list(hist.get("leases_at_end") or [])
    bad = [f"key left: {k}" for k in left] + [f"lease left: {x}" for x in leases]
    out.append(Result("LS4", "nothing-left", not bad, f"{len(left)} keys, {len(leases)} leases", 1, bad))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--etcd-history", required=True)
    p.add_argument("--history", nargs="+", required=True)
    p.add_argument("--names", required=True)
    p.add_argument("--results", required=True)
    a = p.parse_args(argv)
    results = check(etcd_history.load(a.etcd_history), history.load(a.history), a.names.split(","), a.results)
    for r in results:
        print(r.line())
        for ev in r.evidence[:5]:
            print(f"    {ev}")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
