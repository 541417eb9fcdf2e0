#!/usr/bin/env python3
"""Positive controls for the history checker: the same short contended workload, with the same
nemesis, once per broken_worker.py mode, each through check.py.

    python3 tests/history/controls.py [--modes correct,unfenced,...] [--workers 4]
                                      [--duration 14] [--keep DIR]
    python3 tests/history/controls.py --kind semaphore|rwlock|election [--permits 2]

Each control starts its own single-member etcd (tests/etcd_harness.py: 127.0.0.1, free ports,
a temp dir, stopped by PID), a LiveWatcher on the lock and data prefixes, then ``--workers``
broken_worker.py processes for ``--duration`` seconds. The nemesis pauses the current holder
with SIGSTOP for TTL + 1.5 s (then until another worker has just taken the lock, at most 2 s
more), twice: its lease expires on the server while it is stopped. It records ``pause`` and
``resume`` events. ``correct`` must pass every property; every broken mode
must be reported VIOLATED on the properties listed in EXPECT. With ``--kind`` the workers use
a semaphore, a read-write lock or an election instead of the mutex (modes correct and barge),
judged by recipes_check.py (EXPECT_RECIPES). Exits 1 if a control passes or
the correct run fails (or a run could not be recorded). Bounded: worker count, run length, the
nemesis's polling, every wait.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import check  # noqa: E402
import recipes_check  # noqa: E402
import etcd_harness  # noqa: E402
import etcd_history  # noqa: E402
import history  # noqa: E402

LOCK = "ctl/lock"
DATA = "ctl/data/x"
TTL = 2
# The properties each broken mode breaks (and must be reported as violating).
EXPECT = {
    "correct": set(),
    "unfenced": {"P1"},
    "ignore-lost": {"P1"},
    "release-by-name": {"P6"},
    "ghost": {"P4", "P5"},
    "barge": {"P2", "P3"},
}
# The same for the other primitives: a barging worker claims while the rule says it does not hold.
EXPECT_RECIPES = {"correct": set(), "barge": {"R1"}}


def find_holder(paths: list[str], fresh_ns: int = 150_000_000, other_than: str | None = None):
    """(process, pid) of a worker (not ``other_than``) that acquired less than ``fresh_ns`` ago
    and has neither started releasing nor lost it, else None."""
    recs = []
    for p in paths:
        if os.path.exists(p):
            recs += history.load([p])
    pids = {r["process"]: r["pid"] for r in recs if r["op"] == "start" and r["phase"] == "event"}
    last_ok = None
    for r in recs:
        if r["op"] == "acquire" and r["phase"] == "ok" and r["process"] != other_than:
            last_ok = r
    if last_ok is None or time.monotonic_ns() - last_ok["t"] > fresh_ns:
        return None
    proc = last_ok["process"]
    if any(r["process"] == proc and r["t"] > last_ok["t"] and (r["op"] in ("release", "lost")) for r in recs):
        return None
    return proc, pids.get(proc)


def nemesis(rec: history.Recorder, paths: list[str], procs: dict, at_s: list[float], t0: float, pause_s: float,
            log) -> int:
    """Pauses a fresh holder at each time in ``at_s`` (seconds after t0). Returns how many."""
    done = 0
    not_before = t0
    for at in at_s:
        # at the planned time, but never while the previous pause's aftermath is still going on
        time.sleep(max(0.0, t0 + at - time.monotonic(), not_before - time.monotonic()))
        deadline = time.monotonic() + 5.0
        h = None
        while h is None and time.monotonic() < deadline:
            h = find_holder(paths)
            if h is None or h[1] is None or h[1] not in procs:
                h = None
                time.sleep(0.01)
        if h is None:
            log(f"    nemesis: no fresh holder within 5 s at +{at:.1f}s")
            continue
        proc, pid = h
        os.kill(pid, signal.SIGSTOP)
        t_stop = time.monotonic()
        rec.event("pause", target=proc, pid=pid)
        try:
            time.sleep(pause_s)
            # Resume it just after another worker took the lock, so that what the resumed one
            # does next (a late write, a release by name) meets a holder with its turn ahead.
            until = time.monotonic() + 2.0
            while time.monotonic() < until and find_holder(paths, other_than=proc) is None:
                time.sleep(0.005)
        finally:
            os.kill(pid, signal.SIGCONT)
            rec.event("resume", target=proc, pid=pid)
        not_before = time.monotonic() + 1.5
        log(f"    nemesis: paused {proc} (pid {pid}) for {time.monotonic() - t_stop:.1f}s at +{t_stop - t0:.1f}s")
        done += 1
    return done


def run_control(mode: str, args, log) -> tuple[bool, list[check.Result], str]:
    tmp = tempfile.mkdtemp(prefix=f"etcdlock-hist-{mode}-")
    procs: dict[int, subprocess.Popen] = {}
    try:
        with etcd_harness.Cluster(1) as c:
            watcher = etcd_history.LiveWatcher(c.endpoints_str, [LOCK + "/", DATA]).start()
            t0 = time.monotonic()
            until = time.monotonic_ns() + int(args.duration * 1e9)
            paths = []
            try:
                for i in range(args.workers):
                    path = os.path.join(tmp, f"h-{i}.jsonl")
                    paths.append(path)
                    cmd = [sys.executable, os.path.join(HERE, "broken_worker.py"), "--endpoints", c.endpoints_str,
                           "--lock", LOCK, "--data-key", DATA, "--mode", mode, "--history", path,
                           "--process", f"w{i}", "--index", str(i), "--until-ns", str(until), "--ttl", str(TTL),
                           "--work-ms", str(args.work_ms), "--acquire-timeout", str(args.acquire_timeout),
                           "--kind", args.kind, "--permits", str(args.permits)]
                    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=open(os.path.join(tmp, f"w{i}.err"), "w"))
                    procs[p.pid] = p
                nem = history.Recorder(os.path.join(tmp, "nemesis.jsonl"), "nemesis")
                paths_all = paths + [nem.path]
                pauses = nemesis(nem, paths, procs, args.pause_at, t0, TTL + 1.5, log)
                for p in procs.values():
                    left = max(0.1, until / 1e9 + 15 - time.monotonic())
                    try:
                        p.wait(timeout=left)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait(timeout=5)
                        nem.event("kill", target=f"w{list(procs).index(p.pid)}", pid=p.pid)
                        log(f"    worker pid {p.pid} did not finish in time: killed")
                hist = watcher.finish(settle_s=TTL + 1, timeout=30)
            finally:
                watcher.stop()
                for p in procs.values():
                    if p.poll() is None:
                        os.kill(p.pid, signal.SIGCONT)
                        p.kill()
                        p.wait(timeout=5)
            etcd_history.save(hist, os.path.join(tmp, "etcd.json"))
        errs = [open(os.path.join(tmp, f"w{i}.err")).read().strip() for i in range(args.workers)]
        for i, e in enumerate(errs):
            if e:
                log(f"    w{i} stderr: {e.splitlines()[-1][:200]}")
        records = history.load(paths_all)
        if args.kind == "mutex":
            results = check.check(records, hist, LOCK + "/", DATA)
        else:
            results = recipes_check.run_check(records, hist, LOCK + "/", DATA, args.kind, args.permits)
        acq = sum(1 for r in records if r["op"] == "acquire" and r["phase"] == "ok")
        summary = (f"{acq} acquisitions, {sum(1 for r in records if r['op'] == 'write' and r['phase'] == 'ok')} "
                   f"writes ok, {len(hist['events'])} etcd events, {pauses} pauses")
        if args.keep:
            dst = os.path.join(args.keep, mode)
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(tmp, dst)
        return pauses >= 1, results, summary
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", choices=recipes_check.KINDS, default="mutex")
    p.add_argument("--permits", type=int, default=2, help="a semaphore's (with --kind semaphore)")
    p.add_argument("--modes", default=None, help="default: every mode of the kind")
    p.add_argument("--workers", type=int, default=4, choices=range(2, 9))
    p.add_argument("--duration", type=float, default=14.0)
    p.add_argument("--work-ms", type=int, default=400)
    p.add_argument("--acquire-timeout", type=float, default=1.5)
    p.add_argument("--keep", help="copy each run's histories to KEEP/<mode>")
    a = p.parse_args(argv)
    a.pause_at = [2.0, 6.5]
    least = a.pause_at[-1] + TTL + 1.5 + 2 + 1  # the last pause, its wait for a fresh holder, its aftermath
    if a.duration > 60 or a.duration < least:
        p.error(f"--duration must be within [{least}, 60]")
    expect = EXPECT if a.kind == "mutex" else EXPECT_RECIPES
    modes = [m.strip() for m in (a.modes or ",".join(expect)).split(",") if m.strip()]
    bad_modes = set(modes) - set(expect)
    if bad_modes:
        p.error(f"unknown modes: {sorted(bad_modes)}")
    t_start = time.monotonic()
    failures = []
    for mode in modes:
        print(f"control {a.kind} {mode}: expect {'every property ok' if not expect[mode] else 'VIOLATED on ' + ', '.join(sorted(expect[mode]))}",
              flush=True)
        try:
            nemesis_ok, results, summary = run_control(mode, a, lambda s: print(s, flush=True))
        except Exception as e:  # noqa: BLE001 - a control that cannot run is a failure, loudly
            print(f"  control {mode}: could not run: {type(e).__name__}: {e}", flush=True)
            failures.append(mode)
            continue
        print(f"  {summary}")
        for r in results:
            print("  " + r.line())
            if not r.ok:
                for ev in r.evidence[:2]:
                    print(f"      {ev}")
        violated = {r.prop for r in results if not r.ok}
        expected = expect[mode]
        if mode == "correct":
            ok = not violated and nemesis_ok
            verdict = "correct run passes every property" if ok else \
                f"FAILED: the correct run violated {sorted(violated)}" + ("" if nemesis_ok else " (nemesis missed)")
        else:
            missing = expected - violated
            ok = not missing
            verdict = (f"caught: VIOLATED {', '.join(sorted(violated))}" if ok else
                       f"FAILED: the broken mode was not reported on {', '.join(sorted(missing))}")
        print(f"  => control {mode}: {verdict}", flush=True)
        if not ok:
            failures.append(mode)
    print(f"controls: {len(modes) - len(failures)}/{len(modes)} as expected in {time.monotonic() - t_start:.0f}s"
          + (f"; FAILED: {', '.join(failures)}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
