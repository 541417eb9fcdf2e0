"""The demo's checks, computed from what the workers reported and from etcd's own history."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import time

GRACE_NS = 50_000_000  # clock reads and pipes are not instantaneous


def truth(cluster) -> list[dict]:
    """Every put and delete under the lock prefix since revision 1, from etcd itself (a watch
    by etcdctl, independent of our library): [{type, key, create_revision, revision}]."""
    cmd = [_etcdctl(), f"--endpoints={cluster.endpoints_str}", "watch", "--prefix", "demo/lock/", "--rev=1", "-w", "json"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ETCD_", "ETCDCTL_"))}
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=3, env=env).stdout
    except subprocess.TimeoutExpired as e:  # a watch never ends by itself: 3 s reads the history
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    events = []
    decoder = json.JSONDecoder()
    i = 0
    while i < len(out):
        while i < len(out) and out[i] in " \r\n\t":
            i += 1
        if i >= len(out):
            break
        obj, i = decoder.raw_decode(out, i)
        for e in obj.get("Events") or []:
            kv = e["kv"]
            events.append({
                "type": "delete" if e.get("type", 0) == 1 else "put",
                "key": base64.b64decode(kv["key"]).decode(),
                "create_revision": int(kv.get("create_revision", 0)),
                "revision": int(kv["mod_revision"]),
            })
    return events


def _etcdctl() -> str:
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.environ.get("ETCDCTL_BIN") or os.path.join(repo, ".tools", "bin", "etcdctl")


def leftovers(cluster, wait_s: float) -> dict:
    """Keys under the lock prefix and leases still in etcd, polled for up to `wait_s`."""
    deadline = time.monotonic() + wait_s
    while True:
        keys = cluster.etcdctl("get", "--prefix", "demo/lock/", "--keys-only").split()
        leases = [l for l in cluster.etcdctl("lease", "list").splitlines()[1:] if l.strip()]
        if (not keys and not leases) or time.monotonic() > deadline:
            return {"keys": keys, "leases": leases}
        time.sleep(0.25)


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
        elif e["ev"] in ("releasing", "lost", "write_refused") and e["label"] in open_:
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
    results = []
    results.append((len(acq) >= 2, f"{len(acq)} acquisitions happened"))
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
    return results


def everyone_acquired(events, labels: list[str], how: str) -> tuple[bool, str]:
    """Every worker process took the lock at least once (a worker that cannot connect reports
    nothing, and the other checks would pass without it)."""
    took = {e["label"] for e in events if e["ev"] == "acquired"}
    missing = [label for label in labels if label not in took]
    langs = sorted({label.rsplit("-", 1)[0] for label in labels})
    return (not missing, f"every worker ({len(labels)}: {', '.join(langs)}) took the lock {how}"
            + (f"; never: {', '.join(missing)}" if missing else ""))


def write_report(path, run, results, done, svg) -> str:
    acq = sorted((e for e in run.events if e["ev"] == "acquired"), key=lambda e: e["t"])
    lines = ["# etcdlock demo report", "", f"![timeline]({os.path.basename(svg)})", "", "## Checks", ""]
    lines += [f"- {'ok' if ok else '**FAIL**'}: {text}" for ok, text in results]
    lines += ["", "## Episodes", ""] + [f"- {t:.2f}s: {text}" for t, text in run.narration]
    lines += ["", "## Acquisitions", "", "| t (s) | holder | lang | pid | token | waited (ms) |", "|---|---|---|---|---|---|"]
    for e in acq:
        w = e.get("wait_ms")
        lines.append(f"| {run.rel(e['t']):.3f} | {e['label']} | {e['lang']} | {e['pid']} | {e['token']} | "
                     f"{'' if w is None else f'{w:.1f}'} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path
