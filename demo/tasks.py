"""The demo's third phase, after the second, on the same cluster: a task queue (`client.queue`).

One worker per language (Rust, Python, Node, C, Java: DEMO_MODE=tasks) waits on the empty queue
QUEUE; then two producers (Python, Node: DEMO_MODE=produce) put TASKS_PER_PRODUCER tasks each, with
ids. Each worker loops claim (CLAIM_MS at most) -> work WORK_MS -> ack with the result RESULTS<id> =
"<token>:<label>" in the ack's own fenced transaction (Rust `ack_with`, Python `ack(puts=...)`,
Node `ack({ puts })`, C `etcdlock_task_ack_with`, Java `ack(puts, deletes)`), until STAY_S has
passed and the queue is empty. An ack refused with NotHeld (the claim was lost: nothing written) is
reported as `refused` and the worker goes on.

The demo SIGKILLs a worker a moment after it claimed a task (its claim lives on its lease: the
task must be delivered again, attempts >= 2, and acked by another worker), then SIGSTOPs another
one likewise, past its TTL, until another worker has acked its task, and SIGCONTs it: its late
ack must be refused. Both victims are picked from the workers' `claimed` events, among workers
that already acked a task (so that every language acks some).

Checks come from the workers' events and from etcd's own history of QUEUE/ and RESULTS (read by
etcdctl, tests/history/etcd_history.py), as the other phases' do, and the history checker's queue
properties (tests/history/queue_check.py: Q1 nothing-lost, Q2 one-claim, Q3 ack-while-claimed,
Q4 nothing-left) run on the workers' records and that history."""
from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections import defaultdict

import coordination
import etcd_history  # tests/history, on sys.path (run.py)
import queue_check  # tests/history
import workers

QUEUE, RESULTS = "demo/tasks", "demo/results/"
PRODUCERS = (("python", "py-"), ("node", "js-"))  # language, id prefix
TASKS_PER_PRODUCER = 12
WORK_MS, CLAIM_MS, MAX_ATTEMPTS = 300, 500, 5
# Start order: the JVM first (it starts slowest), so that every language gets tasks.
WORKER_ORDER = ("java", "node", "python", "c", "rust")
STAY_S = 5.0  # the workers stay this long at least (from their start), then until the queue is empty
READY_S = 3.0  # the producers start once every worker is ready, or after this
FRESH_NS = 100_000_000  # a victim is picked within this of its claim: well inside its WORK_MS
BOLD, RED, RESET = "\033[1m", "\033[31m", "\033[0m"


class Phase(coordination.Phase):
    """Collects the third phase's events (the same clock and t0 as the mutex run) and narrates."""

    def show(self, worker: workers.Worker, ev: dict) -> None:
        kind = ev.get("ev")
        who = self.who(worker)
        t = f"{self.rel(ev['t']):7.2f}s"
        if kind == "claimed":
            again = f"  {BOLD}delivered again{RESET}" if ev.get("attempts", 1) > 1 else ""
            print(f"  {t}  {who} claims {ev['id']:<6} token {ev['token']:<6} attempt {ev.get('attempts')}{again}")
        elif kind == "refused":
            print(f"  {t}  {who} {RED}ack of {ev['id']} REFUSED{RESET} "
                  f"(token {ev['token']}: {ev.get('error')}, its claim was lost)")
        elif kind in ("ack_unknown", "put_failed", "error"):
            print(f"  {t}  {who} {RED}{kind}{RESET}: {ev.get('id', '')} {ev.get('error')}")
        elif kind == "done" and worker.label.endswith("-prod"):
            print(f"  {t}  {who} put {len(self.of('put', {worker.label}))} tasks")
        else:
            return
        sys.stdout.flush()


def _fresh_claim(ph: Phase, exclude: set[str]):
    """The latest `claimed` event, at most FRESH_NS old and not yet ended, of a worker that acked
    a task before and is not in `exclude`: a worker in the middle of its work."""
    acked = {e["label"] for e in ph.of("acked")}
    ended = {(e["label"], e["token"]) for kind in ("acked", "refused", "ack_unknown") for e in ph.of(kind)}
    now = time.monotonic_ns()
    for e in reversed(ph.of("claimed")):
        if now - e["t"] > FRESH_NS:
            return None
        if e["label"] in acked and e["label"] not in exclude and (e["label"], e["token"]) not in ended:
            return e
    return None


def _acked_by_other(ph: Phase, tid: str, label: str):
    return next((e for e in ph.of("acked") if e["id"] == tid and e["label"] != label), None)


def run(cluster, args, env: dict, t0: int, colors: dict) -> dict:
    """Puts the tasks, runs the workers through a SIGKILL and a SIGSTOP, then reads etcd's history
    of the queue and the results. Returns what the checks and the report need."""
    ph = Phase(t0, colors)
    # Nothing left from the history's point of view: no key under QUEUE/ and no lease. The results
    # stay (data, as the counter does), so the history is read without waiting for them to go.
    watcher = etcd_history.LiveWatcher(cluster.endpoints_str, [QUEUE + "/", RESULTS]).start()
    queue_env = {"DEMO_TTL": str(args.ttl), "DEMO_QUEUE": QUEUE, "DEMO_RESULTS": RESULTS,
                 "DEMO_MAX_ATTEMPTS": str(MAX_ATTEMPTS), "DEMO_WORK_MS": str(WORK_MS), "DEMO_CLAIM_MS": str(CLAIM_MS)}
    pool = workers.Pool(ph, {**env, **queue_env})
    n_tasks = TASKS_PER_PRODUCER * len(PRODUCERS)
    print(f"{BOLD}third phase: {len(PRODUCERS)} producers ({', '.join(lang for lang, _ in PRODUCERS)}) put {n_tasks} tasks "
          f"into the queue '{QUEUE}'; {len(WORKER_ORDER)} workers ({', '.join(workers.LANGS)}) claim -> work {WORK_MS} ms "
          f"-> result '{RESULTS}<id>' -> ack{RESET}; TTL {args.ttl}s")
    sys.stdout.flush()
    done: dict = {"phase": ph, "ttl": args.ttl, "producers": [], "workers": []}
    frozen = None
    try:
        # The workers first, every one waiting on the empty queue before the first put (a JVM starts
        # slowest: the others would otherwise take every task before it is up). They stay until
        # `until` at least, then stop once a claim times out and the queue has nothing pending,
        # delayed or claimed (a killed or frozen worker's task counts until it is acked again).
        start = time.monotonic_ns()
        until = start + int(STAY_S * 1e9)
        wk = [pool.start_with(lang, f"{lang}-w", {"DEMO_MODE": "tasks", "DEMO_LABEL": f"{lang}-w",
                                                  "DEMO_UNTIL_NS": str(until)}) for lang in WORKER_ORDER]
        done["workers"] = [w.label for w in wk]
        by_label = {w.label: w for w in wk}
        ready = coordination.wait_until(lambda: {e["label"] for e in ph.of("ready")} >= set(by_label), READY_S, every=0.01)
        ph.say(f"{'the' if ready else 'not all (' + str(len(ph.of('ready'))) + ') of the'} {len(wk)} workers wait on "
               f"'{QUEUE}' ({(time.monotonic_ns() - start) / 1e9:.2f}s after their start); "
               f"{' and '.join(lang + '-prod' for lang, _ in PRODUCERS)} put {TASKS_PER_PRODUCER} tasks each")
        prods = [pool.start_with(lang, f"{lang}-prod", {
            "DEMO_MODE": "produce", "DEMO_LABEL": f"{lang}-prod", "DEMO_TASK_PREFIX": prefix,
            "DEMO_TASK_COUNT": str(TASKS_PER_PRODUCER), "DEMO_UNTIL_NS": str(until)}) for lang, prefix in PRODUCERS]
        done["producers"] = [w.label for w in prods]

        victim = coordination.wait_until(lambda: _fresh_claim(ph, set()), 10, every=0.005)
        if not victim:
            ph.say("no worker claimed a second task within 10 s: the kill episode cannot run (a failed check)")
        else:
            ph.say(f"SIGKILL {victim['label']} (pid {victim['pid']}) while it works on {victim['id']} (token "
                   f"{victim['token']}): its claim lives on its lease, so {victim['id']} is delivered again when the "
                   f"lease ({args.ttl}s) expires")
            os.kill(by_label[victim["label"]].pid, signal.SIGKILL)
            done["kill"] = {**victim, "t_kill": time.monotonic_ns()}
        told = []

        def tell_redelivered() -> bool:
            """Narrates, once, the ack of the killed worker's task by another worker."""
            k = done.get("kill")
            again = k and not told and next((e for e in ph.of("acked") if e["id"] == k["id"] and e["token"] > k["token"]), None)
            if again:
                told.append(again)
                ph.say(f"{k['id']}, whose worker was SIGKILLed, was acked by {again['label']} (token {again['token']}) "
                       f"{(again['t'] - k['t_kill']) / 1e9:.2f}s after the SIGKILL")
            return bool(told)

        f = coordination.wait_until(lambda: _fresh_claim(ph, {victim["label"]} if victim else set()), 5, every=0.005)
        if not f:
            ph.say("no other worker claimed a second task within 5 s: the freeze episode cannot run (a failed check)")
        else:
            pause = args.ttl + 1.5
            os.kill(by_label[f["label"]].pid, signal.SIGSTOP)
            frozen = by_label[f["label"]]
            t_stop = time.monotonic_ns()
            ph.say(f"SIGSTOP {f['label']} while it works on {f['id']} (token {f['token']}) for {pause:.1f}s or more, "
                   f"past its TTL, until another worker has acked {f['id']}")
            coordination.wait_until(lambda: tell_redelivered() and False, pause, every=0.02)  # sleeps `pause`, narrating meanwhile
            coordination.wait_until(lambda: (tell_redelivered() or True) and _acked_by_other(ph, f["id"], f["label"]), 5, every=0.02)
            t_cont = time.monotonic_ns()  # before the signal: the worker acts only after it
            ph.say(f"SIGCONT {f['label']} after {(t_cont - t_stop) / 1e9:.1f}s: its late "
                   f"ack (with its result) of {f['id']} must be refused")
            os.kill(frozen.pid, signal.SIGCONT)
            frozen = None
            done["freeze"] = {**f, "t_stop": t_stop, "t_cont": t_cont}
        if victim:
            coordination.wait_until(tell_redelivered, args.ttl + 5, every=0.02)
        # Every worker stops by itself once the queue is empty (bounded: stragglers are killed and reported).
        pool.wait(time.monotonic_ns())
        done["exits"] = {w.label: w.proc.returncode for w in wk}
        # The SIGKILLed worker's lease has expired (its task was delivered again only then); the others
        # closed their clients. Nothing under QUEUE/ and no lease, or the TTL passes.
        etcd_history.leftovers(cluster.endpoints_str, [QUEUE + "/"], settle_s=args.ttl + 1)
        done["history"] = watcher.finish(settle_s=0, timeout=30)
    finally:
        if frozen is not None:
            os.kill(frozen.pid, signal.SIGCONT)
        watcher.stop()
    return done


def records(done: dict) -> list[dict]:
    """The workers' events as a history (tests/history/history.py's format, one process per worker
    label), as queue_check reads it: put (task) ok; claim ok (task, token, attempts); ack (task,
    token) ok / fail (refused) / unknown; and the episodes as nemesis events. The workers' own
    times are kept."""
    ph: Phase = done["phase"]
    recs, count = [], defaultdict(int)

    def op(label, name, t, end, fields, end_fields=None):
        count[label] += 1
        i = f"{label}#{count[label]}"
        recs.append({"id": i, "process": label, "op": name, "phase": "invoke", "t": int(t), **fields})
        recs.append({"id": i, "process": label, "op": name, "phase": end, "t": int(t), **(end_fields or {})})

    for e in sorted(ph.events, key=lambda e: int(e["t"])):
        label, kind, t = e["label"], e.get("ev"), e["t"]
        if kind == "put":
            op(label, "put", t, "ok", {"task": e["id"]}, {"task": e["id"]})
        elif kind == "put_failed":
            op(label, "put", t, "unknown", {"task": e["id"]}, {"error": str(e.get("error"))})
        elif kind == "claimed":
            fields = {"task": e["id"], "token": e["token"], "attempts": e.get("attempts")}
            op(label, "claim", t, "ok", {"name": QUEUE}, fields)
        elif kind in ("acked", "refused", "ack_unknown"):
            end = {"acked": "ok", "refused": "fail", "ack_unknown": "unknown"}[kind]
            op(label, "ack", t, end, {"task": e["id"], "token": e["token"]}, {} if end == "ok" else {"error": str(e.get("error"))})
    n = 0
    for name, ops in (("kill", (("kill", "t_kill"),)), ("freeze", (("pause", "t_stop"), ("resume", "t_cont")))):
        for o, tk in ops if name in done else ():
            n += 1
            recs.append({"id": f"nemesis#{n}", "process": "nemesis", "op": o, "phase": "event",
                         "t": int(done[name][tk]), "target": done[name]["label"], "pid": done[name]["pid"]})
    recs.sort(key=lambda r: r["t"])
    return recs


def _results(hist: dict) -> dict[str, list[dict]]:
    """Each task id's result puts in etcd's history (revision order)."""
    out = defaultdict(list)
    for e in hist["events"]:
        if e["type"] == "put" and e["key"].startswith(RESULTS):
            out[e["key"][len(RESULTS):]].append(e)
    return out


def _who(value: str | None) -> tuple[int | None, str]:
    """(token, label) from a result value "<token>:<label>"."""
    tok, _, label = (value or "").partition(":")
    return (int(tok) if tok.isdigit() else None), label


def checks(done: dict) -> list[tuple[bool, str]]:
    ph: Phase = done["phase"]
    hist = done["history"]
    results: list[tuple[bool, str]] = []
    put_ids = sorted({e["id"] for e in ph.of("put")})
    failed = ph.of("put_failed")
    n_expected = TASKS_PER_PRODUCER * len(PRODUCERS)
    results.append((len(put_ids) == n_expected and not failed,
                    f"the producers ({', '.join(done['producers'])}) put {len(put_ids)} of {n_expected} tasks"
                    + (f"; {len(failed)} puts failed" if failed else "")))
    # Exactly once, from etcd's history: one result put per task id, none for an id never put.
    res = _results(hist)
    counts = {tid: len(res.get(tid, [])) for tid in put_ids}
    wrong = {tid: n for tid, n in counts.items() if n != 1}
    extra = sorted(set(res) - set(put_ids))
    by_worker = defaultdict(int)
    for puts in res.values():
        for e in puts:
            by_worker[_who(e.get("value"))[1]] += 1
    results.append((bool(put_ids) and not wrong and not extra,
                    f"every task put was processed exactly once: one result per id in etcd's history ("
                    + ", ".join(f"{k} {v}" for k, v in sorted(by_worker.items())) + ")"
                    + (f"; not once: {dict(list(wrong.items())[:5])}" if wrong else "")
                    + (f"; results for ids never put: {extra[:5]}" if extra else "")))
    langs = sorted({label.split("-")[0] for label in by_worker})
    results.append((set(langs) >= set(workers.LANGS), f"every language's worker acked tasks ({', '.join(langs)})"))
    # The SIGKILLed worker's task: delivered again and acked by another worker.
    k = done.get("kill")
    if not k:
        results.append((False, "task queue: no worker claimed a second task in time, so none was killed"))
    else:
        again = [e for e in ph.of("claimed") if e["id"] == k["id"] and e["token"] > k["token"]]
        acker = _acked_by_other(ph, k["id"], k["label"])
        tok, label = _who(res[k["id"]][-1].get("value")) if res.get(k["id"]) else (None, "")
        ok = bool(again) and again[0].get("attempts", 0) >= 2 and bool(acker) and (tok, label) == (acker["token"], acker["label"])
        if again:
            text = (f"the task SIGKILLed {k['label']} was working on ({k['id']}, token {k['token']}) was delivered again "
                    f"(attempt {again[0].get('attempts')}, to {again[0]['label']}, {(again[0]['t'] - k['t_kill']) / 1e9:.2f}s "
                    f"after the kill); its result in etcd: {label or 'none'} (token {tok})")
        else:
            text = f"the task SIGKILLed {k['label']} was working on ({k['id']}) was never delivered again"
        results.append((ok, text))
    # The frozen worker: its late ack refused; the task done by another worker.
    f = done.get("freeze")
    if not f:
        results.append((False, "task queue: no second worker claimed a task in time, so none was frozen"))
    else:
        mine = [e for e in ph.events if e["label"] == f["label"] and e.get("token") == f["token"]]
        refused = [e for e in mine if e.get("ev") == "refused" and e["t"] >= f["t_cont"]]
        landed = [e for e in mine if e.get("ev") == "acked"]
        other = _acked_by_other(ph, f["id"], f["label"])
        tok, label = _who(res[f["id"]][-1].get("value")) if res.get(f["id"]) else (None, "")
        ok = bool(refused) and not landed and bool(other) and (tok, label) == (other["token"], other["label"])
        if refused:
            r = refused[0]
            text = (f"the frozen {f['label']}'s late ack (with its result) of {f['id']} "
                    f"(token {f['token']}) was refused ({r.get('error')}) {(r['t'] - f['t_cont']) / 1e9:.2f}s after SIGCONT")
        else:
            text = f"the frozen {f['label']}'s late ack of {f['id']} (token {f['token']}) was NOT refused"
        if landed:
            text += f"; yet it reported {landed[0]['ev']}"
        if other:
            attempt = next((c.get("attempts") for c in ph.of("claimed", {other["label"]}) if c["token"] == other["token"]), "-")
            text += (f"; {other['label']} acked it (attempt {attempt}, token {other['token']})"
                     + (" while it was frozen" if other["t"] < f["t_cont"] else ""))
        else:
            text += "; no other worker acked it"
        results.append((ok, text))
    # The history checker's queue properties.
    recs = records(done)
    for r in queue_check.check(recs, hist, QUEUE, RESULTS):
        results.append((r.ok, f"queue checker {r.prop} {r.name}: {'ok' if r.ok else 'VIOLATED'}  worst margin {r.worst}  "
                              f"({r.n} checked)" + "".join(f"; {b}" for b in r.evidence[:3])))
    left = [key for key in hist["keys_at_end"] if key.startswith(QUEUE + "/")]
    results.append((not left and not hist["leases_at_end"],
                    f"after the task queue nothing is left in etcd: no claim, item or other key under '{QUEUE}/' and no "
                    f"lease ({len(left)} keys, {len(hist['leases_at_end'])} leases)"))
    exits = done.get("exits", {})
    killed = (k or {}).get("label")
    bad = {label: rc for label, rc in exits.items() if rc != 0 and label != killed}
    results.append((bool(exits) and not bad, f"every worker but the killed one stopped by itself once the queue was empty"
                                            + (f"; not: {bad}" if bad else "")))
    return results


def save(done: dict, report_dir: str) -> tuple[str, str]:
    """The workers' records and etcd's history of the phase, for tests/history/queue_check.py."""
    hist_path = os.path.join(report_dir, "tasks-history.jsonl")
    etcd_path = os.path.join(report_dir, "tasks-etcd-history.json")
    with open(hist_path, "w") as f:
        for r in records(done):
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    etcd_history.save(done["history"], etcd_path)
    return hist_path, etcd_path


def report_lines(done: dict) -> list[str]:
    ph: Phase = done["phase"]
    res = _results(done["history"])
    lines = ["", "## Third phase: task queue", ""]
    lines += [f"- {t:.2f}s: {text}" for t, text in ph.narration]
    lines += ["", f"Queue '{QUEUE}', results under '{RESULTS}' (each written in its ack's transaction).", "",
              "| task | put by | claims (worker token attempt: outcome) | result in etcd |", "|---|---|---|---|"]
    put_by = {e["id"]: e["label"] for e in ph.of("put")}
    outcome = {}
    for kind in ("acked", "refused", "ack_unknown"):
        for e in ph.of(kind):
            outcome[(e["label"], e["token"])] = kind
    killed = done.get("kill", {})
    for tid in sorted(put_by):
        claims = []
        for c in (e for e in ph.of("claimed") if e["id"] == tid):
            o = outcome.get((c["label"], c["token"]))
            if o is None and killed.get("label") == c["label"] and killed.get("token") == c["token"]:
                o = "SIGKILLed"
            claims.append(f"{c['label']} {c['token']} {c.get('attempts')}: {o or '-'}")
        result = ", ".join(f"`{e.get('value')}` (rev {e['revision']})" for e in res.get(tid, [])) or "none"
        lines.append(f"| {tid} | {put_by[tid]} | {'; '.join(claims)} | {result} |")
    return lines
