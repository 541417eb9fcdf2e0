"""The demo's second phase, after the mutex run, on the same cluster: a leader election and a
semaphore, one worker process per candidate or permit user, in every language whose binding has
them (workers.COORD_LANGS).

- election: one candidate per language campaigns in ELECTION proposing its name; the leader
  proclaims "<name> leads" and makes fenced writes ("<name> token <T> write <n>") to TERM_KEY.
  The candidates of LEAD_ORDER start first, each once the one before it is queued in etcd (so Rust
  leads first and Java, queued next, takes over: every run shows both); the others then together.
  The demo SIGKILLs the first leader; the next candidate must lead with a bigger token within the
  TTL plus a margin, and etcd's own history must show every fenced write landing from the leader
  of that moment (the lowest create revision alive under ELECTION/), one term after the other.
- semaphore: workers across the languages loop acquire -> hold -> release on SLOTS with PERMITS
  permits; their records must never show more than PERMITS holders at once, and PERMITS at once
  at least once, while etcd's history shows more keys queued than permits (the limit was contended).

Checks are computed from the workers' JSON events and from etcd's history read by etcdctl
(tests/history/etcd_history.py), as the mutex run's are."""
from __future__ import annotations

import os
import re
import signal
import sys
import threading
import time

import etcd_history  # tests/history, on sys.path (run.py)
import workers

ELECTION, TERM_KEY, SLOTS = "demo/leader", "demo/term", "demo/slots"
WRITE_MS, HOLD_MS = 100, 250
TAKEOVER_MARGIN_S = 1.5  # the next leader leads within TTL + this after the SIGKILL
BOLD, RESET = "\033[1m", "\033[0m"
TERM_VALUE = re.compile(r"^(\S+) token (\d+) write (\d+)$")
# The first leader (SIGKILLed) and the candidate queued next (it takes over): a fixed order, since
# arrival order would otherwise favour the fastest-starting processes and a JVM starts last.
LEAD_ORDER = ("rust", "java")


class Phase:
    """Collects the second phase's events (the same clock and t0 as the mutex run) and narrates."""

    def __init__(self, t0_ns: int, colors: dict):
        self.t0, self.colors = t0_ns, colors
        self.events: list[dict] = []
        self.lock = threading.Lock()
        self.narration: list[tuple[float, str]] = []

    def rel(self, t_ns: int) -> float:
        return (t_ns - self.t0) / 1e9

    def add(self, worker: workers.Worker, ev: dict) -> None:
        ev["label"], ev["lang"], ev["pid"] = worker.label, worker.lang, worker.pid
        with self.lock:
            self.events.append(ev)
        self.show(worker, ev)

    def who(self, worker: workers.Worker) -> str:
        return f"{self.colors.get(worker.lang, '')}{worker.label:<12}{RESET} pid {worker.pid:<7}"

    def show(self, worker: workers.Worker, ev: dict) -> None:
        """Narrates the events worth a line."""
        kind = ev.get("ev")
        timeout = "timeout" in str(ev.get("error", "")).lower()  # at the deadline: expected
        if kind not in ("leading", "lost", "proclaim_refused", "term_refused", "error") or (kind == "error" and timeout):
            return
        who = self.who(worker)
        t = f"{self.rel(ev['t']):7.2f}s"
        if kind == "leading":
            print(f"  {t}  {who} leads '{ELECTION}' token {ev['token']}")
        elif kind == "lost":
            print(f"  {t}  {who} learns it lost: {ev.get('reason')}")
        else:
            print(f"  {t}  {who} {kind}: {ev.get('error')}")
        sys.stdout.flush()

    def say(self, text: str) -> None:
        now = time.monotonic_ns()
        with self.lock:
            self.narration.append((self.rel(now), text))
        print(f"  {self.rel(now):7.2f}s  {BOLD}>>> {text}{RESET}")
        sys.stdout.flush()

    def of(self, kind: str, labels=None) -> list[dict]:
        with self.lock:
            return sorted((e for e in self.events if e.get("ev") == kind and (labels is None or e["label"] in labels)),
                          key=lambda e: e["t"])


def wait_until(pred, timeout: float, every: float = 0.01):
    """Polls pred() every `every` s until it returns something truthy or timeout passes (bounded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(every)
    return None


def _queued(cluster, label: str) -> bool:
    """Whether the candidate `label` has its key under ELECTION/ (its proposal, or "<label> leads")."""
    out = cluster.etcdctl("get", "--prefix", ELECTION + "/", "--print-value-only", check=False)
    return any(v in (label, f"{label} leads") for v in out.splitlines())


def run(cluster, args, env: dict, plan: list[str], t0: int, colors: dict) -> dict:
    """Runs the election and/or the semaphore (as `plan` says) at the same time, then reads etcd's
    history of their keys. Returns what the checks and the report need."""
    ph = Phase(t0, colors)
    watcher = etcd_history.LiveWatcher(cluster.endpoints_str, [ELECTION + "/", SLOTS + "/", TERM_KEY]).start()
    start = time.monotonic_ns()
    # Startup (Python, Node) + a first term + the SIGKILLed leader's lease + a second term.
    el_until = start + int((args.ttl + 6) * 1e9)
    sem_until = start + int(6 * 1e9)
    pool = workers.Pool(ph, {**env, "DEMO_TTL": str(args.ttl)})
    parts = []
    if "election" in plan:
        parts.append(f"{len(workers.COORD_LANGS)} candidates ({', '.join(workers.COORD_LANGS)}) campaign in '{ELECTION}'")
    if "semaphore" in plan:
        parts.append(f"{args.slot_workers} workers share '{SLOTS}' ({args.permits} permits, hold {HOLD_MS} ms)")
    print(f"{BOLD}second phase: {'; '.join(parts)}{RESET}; TTL {args.ttl}s")
    sys.stdout.flush()
    candidates, slot_users = [], []
    if "semaphore" in plan:
        for i in range(args.slot_workers):
            lang = workers.COORD_LANGS[i % len(workers.COORD_LANGS)]
            slot_users.append(pool.start_with(lang, f"{lang}-slot{i // len(workers.COORD_LANGS) + 1}", {
                "DEMO_MODE": "semaphore", "DEMO_SEMAPHORE": SLOTS, "DEMO_PERMITS": str(args.permits),
                "DEMO_HOLD_MS": str(HOLD_MS), "DEMO_UNTIL_NS": str(sem_until)}))
    if "election" in plan:
        ordered = [lang for lang in LEAD_ORDER if lang in workers.COORD_LANGS]
        for lang in ordered + [lang for lang in workers.COORD_LANGS if lang not in ordered]:
            candidates.append(pool.start_with(lang, f"{lang}-cand", {
                "DEMO_MODE": "election", "DEMO_ELECTION": ELECTION, "DEMO_TERM_KEY": TERM_KEY,
                "DEMO_LABEL": f"{lang}-cand", "DEMO_WRITE_MS": str(WRITE_MS), "DEMO_UNTIL_NS": str(el_until)}))
            if lang in ordered:  # queued before the next one starts (bounded: after 10 s it starts anyway)
                wait_until(lambda: _queued(cluster, f"{lang}-cand"), 10, every=0.05)
    done: dict = {"candidates": [w.label for w in candidates], "slot_users": [w.label for w in slot_users]}
    try:
        if candidates:
            labels = {w.label for w in candidates}
            # Every candidate campaigns (so the next leader is already queued), then the leader writes a little.
            wait_until(lambda: {e["label"] for e in ph.of("campaigning", labels)} >= labels, 10)
            first = wait_until(lambda: (ph.of("leading", labels) or [None])[0], 5)
            if first:
                wait_until(lambda: len([e for e in ph.of("term_write", {first["label"]})]) >= 3, 2)
                victim = next(w for w in candidates if w.label == first["label"])
                ph.say(f"SIGKILL the leader {first['label']} (pid {victim.pid}, token {first['token']}): the next "
                       f"candidate leads when its lease ({args.ttl}s) expires")
                os.kill(victim.pid, signal.SIGKILL)
                t_kill = time.monotonic_ns()
                done["kill"] = {"label": first["label"], "token": first["token"], "key": first.get("key"), "t": t_kill}
                nxt = wait_until(lambda: next((e for e in ph.of("leading", labels - {first["label"]}) if e["t"] > t_kill), None),
                            args.ttl + TAKEOVER_MARGIN_S + 2)
                if nxt:
                    ph.say(f"{nxt['label']} took over with token {nxt['token']} "
                           f"{(nxt['t'] - t_kill) / 1e9:.2f}s after the SIGKILL")
            else:
                ph.say("no candidate led within 5 s: the election episode cannot run (counted as a failed check)")
        pool.wait(max(el_until if candidates else 0, sem_until if slot_users else 0))
        hist = watcher.finish(settle_s=args.ttl + 3, timeout=30)
    finally:
        watcher.stop()
    done.update(phase=ph, history=hist, ttl=args.ttl, permits=args.permits)
    return done


def _heads_at(events: list[dict], prefix: str):
    """For each revision of an event, the lowest create revision alive under prefix (or None)."""
    alive, out = {}, {}
    for e in events:
        if e["key"].startswith(prefix):
            if e["type"] == "put":
                alive.setdefault(e["key"], e["create_revision"] or e["revision"])
            else:
                alive.pop(e["key"], None)
        out[e["revision"]] = min(alive.values()) if alive else None
    return out


def checks(done: dict) -> list[tuple[bool, str]]:
    ph: Phase = done["phase"]
    hist = done["history"]
    events = hist["events"]
    results = []
    cands = set(done["candidates"])
    if cands:
        campaigned = {e["label"] for e in ph.of("campaigning", cands)}
        results.append((campaigned == cands, f"{len(campaigned)} of {len(cands)} candidates campaigned in '{ELECTION}' "
                                             f"({', '.join(sorted(l.split('-')[0] for l in campaigned))})"))
        k = done.get("kill")
        if not k:
            results.append((False, "election: no candidate led in time, so no leader was killed"))
        else:
            nxt = next((e for e in ph.of("leading", cands - {k["label"]}) if e["t"] > k["t"]), None)
            bound = done["ttl"] + TAKEOVER_MARGIN_S
            dt = (nxt["t"] - k["t"]) / 1e9 if nxt else None
            results.append((bool(nxt) and nxt["token"] > k["token"] and dt <= bound,
                            f"after SIGKILL of the leader {k['label']}, {nxt['label']} led with a bigger token "
                            f"({nxt['token']} > {k['token']}) {dt:.2f}s later (bound: TTL {done['ttl']}s + {TAKEOVER_MARGIN_S}s)"
                            if nxt else f"after SIGKILL of the leader {k['label']}, no other candidate led"))
            # Proclamations, from etcd's history: each of the two leaders' keys took the value "<name> leads".
            leaders = [k["label"]] + ([nxt["label"]] if nxt else [])
            keys = {e["label"]: e.get("key") for e in ph.of("leading", set(leaders))}
            proclaimed = [l for l in leaders if any(e["type"] == "put" and e["key"] == keys.get(l)
                                                    and e["value"] == f"{l} leads" for e in events)]
            results.append((proclaimed == leaders and len(leaders) == 2,
                            f"both leaders proclaimed (\"<name> leads\" on their election key, in etcd's history): "
                            f"{', '.join(proclaimed) or 'none'}"))
        # Fenced writes, from etcd's history: each came from the leader of its revision, terms in order.
        heads = _heads_at(events, ELECTION + "/")
        writes = [e for e in events if e["key"] == TERM_KEY and e["type"] == "put"]
        per_term, bad, order_ok, last = {}, [], True, 0
        for e in writes:
            m = TERM_VALUE.match(e.get("value") or "")
            token = int(m.group(2)) if m else None
            if token is None or heads.get(e["revision"]) != token:
                bad.append((e["revision"], e.get("value"), heads.get(e["revision"])))
            else:
                per_term.setdefault(token, [m.group(1), 0])[1] += 1
                order_ok &= token >= last
                last = token
        terms = "; ".join(f"token {t} ({who}) {n}" for t, (who, n) in sorted(per_term.items()))
        results.append((bool(writes) and not bad and order_ok and len(per_term) >= 2,
                        f"all {len(writes)} fenced writes to '{TERM_KEY}' in etcd's history came from the leader of their "
                        f"revision, one term after the other: {terms or 'none'}"
                        + (f"; NOT from the leader: {bad[:3]}" if bad else "") + ("" if order_ok else "; terms out of order")))
        landed = {e.get("value") for e in writes}
        reported = [f"{e['label']} token {e['token']} write {e['seq']}" for e in ph.of("term_write", cands)]
        missing = [v for v in reported if v not in landed]
        results.append((not missing, f"every fenced write a leader reported as committed is in etcd's history "
                                     f"({len(reported) - len(missing)} of {len(reported)})"))
    users = set(done["slot_users"])
    if users:
        permits = done["permits"]
        acq = ph.of("acquired", users)
        ends = sorted((e for e in ph.events if e["label"] in users and e.get("ev") in ("releasing", "lost")),
                      key=lambda e: e["t"])
        # Believed-held intervals [acquired, releasing or lost): within the real holds, so any overlap is real.
        points, open_ = [], {}
        for e in sorted(acq + ends, key=lambda e: e["t"]):
            if e["ev"] == "acquired":
                open_[e["label"]] = e
                points.append((e["t"], 1))
            elif e["label"] in open_:
                open_.pop(e["label"])
                points.append((e["t"], -1))
        points += [(ph.events[-1]["t"] if ph.events else 0, -1) for _ in open_]
        cur = peak = 0
        for _, d in sorted(points, key=lambda p: (p[0], p[1])):  # ends before starts at the same time
            cur += d
            peak = max(peak, cur)
        results.append((peak <= permits, f"never more than {permits} of the {len(users)} workers held a permit of "
                                          f"'{SLOTS}' at once (workers' records: at most {peak}; {len(acq)} acquisitions)"))
        results.append((peak >= permits, f"{permits} held at once at some point (at most {peak} did)"))
        alive, queued = set(), 0
        for e in events:
            if e["key"].startswith(SLOTS + "/"):
                (alive.add if e["type"] == "put" else alive.discard)(e["key"])
                queued = max(queued, len(alive))
        results.append((queued > permits, f"the limit was contended: up to {queued} keys queued under '{SLOTS}/' "
                                          f"at once in etcd's history for {permits} permits"))
        langs = sorted({e["lang"] for e in acq})
        results.append((len(langs) == len(workers.COORD_LANGS), f"every language held a permit ({', '.join(langs)})"))
    # The term key is data the leaders wrote (as the counter is): only election and semaphore keys count.
    left = [k for k in hist["keys_at_end"] if k.startswith((ELECTION + "/", SLOTS + "/"))]
    results.append((not left and not hist["leases_at_end"],
                    f"after the second phase no election or semaphore key and no lease left in etcd ({len(left)} keys, "
                    f"{len(hist['leases_at_end'])} leases)"))
    return results


def report_lines(done: dict) -> list[str]:
    ph: Phase = done["phase"]
    lines = ["", "## Second phase: election and semaphore", ""]
    lines += [f"- {t:.2f}s: {text}" for t, text in ph.narration]
    lead = ph.of("leading")
    if lead:
        lines += ["", "| t (s) | leader | lang | pid | token | fenced writes reported |", "|---|---|---|---|---|---|"]
        for e in lead:
            n = len([w for w in ph.of("term_write", {e["label"]}) if w["token"] == e["token"]])
            lines.append(f"| {ph.rel(e['t']):.3f} | {e['label']} | {e['lang']} | {e['pid']} | {e['token']} | {n} |")
    acq = ph.of("acquired", set(done["slot_users"]))
    if acq:
        by = {}
        for e in acq:
            by[e["label"]] = by.get(e["label"], 0) + 1
        lines += ["", f"Semaphore '{SLOTS}' ({done['permits']} permits): {len(acq)} acquisitions ("
                  + ", ".join(f"{k} {v}" for k, v in sorted(by.items())) + ")"]
    return lines
