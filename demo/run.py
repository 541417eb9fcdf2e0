#!/usr/bin/env python3
"""The etcdlock demo: workers in Rust, Python, Node, C and Java contend for ONE lock on a local
3-member etcd cluster, through a killed holder, a frozen holder, a leader failure, and
`etcdctl lock` and `etcdlock run` (the command line) taking their turns. Prints a live timeline, checks the run, writes a report with
an SVG timeline, and exits non-zero if any check fails.

    ./demo.sh [--duration 24] [--rust 2 --python 2 --node 2 --c 2 --java 2] [--ttl 2]
              [--episodes kill,freeze,leader,etcdctl,cli,election,semaphore,tasks] [--report-dir demo-report] [--tls]

After the mutex run, a second phase on the same cluster (demo/coordination.py): one candidate per
language (Rust, Python, Node, C, Java) campaigns in a leader election whose first leader is SIGKILLed, and workers across the
languages share a semaphore with --permits permits.

Then a third phase (demo/tasks.py): producers in Python and Node put tasks with ids into a task
queue, and one worker per language claims, works and acks each with its result (fenced by the
claim); one worker is SIGKILLed and another SIGSTOPped past its TTL, each mid-task.

With --tls every member serves clients over TLS and requires a client certificate (mTLS), with a
throwaway CA, server and client certificate made for the run in a temp dir; every worker and
`etcdctl lock` connect to the https:// endpoints with the CA, the client certificate and its key.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.join(REPO, "tests", "history"))
sys.path.insert(0, HERE)

import etcd_harness  # noqa: E402
import etcd_history  # noqa: E402
import checks  # noqa: E402
import coordination  # noqa: E402
import database  # noqa: E402
import tasks  # noqa: E402
import observe  # noqa: E402
import timeline_svg  # noqa: E402
import tls_cluster  # noqa: E402
import workers  # noqa: E402

SECOND_PHASE = ("election", "semaphore")
THIRD_PHASE = ("tasks",)
LOCK = "demo/lock"
COUNTER = "demo/counter"
SERVICE = "demo/workers"  # each mutex worker registers itself here (the service registry)
CHECKER = os.path.join(REPO, "tests", "history", "check.py")
COLORS = {"rust": "\033[38;5;208m", "python": "\033[34m", "node": "\033[32m", "c": "\033[35m", "etcdctl": "\033[36m", "cli": "\033[33m", "java": "\033[38;5;130m"}
RESET, BOLD, RED, GREEN = "\033[0m", "\033[1m", "\033[31m", "\033[32m"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=float, default=24.0, help="seconds the workers loop (default 24)")
    for lang in workers.LANGS:
        p.add_argument(f"--{lang}", type=int, default=2, metavar="N", help=f"{lang} worker processes (default 2)")
    p.add_argument("--ttl", type=int, default=2, help="lease TTL in seconds (default 2)")
    p.add_argument("--work-ms", type=int, default=120, help="time each holder spends holding (default 120)")
    p.add_argument("--episodes", default="kill,freeze,leader,etcdctl,cli,election,semaphore,tasks",
                   help="comma-separated subset of kill,freeze,leader,etcdctl,cli (the mutex run), "
                   "election,semaphore (the second phase) and tasks (the third: the task queue), or 'none'")
    p.add_argument("--permits", type=int, default=3, help="the second phase's semaphore permits (default 3)")
    p.add_argument("--slot-workers", type=int, default=6, metavar="N",
                   help="the second phase's semaphore workers, across the languages (default 6)")
    p.add_argument("--report-dir", default=os.path.join(REPO, "demo-report"))
    p.add_argument("--no-build", action="store_true", help="assume every worker is already built")
    p.add_argument("--tls", action="store_true",
                   help="members serve TLS and require client certificates (made for the run); "
                   "every worker connects with https:// and its certificate")
    return p.parse_args()


class Run:
    """Collects every worker's events (with a shared CLOCK_MONOTONIC timestamp) and narrates."""

    def __init__(self, t0_ns: int):
        self.t0 = t0_ns
        self.events: list[dict] = []
        self.lock = threading.Lock()
        self.holder: dict | None = None  # the latest "acquired" event whose holder has not released
        self.narration: list[tuple[float, str]] = []
        self.metrics: dict[str, str] = {}  # each worker's Prometheus text, printed as it exits

    def rel(self, t_ns: int) -> float:
        return (t_ns - self.t0) / 1e9

    def add(self, worker: workers.Worker, ev: dict) -> None:
        ev["label"], ev["lang"], ev["pid"] = worker.label, worker.lang, worker.pid
        if ev.get("ev") == "metrics":
            with self.lock:
                self.metrics[worker.label] = ev.get("text", "")
            return
        if ev.get("ev") == "write_refused" and not checks.is_refusal(ev.get("error")):
            ev["ev"] = "write_unknown"  # a timeout or an unavailable cluster: the write may have committed
        with self.lock:
            self.events.append(ev)
            kind = ev["ev"]
            if kind == "acquired":
                self.holder = ev
            elif kind in ("releasing", "lost") and self.holder and self.holder["label"] == ev["label"]:
                self.holder = None
        self.show(ev)

    def show(self, ev: dict) -> None:
        kind = ev["ev"]
        if kind not in ("acquired", "write_refused", "db_refused", "write_unknown", "lost", "error", "unregistered", "registered_again"):
            return
        color = COLORS.get(ev["lang"], "")
        who = f"{color}{ev['label']:<10}{RESET} pid {ev['pid']:<7}"
        t = f"{self.rel(ev['t']):7.2f}s"
        if kind == "acquired":
            wait = ev.get("wait_ms")
            print(f"  {t}  {who} holds the lock   token {ev['token']:<6}" + (f" waited {wait:7.1f} ms" if wait is not None else ""))
        elif kind == "write_refused":
            print(f"  {t}  {who} {RED}guarded write REFUSED{RESET} (token {ev['token']}: it no longer holds the lock)")
        elif kind == "db_refused":
            print(f"  {t}  {who} {RED}PostgreSQL REFUSED its write{RESET} (token {ev['token']}: a newer holder has written there)")
        elif kind == "write_unknown":
            print(f"  {t}  {who} {RED}guarded write outcome UNKNOWN{RESET} (token {ev['token']}: {ev.get('error')}; "
                  "it may or may not have been committed)")
        elif kind == "lost":
            print(f"  {t}  {who} learns it lost the lock: {ev['reason']}")
        elif kind == "unregistered":
            print(f"  {t}  {who} learns its service registration was lost: {ev['reason']}")
        elif kind == "registered_again":
            print(f"  {t}  {who} registered again (lease {ev['lease']:x})")
        else:
            print(f"  {t}  {who} {RED}error{RESET}: {ev.get('error')}")
        sys.stdout.flush()

    def say(self, text: str) -> None:
        now = time.monotonic_ns()
        with self.lock:
            self.narration.append((self.rel(now), text))
        print(f"  {self.rel(now):7.2f}s  {BOLD}>>> {text}{RESET}")
        sys.stdout.flush()

    def current_holder(self) -> dict | None:
        with self.lock:
            return dict(self.holder) if self.holder else None


def wait_for_holder(run: Run, langs: set[str], timeout: float) -> dict | None:
    """The next holder that is one of our worker processes (not etcdctl) and just acquired."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        h = run.current_holder()
        if h and h["lang"] in langs and run.rel(time.monotonic_ns()) - run.rel(h["t"]) < 0.05:
            return h
        time.sleep(0.005)
    return None


def skip(run: Run, done: dict, name: str, why: str) -> None:
    """An episode that could not run is a failed check, never silently dropped."""
    run.say(f"episode '{name}' SKIPPED: {why} (counted as a failed check)")
    done.setdefault("skipped", []).append((name, why))


def episodes(run: Run, cluster: etcd_harness.Cluster, pool: workers.Pool, args, plan: list[str], ctl_env: dict):
    """Runs the failure episodes in order, spread over the run. Records what it did."""
    langs = {w.lang for w in pool.workers}
    slot = args.duration / (len(plan) + 1)
    done = {}
    for i, name in enumerate(plan):
        time.sleep(slot if i == 0 else max(0.0, slot - (time.monotonic() - last)))
        last = time.monotonic()
        if name == "kill":
            h = wait_for_holder(run, langs, 5)
            if not h:
                skip(run, done, name, "no worker became the holder within 5 s")
            else:
                run.say(f"SIGKILL the holder {h['label']} (pid {h['pid']}, token {h['token']}): "
                        f"the next waiter gets the lock when its lease ({args.ttl}s) expires")
                os.kill(h["pid"], signal.SIGKILL)
                done["kill"] = {"label": h["label"], "token": h["token"], "t": time.monotonic_ns()}
        elif name == "freeze":
            # A Python worker writes to PostgreSQL too: freezing one shows the database refuse it.
            h = wait_for_holder(run, {"python"} & langs if "DEMO_PG" in pool.env else langs, 5)
            if not h:
                skip(run, done, name, "no worker became the holder within 5 s")
            else:
                pause = args.ttl + 1.5
                run.say(f"SIGSTOP the holder {h['label']} (token {h['token']}) for {pause:.1f}s, past its TTL")
                os.kill(h["pid"], signal.SIGSTOP)
                t_stop = time.monotonic_ns()
                time.sleep(pause)
                os.kill(h["pid"], signal.SIGCONT)
                run.say(f"SIGCONT {h['label']}: it must find out it lost the lock, and its write must be refused")
                done["freeze"] = {"label": h["label"], "token": h["token"], "t_stop": t_stop, "t_cont": time.monotonic_ns()}
        elif name == "leader":
            idx = cluster.leader_index()
            if idx is None:
                skip(run, done, name, "no etcd member reported being the leader")
            else:
                run.say(f"SIGKILL the etcd leader (member {idx}); the cluster elects another and the run carries on")
                t_kill = time.monotonic_ns()
                cluster.kill(idx)
                time.sleep(2.0)
                cluster.restart(idx)
                run.say(f"etcd member {idx} restarted and rejoined")
                done["leader"] = {"member": idx, "t": t_kill}
        elif name == "etcdctl":
            run.say("etcdctl lock (etcd's Go concurrency.Mutex) joins the same queue")
            done["etcdctl"] = pool.start_etcdctl(ctl_env)
        elif name == "cli":
            run.say("etcdlock run (the command line) joins the same queue")
            done["cli"] = pool.start_cli(ctl_env)
    return done


def main() -> int:
    args = parse_args()
    plan = [] if args.episodes == "none" else [e.strip() for e in args.episodes.split(",") if e.strip()]
    unknown = set(plan) - {"kill", "freeze", "leader", "etcdctl", "cli"} - set(SECOND_PHASE) - set(THIRD_PHASE)
    if unknown:
        sys.exit(f"unknown episode(s): {', '.join(sorted(unknown))}")
    second = [e for e in plan if e in SECOND_PHASE]
    third = [e for e in plan if e in THIRD_PHASE]
    plan = [e for e in plan if e not in SECOND_PHASE and e not in THIRD_PHASE]
    counts = {lang: getattr(args, lang) for lang in workers.LANGS}
    if sum(counts.values()) < 2:
        sys.exit("need at least two workers")
    if not args.no_build:
        print(f"{BOLD}building the workers{RESET} (Rust example, Python and Node packages, C library, Java jar) ...")
        workers.build([lang for lang, n in counts.items() if n > 0] + (["cli"] if "cli" in plan else []))

    cert_dir = tempfile.mkdtemp(prefix="etcdlock-demo-certs-") if args.tls else None
    try:
        # The counter also lives in PostgreSQL, written by the Python workers through the fence.
        with (database.Database() if counts.get("python") else contextlib.nullcontext()) as db:
            if db:
                print(f"{BOLD}a PostgreSQL for the fenced counter{RESET} at 127.0.0.1:{db.pg.port}")
            return demo(args, plan, counts, cert_dir, second, third, db)
    finally:
        if cert_dir:
            shutil.rmtree(cert_dir, ignore_errors=True)


def demo(args, plan: list[str], counts: dict, cert_dir: str | None, second: list[str], third: list[str], db) -> int:
    tls = " serving TLS, client certificates required" if cert_dir else ""
    print(f"{BOLD}starting a 3-member etcd cluster on 127.0.0.1{tls}{RESET} (250 ms election timeout) ...")
    # A short election timeout keeps the leader episode brief next to the 2 s default TTL; with
    # etcd's default 1 s, an election can outlast a 2 s lease's conservative local deadline.
    if cert_dir:
        # The CA, server and client certificates are made here (openssl), then removed with cert_dir.
        cluster_cm = tls_cluster.MtlsCluster(3, cert_dir, fast_election=True)
    else:
        cluster_cm = etcd_harness.Cluster(3, fast_election=True)
    with cluster_cm as cluster:
        # The workers and etcdctl lock use these; the checks read etcd's history over the plain
        # listener every member keeps (see tls_cluster), independently of the library.
        endpoints = cluster.https_endpoints_str if cert_dir else cluster.endpoints_str
        print(f"  endpoints {endpoints}")
        if cert_dir:
            print(f"  certificates (CA, server, client) made in {cert_dir}")
        cluster.etcdctl("del", "--prefix", "demo/")
        # etcd's own history of the lock and counter keys, read by etcdctl (not our library) from
        # before the first worker starts, each event stamped with when it was seen (over the plain
        # listener every member keeps, with --tls too).
        watcher = etcd_history.LiveWatcher(cluster.endpoints_str, [LOCK + "/", COUNTER]).start()
        t0 = time.monotonic_ns()
        until = t0 + int(args.duration * 1e9)
        run = Run(t0)
        env = {"ETCDLOCK_ENDPOINTS": endpoints, "DEMO_LOCK": LOCK, "DEMO_COUNTER": COUNTER,
               "DEMO_TTL": str(args.ttl), "DEMO_WORK_MS": str(args.work_ms), "DEMO_UNTIL_NS": str(until)}
        if db:
            env["DEMO_PG"] = db.dsn
        if cert_dir:
            env.update(cluster.client_env())
        tls_args = {}
        if cert_dir:
            e = cluster.client_env()
            tls_args = {"ca_file": e["DEMO_TLS_CA"], "cert_file": e["DEMO_TLS_CERT"], "key_file": e["DEMO_TLS_KEY"]}
        # Who is up when: the mutex workers register themselves in SERVICE (DEMO_SERVICE).
        discovery = observe.DiscoveryWatcher(endpoints, SERVICE, t0, tls_args).start()
        pool = workers.Pool(run, {**env, "DEMO_SERVICE": SERVICE})
        print(f"{BOLD}{sum(counts.values())} workers contend for '{LOCK}' for {args.duration:.0f}s{RESET} "
              f"({', '.join(f'{n} {lang}' for lang, n in counts.items() if n)}); TTL {args.ttl}s")
        for lang, n in counts.items():
            for i in range(n):
                pool.start(lang, i)
        # The queue at one moment of contention, for the report (inspect() from a client of its own).
        queue = observe.QueueWatcher(endpoints, LOCK, t0, tls_args).start(until)
        ctl_env = {"endpoints": endpoints, "lock": LOCK, "until": until, "ttl": args.ttl,
                   "flags": cluster.etcdctl_flags() if cert_dir else []}
        try:
            done = episodes(run, cluster, pool, args, plan, ctl_env)
            pool.wait(until)
            # A SIGKILLed worker's key and lease live until the lease expires: give them the TTL.
            # Then a sentinel key ends the watches: the history is complete, or this raises.
            etcd_hist = watcher.finish(settle_s=args.ttl + 3, timeout=30)
        finally:
            watcher.stop()
            queue.finish()
            discovery.finish()
        history = [e for e in etcd_hist["events"] if e["key"].startswith(LOCK + "/")]
        checks.fill_etcdctl_tokens(run.events, history)
        leftovers = {"keys": [k for k in etcd_hist["keys_at_end"] if k.startswith(LOCK + "/")],
                     "leases": etcd_hist["leases_at_end"]}
        counter = checks.read_counter(cluster, COUNTER)
        db_results = database.checks(db, run.events, done) if db else []
        # The second phase (election, semaphore) on the same cluster, once the mutex run is over.
        phase2 = coordination.run(cluster, args, env, second, t0, COLORS) if second else None
        # The third phase (the task queue), once the second is over.
        phase3 = tasks.run(cluster, args, env, t0, COLORS) if third else None

    results = checks.run_all(run.events, history, leftovers, counter, done) + db_results
    os.makedirs(args.report_dir, exist_ok=True)
    hist_path = os.path.join(args.report_dir, "history.jsonl")
    etcd_path = os.path.join(args.report_dir, "etcd-history.json")
    checks.write_history(run.events, done, LOCK, COUNTER, hist_path)
    etcd_history.save(etcd_hist, etcd_path)
    # The history checker, as a separate program over the two files (tests/history/README.md).
    res = subprocess.run([sys.executable, CHECKER, "--etcd-history", etcd_path, "--lock-prefix", LOCK + "/",
                          "--data-prefix", COUNTER, hist_path], capture_output=True, text=True, timeout=120)
    prop_lines = [line for line in res.stdout.splitlines() if line.strip()]
    results.append((res.returncode == 0 and bool(prop_lines),
                    "the history checker (tests/history/check.py) found every property held" if res.returncode == 0
                    else f"the history checker found a violation (exit {res.returncode}){': ' + res.stderr.strip()[-300:] if res.stderr.strip() else ''}"))
    if cert_dir:
        results.append(checks.everyone_acquired(run.events, [w.label for w in pool.workers if w.lang in workers.LANGS],
                                                "over TLS with a client certificate"))
    svg = os.path.join(args.report_dir, "timeline.svg")
    timeline_svg.write(svg, run, done)
    metrics_lines, bad_metrics = observe.summary(run.metrics)
    lang_workers = [w.label for w in pool.workers if w.lang in workers.LANGS]
    killed = {done["kill"]["label"]} if "kill" in done else set()  # SIGKILLed: it printed nothing
    missing = sorted(set(lang_workers) - set(run.metrics) - killed)
    results.append((not bad_metrics and not missing,
                    f"every worker that was not killed printed its metrics as valid Prometheus text ({len(run.metrics)} of {len(lang_workers)})"
                    + "".join(f"; {b}" for b in bad_metrics) + (f"; none from {', '.join(missing)}" if missing else "")))
    results += discovery.checks(lang_workers, done.get("kill"), args.ttl)
    if phase2:
        results += coordination.checks(phase2)
    if phase3:
        results += tasks.checks(phase3)
        tasks_files = tasks.save(phase3, args.report_dir)
    report = checks.write_report(os.path.join(args.report_dir, "report.md"), run, results, done, svg, prop_lines)
    with open(report, "a") as f:
        if phase2:
            f.write("\n".join(coordination.report_lines(phase2)) + "\n")
        if phase3:
            f.write("\n".join(tasks.report_lines(phase3)) + "\n")
            f.write(f"\nThe third phase's records and etcd history: `{tasks_files[0]}`, `{tasks_files[1]}`.\n")
        f.write("\n## The queue at one moment of contention\n\n" + "\n".join(queue.lines()) + "\n")
        f.write(f"\n## Who was up when (`client.discover({SERVICE!r})`)\n\n" + "\n".join(discovery.lines()) + "\n")
        f.write("\n## Metrics\n\n```\n" + "\n".join(metrics_lines) + "\n```\n")

    acquisitions = [e for e in run.events if e["ev"] == "acquired"]
    by_lang = {}
    for e in acquisitions:
        by_lang[e["lang"]] = by_lang.get(e["lang"], 0) + 1
    print()
    print(f"{BOLD}summary{RESET}{' (TLS, client certificates)' if cert_dir else ''}: {len(acquisitions)} acquisitions "
          f"({', '.join(f'{lang} {n}' for lang, n in sorted(by_lang.items()))}), counter {counter}")
    for ok, text in results:
        print(f"  {GREEN + 'ok  ' if ok else RED + 'FAIL'}{RESET}  {text}")
    print(f"{BOLD}{metrics_lines[0]}{RESET}")
    for line in metrics_lines[1:]:
        print(f"  {line}")
    print(f"{BOLD}queue at one moment of contention{RESET} (client.inspect):")
    for line in queue.lines():
        print(f"  {line}")
    print(f"{BOLD}history checker{RESET} ({hist_path}, {etcd_path}):")
    for line in prop_lines:
        print(f"  {line}")
    print(f"{BOLD}who was up when{RESET} (client.discover({SERVICE!r})):")
    for line in discovery.lines():
        print(f"  {line}")
    print(f"report: {report}\ntimeline picture: {svg}")
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
