"""The demo's checks, computed from what the workers reported and from etcd's own history."""
from __future__ import annotations

import json
import os
import re

GRACE_NS = 50_000_000  # clock reads and pipes are not instantaneous


REFUSAL = re.compile(r"not.?held|lock.?lost", re.I)


def is_refusal(error) -> bool:
    """A guarded write's error that means "refused, not written" (NotHeld / NOT_HELD /
    ETCDLOCK_E_NOT_HELD, or LockLost). Anything else (a timeout, an unavailable cluster) leaves
    the outcome unknown: the write may have been committed."""
    return bool(REFUSAL.search(str(error or "")))


def fill_etcdctl_tokens(events: list[dict], history: list[dict]) -> None:
    """etcdctl's token is its key's create revision, which only etcd's history knows."""
    created = {e["key"]: e["create_revision"] for e in history if e["type"] == "put"}
    for e in events:
        if e["lang"] == "etcdctl" and "key" in e:
            e["token"] = created.get(e["key"], 0)


def read_counter(cluster, key: str) -> int:
    out = cluster.etcdctl("get", key, "--print-value-only").strip()
    return int(out) if out else 0


def heads(history: list[dict]) -> list[int]:
    """The sequence of queue heads (lowest create revision alive) as etcd's history moved."""
    alive, seq = {}, []
    for e in history:
        if e["type"] == "put":
            alive.setdefault(e["key"], e["create_revision"] or e["revision"])
        else:
            alive.pop(e["key"], None)
        if alive:
            head = min(alive.values())
            if not seq or seq[-1] != head:
                seq.append(head)
    return seq


def is_subsequence(xs: list[int], ys: list[int]) -> bool:
    it = iter(ys)
    return all(any(x == y for y in it) for x in xs)


def intervals(events: list[dict], done: dict) -> list[tuple[int, int, dict]]:
    """Believed-held intervals [acquired, end): end is the release start, the loss, the kill, or
    (for the frozen holder, which cannot act while stopped) the moment it was stopped."""
    out, open_ = [], {}
    for e in sorted(events, key=lambda e: e["t"]):
        if e["ev"] == "acquired":
            open_[e["label"]] = e
        elif e["ev"] in ("releasing", "lost", "write_refused", "write_unknown") and e["label"] in open_:
            a = open_.pop(e["label"])
            out.append((a["t"], e["t"], a))
    for label, a in open_.items():
        out.append((a["t"], done.get("kill", {}).get("t", a["t"]) if done.get("kill", {}).get("label") == label else a["t"], a))
    frozen = done.get("freeze")
    if frozen:
        out = [(s, min(e, frozen["t_stop"]) if a["label"] == frozen["label"] and a["token"] == frozen["token"] else e, a)
               for s, e, a in out]
    return sorted(out, key=lambda x: x[0])


def run_all(events, history, left, counter, done) -> list[tuple[bool, str]]:
    acq = sorted((e for e in events if e["ev"] == "acquired"), key=lambda e: e["t"])
    tokens = [e["token"] for e in acq]
    wrote = [e for e in events if e["ev"] == "wrote"]
    unknown = [e for e in events if e["ev"] == "write_unknown"]
    results = []
    for name, why in done.get("skipped", []):
        results.append((False, f"episode '{name}' was skipped ({why}): its checks did not run"))
    results.append((len(acq) >= 2, f"{len(acq)} acquisitions happened"))
    if unknown:  # each may or may not have committed: the counter is within the possible range
        results.append((len(wrote) <= counter <= len(wrote) + len(unknown),
                        f"counter = {counter} is between the {len(wrote)} guarded increments that committed and "
                        f"those plus the {len(unknown)} whose outcome is unknown"))
    else:
        results.append((counter == len(wrote), f"counter = {counter} equals the {len(wrote)} guarded increments that committed"))
    results.append((all(a < b for a, b in zip(tokens, tokens[1:])), "fencing tokens strictly increase in acquisition order"))
    results.append((is_subsequence(tokens, heads(history)),
                    "holders were served in queue order (etcd's create-revision order, from etcd's own history)"))
    iv = intervals(events, done)
    overlaps = [(a[2]["label"], b[2]["label"]) for a, b in zip(iv, iv[1:]) if b[0] + GRACE_NS < a[1]]
    results.append((not overlaps, "no two holders overlapped" + (f": {overlaps[:3]}" if overlaps else "")))
    results.append((not left["keys"] and not left["leases"],
                    f"no key and no lease left in etcd ({len(left['keys'])} keys, {len(left['leases'])} leases)"))
    if "kill" in done:
        k = done["kill"]
        after = [e for e in acq if e["t"] > k["t"]]
        ok = bool(after) and after[0]["token"] > k["token"]
        results.append((ok, f"after SIGKILL of {k['label']}, {after[0]['label'] if after else 'nobody'} took over "
                            f"with a bigger token ({after[0]['token'] if after else '-'} > {k['token']}) "
                            f"{(after[0]['t'] - k['t']) / 1e9:.2f}s later" if after else "after SIGKILL nobody took over"))
    if "freeze" in done:
        f = done["freeze"]
        mine = [e for e in events if e["label"] == f["label"] and e.get("token") == f["token"]]
        lost = [e for e in mine if e["ev"] == "lost" and e["t"] >= f["t_cont"] - GRACE_NS]
        refused = [e for e in mine if e["ev"] == "write_refused"]
        wrote_after = [e for e in mine if e["ev"] == "wrote"]
        others = [e for e in acq if f["t_stop"] < e["t"] < f["t_cont"]]
        results.append((bool(others), f"while {f['label']} was frozen, {len(others)} other acquisition(s) went ahead"))
        results.append((bool(lost) and lost[0]["t"] - f["t_cont"] < 1_000_000_000 and bool(refused) and not wrote_after,
                        f"the frozen holder learned it lost the lock "
                        f"({lost[0]['reason'] if lost else 'never'}) and its guarded write was refused"))
    if "leader" in done:
        after = [e for e in acq if e["t"] > done["leader"].get("t", 0)]
        results.append((len(after) > 0, f"the run carried on after the etcd leader was killed ({len(after)} acquisitions after)"))
    if "etcdctl" in done:
        ctl = [e for e in acq if e["lang"] == "etcdctl"]
        results.append((bool(ctl), "etcdctl lock (Go concurrency.Mutex) took its turn in the same queue"
                        + (f" with token {ctl[0]['token']}" if ctl else "")))
    if "cli" in done:
        cli = [e for e in acq if e["lang"] == "cli"]
        results.append((bool(cli), "etcdlock run (the command line) took its turn in the same queue"
                        + (f" with token {cli[0]['token']} (its $ETCDLOCK_FENCING_TOKEN)" if cli else "")))
    return results


def everyone_acquired(events, labels: list[str], how: str) -> tuple[bool, str]:
    """Every worker process took the lock at least once (a worker that cannot connect reports
    nothing, and the other checks would pass without it)."""
    took = {e["label"] for e in events if e["ev"] == "acquired"}
    missing = [label for label in labels if label not in took]
    langs = sorted({label.rsplit("-", 1)[0] for label in labels})
    return (not missing, f"every worker ({len(labels)}: {', '.join(langs)}) took the lock {how}"
            + (f"; never: {', '.join(missing)}" if missing else ""))


def write_history(events: list[dict], done: dict, lock: str, counter_key: str, path: str) -> None:
    """The workers' events as a history (tests/history/history.py's format, one process per
    worker label), plus the episodes as nemesis events: waiting -> acquire invoke; acquired ->
    ok (key, token, lease); error -> the pending acquire ends fail (LockLost) or unknown; wrote ->
    write ok; write_refused -> write fail; write_unknown -> write unknown; releasing -> release
    invoke; released / release_failed -> its completion; lost -> lost event. The workers' own
    times (CLOCK_MONOTONIC) are kept."""
    recs, count, pending, releasing = [], {}, {}, {}

    def rid(label: str) -> str:
        count[label] = count.get(label, 0) + 1
        return f"{label}#{count[label]}"

    def add(label, i, op, phase, t, **fields):
        recs.append({"id": i, "process": label, "op": op, "phase": phase, "t": int(t), **fields})

    for e in sorted(events, key=lambda e: int(e["t"])):
        label, kind, t = e["label"], e["ev"], e["t"]
        if kind == "waiting":
            pending[label] = rid(label)
            add(label, pending[label], "acquire", "invoke", t, name=lock)
        elif kind == "acquired":
            i = pending.pop(label, None)
            if i is None:
                i = rid(label)
                add(label, i, "acquire", "invoke", t, name=lock)
            key = e.get("key")
            add(label, i, "acquire", "ok", t, key=key, token=e.get("token"),
                lease=key.rsplit("/", 1)[1] if key else None)
        elif kind == "error":
            i = pending.pop(label, None)
            if i is not None:
                add(label, i, "acquire", "fail" if is_refusal(e.get("error")) else "unknown", t, error=str(e.get("error")))
            else:
                add(label, rid(label), "error", "event", t, error=str(e.get("error")))
        elif kind in ("wrote", "write_refused", "write_unknown"):
            i = rid(label)
            fields = {"data_key": counter_key, "token": e.get("token")}
            if e.get("value") is not None:
                fields["value"] = str(e["value"])
            add(label, i, "write", "invoke", t, **fields)
            if kind == "wrote":
                add(label, i, "write", "ok", t)
            else:
                add(label, i, "write", "fail" if kind == "write_refused" else "unknown", t, error=str(e.get("error")))
        elif kind == "releasing":
            releasing[label] = rid(label)
            add(label, releasing[label], "release", "invoke", t, token=e.get("token"), key=e.get("key"))
        elif kind in ("released", "release_failed"):
            i = releasing.pop(label, None)
            if i is not None:
                add(label, i, "release", "ok" if kind == "released" else "fail", t, **({"error": str(e.get("error"))}
                                                                                        if kind != "released" else {}))
        elif kind == "lost":
            add(label, rid(label), "lost", "event", t, token=e.get("token"), reason=e.get("reason"))
    n = 0
    if "kill" in done:
        n += 1
        recs.append({"id": f"nemesis#{n}", "process": "nemesis", "op": "kill", "phase": "event",
                     "t": int(done["kill"]["t"]), "target": done["kill"]["label"]})
    if "freeze" in done:
        f = done["freeze"]
        for op, t in (("pause", f["t_stop"]), ("resume", f["t_cont"])):
            n += 1
            recs.append({"id": f"nemesis#{n}", "process": "nemesis", "op": op, "phase": "event", "t": int(t),
                         "target": f["label"]})
    if "leader" in done:
        n += 1
        recs.append({"id": f"nemesis#{n}", "process": "nemesis", "op": "member-kill", "phase": "event",
                     "t": int(done["leader"]["t"]), "member": done["leader"]["member"]})
    recs.sort(key=lambda r: r["t"])
    with open(path, "w") as f:
        for r in recs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def write_report(path, run, results, done, svg, prop_lines=()) -> str:
    acq = sorted((e for e in run.events if e["ev"] == "acquired"), key=lambda e: e["t"])
    lines = ["# etcdlock demo report", "", f"![timeline]({os.path.basename(svg)})", "", "## Checks", ""]
    lines += [f"- {'ok' if ok else '**FAIL**'}: {text}" for ok, text in results]
    if prop_lines:
        lines += ["", "## History checker (tests/history/check.py)", "", "```"] + list(prop_lines) + ["```"]
    lines += ["", "## Episodes", ""] + [f"- {t:.2f}s: {text}" for t, text in run.narration]
    lines += ["", "## Acquisitions", "", "| t (s) | holder | lang | pid | token | waited (ms) |", "|---|---|---|---|---|---|"]
    for e in acq:
        w = e.get("wait_ms")
        lines.append(f"| {run.rel(e['t']):.3f} | {e['label']} | {e['lang']} | {e['pid']} | {e['token']} | "
                     f"{'' if w is None else f'{w:.1f}'} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path
