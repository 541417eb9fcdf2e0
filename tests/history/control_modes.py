"""What the controls of the queue, once-per-period and pool checkers share: a run's etcd,
watcher, workers and nemesis (``Run``, ``pause``, ``kill``), and ``run_modes``: run every mode,
print each property's line, and judge: ``correct`` must pass everything (with its nemesis having
acted), each broken mode must be VIOLATED on at least the properties it is expected to break.
The callers put this directory and tests/ on sys.path first."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Callable

import etcd_harness
import etcd_history
import history


def run_modes(kind: str, expect: dict[str, set[str]], modes: list[str],
              run: Callable[[str, Callable[[str], None]], tuple[list, str, bool]]) -> int:
    """``run(mode, log)`` -> (results, a summary line, whether the nemesis did all it should).
    Returns the exit status: 1 if any mode was not judged as expected."""
    failures, t0 = [], time.monotonic()
    for mode in modes:
        want = "every property ok" if not expect[mode] else "VIOLATED on " + ", ".join(sorted(expect[mode]))
        print(f"{kind} control {mode}: expect {want}", flush=True)
        try:
            results, summary, nemesis_ok = run(mode, lambda s: print(s, flush=True))
        except Exception as e:  # noqa: BLE001 - a control that cannot run is a failure, loudly
            print(f"  could not run: {type(e).__name__}: {e}", flush=True)
            failures.append(mode)
            continue
        print(f"  {summary}")
        for r in results:
            print("  " + r.line())
            for ev in r.evidence[:2] if not r.ok else []:
                print(f"      {ev}")
        violated = {r.prop for r in results if not r.ok}
        ok = (not violated and nemesis_ok) if mode == "correct" else expect[mode] <= violated
        print(f"  => {'as expected' if ok else 'FAILED'}", flush=True)
        if not ok:
            failures.append(mode)
    print(f"{kind} controls: {len(modes) - len(failures)}/{len(modes)} as expected in {time.monotonic() - t0:.0f}s"
          + (f"; FAILED: {', '.join(failures)}" if failures else ""))
    return 1 if failures else 0


def parse_modes(p, arg: str, expect: dict) -> list[str]:
    modes = [m for m in arg.split(",") if m]
    if set(modes) - set(expect):
        p.error(f"unknown modes: {sorted(set(modes) - set(expect))}")
    return modes


class Run:
    """One control run: a single-member etcd of its own, a LiveWatcher on ``prefixes``, the
    worker processes (each recording its history) and the nemesis's record; on exit every
    process still running is resumed and killed, the watcher stopped, the etcd stopped and the
    temp dir removed.

        with Run("queue", mode, [QUEUE + "/", RESULTS]) as run:
            run.spawn("w0", "queue_worker.py", ["--mode", mode])   # + --endpoints, --history, --process
            ...nemesis: run.nemesis.event("kill", ...)...
            hist = run.finish(wait_s=60, settle_s=3, log=print)
            records = run.records()
    """

    def __init__(self, kind: str, mode: str, prefixes: list[str]):
        self.kind, self.mode, self.prefixes = kind, mode, prefixes
        self.procs: list = []
        self.paths: list[str] = []

    def __enter__(self) -> "Run":

        self.tmp = tempfile.mkdtemp(prefix=f"etcdlock-{self.kind}ctl-{self.mode}-")
        self.cluster = etcd_harness.Cluster(1).__enter__()
        self.endpoints = self.cluster.endpoints_str
        self.watcher = etcd_history.LiveWatcher(self.endpoints, self.prefixes).start()
        self.nemesis = history.Recorder(os.path.join(self.tmp, "nemesis.jsonl"), "nemesis")
        return self

    def spawn(self, name: str, script: str, args: list[str], endpoints: str | None = None):
        """Starts ``script`` (next to this file) as the worker ``name`` (talking to ``endpoints``,
        by default the run's etcd)."""
        path = os.path.join(self.tmp, f"{name}.jsonl")
        self.paths.append(path)
        cmd = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), script), "--endpoints", endpoints or self.endpoints,
               "--history", path, "--process", name, *args]
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.tmp, f"{name}.err"), "w"))
        self.procs.append(p)
        return p

    def finish(self, wait_s: float, settle_s: float, log, cross_check: bool = True) -> dict:
        """Waits up to ``wait_s`` for each worker to end (killing one that does not), then reads
        etcd's complete history (``LiveWatcher.finish``; ``cross_check``: against a post-run read
        too, which a run that compacted cannot have)."""
        for p in self.procs:
            try:
                p.wait(timeout=max(5.0, wait_s))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
                log(f"    a worker (pid {p.pid}) did not finish in time: killed")
        return self.watcher.finish(settle_s=settle_s, timeout=30, cross_check=cross_check)

    def records(self) -> list[dict]:
        return history.load(self.paths + [os.path.join(self.tmp, "nemesis.jsonl")])

    def __exit__(self, *exc) -> None:
        try:
            self.watcher.stop()
            for p in self.procs:
                if p.poll() is None:
                    os.kill(p.pid, signal.SIGCONT)
                    p.kill()
                    p.wait(5)
        finally:
            self.cluster.__exit__(*exc)
            shutil.rmtree(self.tmp, ignore_errors=True)


def pause(run: Run, target: tuple[str, int], seconds: float) -> None:
    """SIGSTOPs the worker ``target`` (process, pid) for ``seconds``, recorded as the nemesis."""
    os.kill(target[1], signal.SIGSTOP)
    run.nemesis.event("pause", target=target[0], pid=target[1])
    time.sleep(seconds)
    os.kill(target[1], signal.SIGCONT)
    run.nemesis.event("resume", target=target[0], pid=target[1])


def kill(run: Run, target: tuple[str, int]) -> None:
    os.kill(target[1], signal.SIGKILL)
    run.nemesis.event("kill", target=target[0], pid=target[1])
