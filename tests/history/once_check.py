#!/usr/bin/env python3
"""The history checker's properties for once-per-period jobs (``client.once``), from the
triggers' records and etcd's own history of the job's prefix and the results' prefix. Stdlib only.

    python3 tests/history/once_check.py --etcd-history etcd.json --name ctl/job \\
        --results ctl/job-results/ --slots 4883000-4883001 h-*.jsonl

Keys: a winner's claim is ``<name>/slot/<n>/<lease hex>``, the period's done mark
``<name>/done/<n>``; a winner's job writes ``<results><n>/<token>`` (``token``: its claim's
fencing token) and then marks the period done. Records: ``trigger`` (ok: ``slot`` and ``token``
when it won, else None), ``done`` (``slot``, ``token``; ok when the period was marked done, or,
for a job that never marks, when the trigger thought its job had run).

O1 once-per-period: per slot, at most one done mark created and at most one ``done`` that
   returned ok. Margin: the most runs that ended ok in one slot.
O2 nothing-after-done: no claim was won and no result written in a slot after its done mark was
   created. Margin: the fewest revisions between a done mark and the next claim key of its slot.
O3 fenced-result: every result was written while the claim it names (the key created at its
   token) was live and no older claim of its slot was. Margin: the fewest revisions a result
   came before the end of its claim.
O4 every-period-done: every slot given by --slots ends done, and by a job that finished: the
   done mark was created in the revision that deleted a claim whose result had been written.
O5 nothing-left: no claim key and no lease left but the done marks' own (they expire by
   themselves after a few periods).
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


def _slot_and_rest(key: str, prefix: str):
    if not key.startswith(prefix):
        return None, None
    n, _, rest = key[len(prefix):].partition("/")
    return (int(n), rest) if n.lstrip("-").isdigit() else (None, None)


def _replay(events: list[dict], name: str, results: str):
    """Per slot: claim spans [create, delete], done marks (create revision, lease), results
    (token, revision)."""
    claims: dict[int, list[list]] = defaultdict(list)
    live: dict[str, list] = {}
    dones: dict[int, list[dict]] = defaultdict(list)
    res: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for e in events:
        k, rev = e["key"], e["revision"]
        n, rest = _slot_and_rest(k, f"{name}/slot/")
        if n is not None:
            if e["type"] == "put" and k not in live:
                live[k] = [e["create_revision"], None]
                claims[n].append(live[k])
            elif e["type"] == "delete" and k in live:
                live.pop(k)[1] = rev
            continue
        n, _ = _slot_and_rest(k, f"{name}/done/")
        if n is not None:
            if e["type"] == "put" and e["create_revision"] == rev:
                dones[n].append({"rev": rev, "lease": e.get("lease")})
            continue
        n, rest = _slot_and_rest(k, results)
        if n is not None and e["type"] == "put":
            res[n].append((int(rest) if rest.isdigit() else -1, rev))
    return claims, dones, res


def check(records: list[dict], hist: dict, name: str, results: str, slots: range) -> list[Result]:
    name = name.rstrip("/")
    claims, dones, res = _replay(hist["events"], name, results)
    done = history.completions(records)
    out = []
    ok_runs: dict[int, int] = defaultdict(int)
    won: list[tuple[int, int]] = []
    for r in records:
        if r["phase"] != "invoke" or done.get(r["id"], {}).get("phase") != "ok":
            continue
        if r["op"] == "done":
            ok_runs[r["slot"]] += 1
        elif r["op"] == "trigger" and done[r["id"]].get("token") is not None:
            won.append((done[r["id"]]["slot"], done[r["id"]]["token"]))

    # O1
    bad = [f"slot {n}: {len(d)} done marks created (revisions {[x['rev'] for x in d]})" for n, d in dones.items() if len(d) > 1]
    bad += [f"slot {n}: {k} runs ended ok" for n, k in sorted(ok_runs.items()) if k > 1]
    out.append(Result("O1", "once-per-period", not bad, f"{max(ok_runs.values(), default=0)} runs", len(set(ok_runs) | set(dones)), bad))

    # O2
    bad, worst = [], None
    for n, d in dones.items():
        at = d[0]["rev"]
        bad += [f"slot {n}: won at {t}, after its done mark at {at}" for m, t in won if m == n and t > at]
        bad += [f"slot {n}: result of token {t} written at {rev}, after its done mark at {at}" for t, rev in res.get(n, []) if rev > at]
        later = [c[0] for c in claims.get(n, []) if c[0] > at]
        if later:
            worst = min(later) - at if worst is None else min(worst, min(later) - at)
    out.append(Result("O2", "nothing-after-done", not bad, f"{worst} revs" if worst is not None else "-", len(dones), bad))

    # O3
    bad, worst, n_res = [], None, 0
    for n, rs in res.items():
        for token, rev in rs:
            n_res += 1
            mine = [c for c in claims.get(n, []) if c[0] == token]
            if not mine:
                bad.append(f"result {n}/{token} at {rev}: no claim of slot {n} was created at {token}")
                continue
            end = mine[0][1]
            if end is not None and end < rev:
                bad.append(f"result {n}/{token} at {rev}: its claim ended at {end}")
                continue
            older = [c for c in claims[n] if c[0] < token and (c[1] is None or c[1] > rev)]
            if older:
                bad.append(f"result {n}/{token} at {rev}: the claim created at {older[0][0]} was live too")
                continue
            margin = (end if end is not None else rev) - rev
            worst = margin if worst is None else min(worst, margin)
    out.append(Result("O3", "fenced-result", not bad, f"{worst} revs" if worst is not None else "-", n_res, bad))

    # O4
    bad = []
    for n in slots:
        if not dones.get(n):
            bad.append(f"slot {n}: never marked done")
            continue
        at = dones[n][0]["rev"]
        ended = [c[0] for c in claims.get(n, []) if c[1] == at]
        if not ended or not any(t == ended[0] and rev < at for t, rev in res.get(n, [])):
            bad.append(f"slot {n}: marked done at {at} by claim {ended[:1] or '?'}, whose job wrote no result")
    out.append(Result("O4", "every-period-done", not bad, "-", len(slots), bad))

    # O5
    end = set(hist.get("keys_at_end") or [])
    done_leases = {int(str(x["lease"]), 16) for d in dones.values() for x in d if x.get("lease")}
    left = sorted(k for k in end if k.startswith(f"{name}/slot/"))
    leases = [x for x in hist.get("leases_at_end") or [] if int(str(x), 16) not in done_leases]
    bad = [f"claim key left: {k}" for k in left] + [f"lease left: {x}" for x in leases]
    out.append(Result("O5", "nothing-left", not bad, f"{len(left)} keys, {len(leases)} leases", 1, bad))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--etcd-history", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--slots", default="", help="FIRST-LAST: the slots that must end done (O4)")
    p.add_argument("histories", nargs="+")
    a = p.parse_args(argv)
    first, _, last = a.slots.partition("-")
    slots = range(int(first), int(last or first) + 1) if first else range(0)
    results = check(history.load(a.histories), etcd_history.load(a.etcd_history), a.name, a.results, slots)
    for r in results:
        print(r.line())
        for ev in r.evidence[:5]:
            print(f"    {ev}")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
