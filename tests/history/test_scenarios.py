"""Fault scenarios on a 3-member etcd cluster, each under a recorded lock workload whose history
is judged by the history checker (tests/history/check.py) against etcd's own history
(tests/history/etcd_history.py: a watch from revision 1 on the lock and data prefixes).

Each test names its catalogue ID (tests/conformance/scenarios.md, target ``scenarios``):

- FAULT-MOVELEADER-001 (S9): ``etcdctl move-leader`` every 500 ms for 20 s while 3 worker
  processes contend: the checker passes, acquisitions go on (no gap over 5 s), none fails.
- FAULT-HERD-001 (S20): 200 waiters (4 processes x 50 asyncio tasks) on one name: each acquires
  exactly once, the checker passes (FIFO, tokens, exclusion), within a bound; the time is printed.
- FAULT-CLIENT-PAUSE-001 / FAULT-CLIENT-KILL-001: a holder SIGSTOPped past its TTL (then
  SIGCONTed) or SIGKILLed, in every binding (Python: workload.py; Node, C, Rust: the demo
  workers): another client takes over within TTL + 1 s; the resumed holder's write is refused
  and its loss reported; no key or lease is left; the checker passes.
- FAULT-MEMBER-001 (S25): a member added (``member add`` + start) and an original one removed
  while 3 workers contend: the checker passes, the workers keep acquiring after the change, and
  a client that only knows the new member works.
- LOCK-GHOST-003 (S6 + S15): an acquire cancelled while its enqueue is held by a proxy (the
  request's body held in flight, netfakes.HoldProxy), then let go: no ghost key; the checker
  passes (an acquire that failed left no holder) and workers lock afterwards.

Positive controls: ``test_control_*`` run a deliberately broken worker (unfenced writes across a
pause) and require the checker to fail. ``SCENARIO_BREAK=stale`` in the environment makes every
workload worker of every scenario broken (--stale-writes): then every scenario must fail.

Bounds: every worker has a count and a duration bound and is waited for with a timeout, then
SIGKILLed by PID; every loop here is bounded in count and time. Only processes started here are
signalled, by PID. Runs on the etcd that ETCD_BIN names (scripts/test.sh: etcd 3.6).
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.join(REPO, "bindings-python", "tests"))

import etcdlock  # noqa: E402
import etcd_history  # noqa: E402
from etcd_harness import Cluster  # noqa: E402
from history import Recorder, lease_of_key  # noqa: E402
from netfakes import HoldProxy  # noqa: E402

WORKLOAD = os.path.join(HERE, "workload.py")
CHECK = os.path.join(HERE, "check.py")
TTL = 2  # seconds: etcd's minimum with the default 1 s election timeout
BREAK = os.environ.get("SCENARIO_BREAK", "")  # "stale": every workload worker is broken

DEMO = {
    "rust": [os.path.join(REPO, "target", "release", "examples", "demo_worker")],
    "node": ["node", os.path.join(REPO, "demo", "workers", "worker.js")],
    "c": [os.path.join(REPO, "target", "demo", "worker_c")],
}


@pytest.fixture(scope="module")
def demo_built():
    """The Node, C and Rust demo workers, built (demo/workers.py) when one is missing."""
    sys.path.insert(0, os.path.join(REPO, "demo"))
    import workers

    missing = [lang for lang, cmd in DEMO.items() if not os.path.exists(cmd[-1])]
    if not os.path.exists(os.path.join(REPO, "bindings-node", "etcdlock.node")):
        missing.append("node")
    if missing:
        workers.build(sorted(set(missing)))


@pytest.fixture(scope="module")
def cluster():
    with Cluster(3) as c:
        yield c


# ------------------------------------------------------------------ the run ---


class Run:
    """One scenario: a lock name and data prefix of its own, its workers' history files, etcd's
    history of both prefixes (watched live from before the first worker starts)."""

    def __init__(self, cluster: Cluster, tmp_path, tag: str, watch_endpoints=None):
        self.cluster = cluster
        self.dir = str(tmp_path)
        base = f"{tag}-{uuid.uuid4().hex[:8]}"
        self.name = f"{base}/lock"
        self.lock_prefix = self.name + "/"
        self.data_prefix = f"{base}/data/"
        self.counter = self.data_prefix + "counter"
        self.procs: list[subprocess.Popen] = []
        self.nemesis = Recorder(os.path.join(self.dir, "nemesis.jsonl"), "nemesis")
        self.watcher_endpoints = eps = watch_endpoints or cluster.endpoints
        self.watcher = etcd_history.LiveWatcher(eps, [self.lock_prefix, self.data_prefix]).start()
        self.hist = None

    def history_files(self) -> list[str]:
        return sorted(os.path.join(self.dir, f) for f in os.listdir(self.dir) if f.endswith(".jsonl"))

    def workload(self, process: str, endpoints=None, env=None, **opts) -> subprocess.Popen:
        """Starts a workload.py worker; opts become --flags (True: a bare flag); env: extra
        environment variables."""
        args = [sys.executable, WORKLOAD, "--endpoints", ",".join(endpoints or self.cluster.endpoints),
                "--history", os.path.join(self.dir, f"{process}.jsonl"), "--process", process,
                "--name", self.name, "--data-key", self.counter, "--ttl", str(TTL)]
        if BREAK == "stale":
            args.append("--stale-writes")
        for k, v in opts.items():
            flag = "--" + k.replace("_", "-")
            if v is True:
                args.append(flag)
            elif v is not False and v is not None:
                args += [flag, str(v)]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                             env={**os.environ, **(env or {})})
        self.procs.append(p)
        return p

    def wait(self, procs, timeout: float) -> list[dict]:
        """Each worker's summary line; a worker still running at the deadline is SIGKILLed (by
        PID) and fails the test, as does one that exits non-zero."""
        deadline = time.monotonic() + timeout
        out = []
        for p in procs:
            try:
                stdout, stderr = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                pytest.fail(f"worker {p.args[-1] if p.args else p.pid} still running after {timeout:.0f} s: a hang")
            assert p.returncode == 0, f"worker exited {p.returncode}: {stderr[-2000:]}"
            out.append(json.loads(stdout.strip().splitlines()[-1]))
        return out

    def kill_all(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGCONT)
                except ProcessLookupError:
                    pass
                p.kill()
                p.communicate()

    def finish(self, settle_s: float = TTL + 3) -> dict:
        """etcd's history (complete up to a sentinel), after waiting up to settle_s for no key
        under the lock prefix and no lease in etcd (a killed or paused client's lease needs its
        TTL). The data keys are deleted first (after the run: the history keeps their puts), so
        that the wait ends as soon as the locks are gone."""
        deadline = time.monotonic() + settle_s
        while time.monotonic() < deadline:
            keys, leases = etcd_history.leftovers(",".join(self.watcher_endpoints), [self.lock_prefix], 0)
            if not keys and not leases:
                break
            time.sleep(0.1)
        self.cluster.etcdctl("del", "--prefix", self.data_prefix)
        self.hist = self.watcher.finish(settle_s=0.5)
        etcd_history.save(self.hist, os.path.join(self.dir, "etcd-history.json"))
        return self.hist

    def check(self, expect_ok: bool = True) -> str:
        """Runs the history checker; asserts it passes (or, for a control, that it fails)."""
        assert self.hist is not None, "finish() first"
        assert os.path.exists(CHECK), "tests/history/check.py (the history checker) is missing"
        files = [f for f in self.history_files()]
        res = subprocess.run(
            [sys.executable, CHECK, "--etcd-history", os.path.join(self.dir, "etcd-history.json"),
             "--lock-prefix", self.lock_prefix, "--data-prefix", self.data_prefix, *files],
            capture_output=True, text=True, timeout=120, cwd=REPO)
        report = res.stdout + res.stderr
        print(report)
        if expect_ok:
            assert res.returncode == 0, f"the history checker found a violation (exit {res.returncode}):\n{report}"
        else:
            assert res.returncode == 1, f"the checker passed a broken run (exit {res.returncode}):\n{report}"
        return report

    def records(self) -> list[dict]:
        from history import load
        return load(self.history_files())

    def close(self) -> None:
        self.kill_all()
        self.watcher.stop()
        self.nemesis.close()


@pytest.fixture
def make_run(cluster, tmp_path):
    runs = []

    def make(tag: str, c: Cluster = None, **kw) -> Run:
        r = Run(c or cluster, tmp_path / f"{tag}-{len(runs)}", tag, **kw)
        runs.append(r)
        return r

    yield make
    for r in runs:
        r.close()


def oks(records, op, process=None):
    return [r for r in records if r["op"] == op and r["phase"] == "ok" and (process is None or r["process"] == process)]


def assert_nothing_left(hist) -> None:
    assert hist["keys_at_end"] == [], f"keys left under the prefixes: {hist['keys_at_end']}"
    assert hist["leases_at_end"] == [], f"leases left in etcd: {hist['leases_at_end']}"


# ------------------------------------------------------------------- S9 ---


def leader_mover(cluster: Cluster, stop: threading.Event, every: float, bound_s: float, moves: list, errors: list):
    """Moves the leadership to the next member every `every` seconds, until stop or bound_s."""
    ids = {i: cluster.member_id(i) for i in range(len(cluster.members)) if not cluster.members[i].removed}
    order = sorted(ids)
    deadline = time.monotonic() + bound_s
    while not stop.is_set() and time.monotonic() < deadline:
        t0 = time.monotonic()
        try:
            leader = cluster.leader_index()
            if leader is not None:
                target = order[(order.index(leader) + 1) % len(order)]
                cluster.etcdctl("move-leader", f"{ids[target]:x}", timeout=10)
                moves.append((time.monotonic_ns(), leader, target))
        except Exception as e:  # noqa: BLE001 - counted; a move during an election can fail
            errors.append(str(e).splitlines()[-1][:200])
        stop.wait(max(0.0, every - (time.monotonic() - t0)))


# covers: FAULT-MOVELEADER-001
def test_move_leader_every_500ms_under_contention(cluster, make_run):
    run = make_run("s9")
    duration = 20.0
    # A request whose proposal a leader transfer dropped is answered only at its deadline (etcd:
    # "request timed out"): the request timeout bounds every stall, so it is shorter here.
    timeout = 2.0
    workers = [run.workload(f"w{i}", count=5000, duration=duration, hold_ms=2, timeout=timeout) for i in range(3)]
    stop, moves, errors = threading.Event(), [], []
    mover = threading.Thread(target=leader_mover, args=(cluster, stop, 0.5, duration + 5, moves, errors), daemon=True)
    started = time.monotonic_ns()
    mover.start()
    try:
        stats = run.wait(workers, duration + 30)
    finally:
        stop.set()
        mover.join(15)
    ended = time.monotonic_ns()
    run.finish()
    recs = run.records()
    acq = sorted(r["t"] for r in oks(recs, "acquire"))
    gaps = [b - a for a, b in zip([started] + acq, acq + [ended])]
    worst_gap = max(gaps) / 1e9
    failed = [r for r in recs if r["op"] == "acquire" and r["phase"] in ("fail", "unknown")]
    timed_out = [r for r in recs if r["phase"] == "unknown"]
    print(f"FAULT-MOVELEADER-001: {len(moves)} leader moves ({len(errors)} refused), {len(acq)} acquisitions "
          f"in {duration:.0f} s, longest gap without one {worst_gap:.2f} s, {len(failed)} failed acquires, "
          f"{len(timed_out)} ops with an unknown outcome ({sorted(set(r.get('error', '')[:60] for r in timed_out))}); {stats}")
    assert len(moves) >= 20, f"only {len(moves)} leader moves happened: {errors[:5]}"
    assert len(acq) >= 200, f"only {len(acq)} acquisitions under leader churn"
    assert worst_gap < timeout + 2, f"no acquisition for {worst_gap:.2f} s (request timeout {timeout} s): a stall"
    assert len(failed) <= 3, f"{len(failed)} acquires failed under leader churn: {failed[:3]}"
    run.check()
    assert_nothing_left(run.hist)


# ------------------------------------------------------------------ S20 ---


# covers: FAULT-HERD-001
def test_herd_of_200_waiters_across_4_processes(cluster, make_run):
    run = make_run("s20")
    t0 = time.monotonic()
    workers = [run.workload(f"h{i}", herd=50, count=1, duration=60, acquire_timeout=60) for i in range(4)]
    stats = run.wait(workers, 90)
    took = time.monotonic() - t0
    run.finish()
    recs = run.records()
    acq = oks(recs, "acquire")
    by_process = {}
    for r in acq:
        by_process[r["process"]] = by_process.get(r["process"], 0) + 1
    first_invoke = min(r["t"] for r in recs if r["op"] == "acquire" and r["phase"] == "invoke")
    last_release = max(r["t"] for r in recs if r["op"] == "release" and r["phase"] == "ok")
    herd_s = (last_release - first_invoke) / 1e9
    print(f"FAULT-HERD-001: 200 waiters (4 processes x 50 tasks): all served in {herd_s:.2f} s "
          f"(first acquire sent -> last release done), {took:.2f} s with process start-up; {stats}")
    assert len(by_process) == 200 and set(by_process.values()) == {1}, \
        f"{len(by_process)} of 200 waiters acquired; counts {sorted(set(by_process.values()))}"
    assert sum(s["wrote"] for s in stats) == 200, stats
    assert herd_s < 30, f"the herd took {herd_s:.1f} s"
    run.check()
    assert_nothing_left(run.hist)


# ------------------------------------------- client paused / killed, per binding ---


def demo_worker(run: Run, lang: str, label: str, work_ms: int, rounds_s: float) -> subprocess.Popen:
    """A demo worker (demo/workers) on run's lock, its counter under the data prefix (plain
    integers), one round (its loop ends rounds_s after the start)."""
    cmd = DEMO[lang]
    if not os.path.exists(cmd[-1]):
        pytest.fail(f"the {lang} demo worker is not built: {cmd[-1]}")
    env = {**os.environ, "ETCDLOCK_ENDPOINTS": ",".join(run.cluster.endpoints), "DEMO_LOCK": run.name,
           "DEMO_COUNTER": run.data_prefix + f"{label}-counter", "DEMO_TTL": str(TTL),
           "DEMO_WORK_MS": str(work_ms), "DEMO_UNTIL_NS": str(time.monotonic_ns() + int(rounds_s * 1e9))}
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    run.procs.append(p)
    return p


class DemoEvents:
    """Reads a demo worker's JSON lines in a thread; converts them to history records."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.events: list[dict] = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            line = line.strip()
            if line.startswith("{"):
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                with self.cond:
                    self.events.append(ev)
                    self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_for(self, ev: str, timeout: float):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                found = next((e for e in self.events if e.get("ev") == ev), None)
                if found or self.proc.poll() is not None and not self.thread.is_alive():
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(min(left, 0.2))

    def write_history(self, path: str, process: str, name: str, data_key: str) -> None:
        """The worker's steps as history records (history.py's format). The demo workers report
        no event before a write: its invoke is stamped with the worker's previous event (a
        lower bound). A refused write is a fail when its error is NotHeld, else unknown; a
        release whose outcome the worker does not report is unknown."""
        out, n, key, token, last_t, open_acq, open_rel = [], 0, None, None, None, None, None

        def rec(op_id, op, phase, t, **f):
            out.append({"id": op_id, "process": process, "op": op, "phase": phase, "t": t, **f})

        def not_held(error) -> bool:
            return "notheld" in str(error).replace("_", "").lower()

        for ev in self.events:
            kind, t = ev.get("ev"), int(ev["t"])
            if open_rel and kind in ("waiting", "done", "released", "release_failed"):
                if kind == "released":
                    rec(open_rel, "release", "ok", t, key=key, token=token)
                elif kind == "release_failed":
                    phase = "fail" if not_held(ev.get("error")) else "unknown"
                    rec(open_rel, "release", phase, t, error=str(ev.get("error")), key=key, token=token)
                else:
                    rec(open_rel, "release", "unknown", t, error="not reported by the demo worker", key=key, token=token)
                open_rel = None
            if kind == "waiting":
                n += 1
                open_acq = f"{process}#{n}"
                rec(open_acq, "acquire", "invoke", t, name=name)
            elif kind == "acquired" and open_acq:
                key, token = ev["key"], int(ev["token"])
                rec(open_acq, "acquire", "ok", t, name=name, key=key, token=token, lease=lease_of_key(key))
                open_acq = None
            elif kind == "error" and open_acq:
                rec(open_acq, "acquire", "fail", t, error=ev.get("error", ""), name=name)
                open_acq = None
            elif kind == "lost":
                n += 1
                rec(f"{process}#{n}", "lost", "event", t, key=key, token=int(ev["token"]), reason=ev.get("reason"))
            elif kind in ("wrote", "write_refused"):
                n += 1
                wid, tok = f"{process}#{n}", int(ev["token"])
                value = {"value": str(ev["value"])} if "value" in ev else {}
                rec(wid, "write", "invoke", last_t, data_key=data_key, token=tok, **value)
                if kind == "wrote":
                    rec(wid, "write", "ok", t, data_key=data_key, token=tok, **value)
                else:
                    phase = "fail" if not_held(ev.get("error")) else "unknown"
                    rec(wid, "write", phase, t, error=str(ev.get("error")), data_key=data_key, token=tok, **value)
            elif kind == "releasing":
                n += 1
                open_rel = f"{process}#{n}"
                rec(open_rel, "release", "invoke", t, key=key, token=int(ev["token"]))
            last_t = t
        with open(path, "w") as f:
            for r in out:
                f.write(json.dumps(r, separators=(",", ":")) + "\n")


def wait_history_ok(path: str, op: str, timeout: float):
    """The first ok of op in a workload's history file (polled, bounded)."""
    from history import load
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            found = next((r for r in load(path) if r["op"] == op and r["phase"] == "ok"), None)
            if found:
                return found
        time.sleep(0.01)
    return None


BINDINGS = ["python", "node", "c", "rust"]


def client_fault(run: Run, lang: str, fault: str, unfenced: bool = False) -> dict:
    """A victim (binding lang) acquires, holds 1 s, and is SIGSTOPped for 2 x TTL then SIGCONTed
    ('pause'), or SIGKILLed ('kill'), right after acquiring; a Python taker then contends.
    Returns measurements; asserts takeover <= TTL + 1 s and the scenario's outcome."""
    victim = f"victim-{lang}"
    demo = None
    if lang == "python":
        vp = run.workload(victim, count=1, hold_ms=1000, duration=30, unfenced=unfenced)
        got = wait_history_ok(os.path.join(run.dir, f"{victim}.jsonl"), "acquire", 15)
        assert got, "the Python victim did not acquire"
        token = got["token"]
    else:
        # Its loop ends 3.5 s after the start: time to start and acquire (Node may need a
        # second on a loaded machine), and over before the round it was frozen in has ended.
        vp = demo_worker(run, lang, victim, work_ms=1000, rounds_s=3.5)
        demo = DemoEvents(vp)
        got = demo.wait_for("acquired", 15)
        assert got, f"the {lang} victim did not acquire: {demo.events}"
        token = int(got["token"])
    if fault == "pause":
        vp.send_signal(signal.SIGSTOP)
        t_fault = time.monotonic_ns()
        run.nemesis.event("pause", target=victim, pid=vp.pid)
    else:
        vp.send_signal(signal.SIGKILL)
        t_fault = time.monotonic_ns()
        run.nemesis.event("kill", target=victim, pid=vp.pid)
    taker = run.workload("taker", count=8, hold_ms=100, pause_ms=50, duration=4 * TTL + 8, acquire_timeout=4 * TTL + 4)
    if fault == "pause":
        time.sleep(2 * TTL - (time.monotonic_ns() - t_fault) / 1e9)
        vp.send_signal(signal.SIGCONT)
        run.nemesis.event("resume", target=victim, pid=vp.pid)
    stats = run.wait([taker], 4 * TTL + 20)
    if lang == "python":
        if fault == "pause":
            run.wait([vp], 15)
        else:
            vp.wait(5)
    else:
        try:
            vp.wait(15)
        except subprocess.TimeoutExpired:
            vp.kill()
            vp.wait()
            pytest.fail(f"the {lang} victim did not end after its round")
        demo.thread.join(5)
        demo.write_history(os.path.join(run.dir, f"{victim}.jsonl"), victim, run.name, run.data_prefix + f"{victim}-counter")
    run.finish()
    recs = run.records()
    took = next(r["t"] for r in oks(recs, "acquire", "taker")) - t_fault
    takeover_s = took / 1e9
    mine = [r for r in recs if r["process"] == victim]
    writes = [r for r in mine if r["op"] == "write" and r["phase"] in ("ok", "fail", "unknown")]
    lost = [r for r in mine if r["op"] == "lost"]
    return {"token": token, "takeover_s": takeover_s, "writes": writes, "lost": lost, "taker": stats[0],
            "events": demo.events if demo else None}


@pytest.mark.parametrize("lang", BINDINGS)
# covers: FAULT-CLIENT-PAUSE-001
def test_holder_paused_past_ttl(cluster, make_run, demo_built, lang):
    run = make_run(f"pause-{lang}")
    m = client_fault(run, lang, "pause")
    print(f"FAULT-CLIENT-PAUSE-001 {lang}: takeover {m['takeover_s']:.2f} s after SIGSTOP (TTL {TTL} s); "
          f"resumed holder's write: {[w['phase'] for w in m['writes']]}; lost: {[l.get('reason') for l in m['lost']]}")
    assert m["takeover_s"] <= TTL + 1, f"takeover took {m['takeover_s']:.2f} s (TTL {TTL} s)"
    assert m["taker"]["acquired"] >= 1
    assert [w["phase"] for w in m["writes"]] == ["fail"], \
        f"the resumed holder's write (token {m['token']}) was not refused: {m['writes']} {m['events']}"
    assert [l.get("reason") for l in m["lost"]] == ["expired"], f"loss not reported once as expired: {m['lost']}"
    run.check()
    assert_nothing_left(run.hist)
    stale = [e for e in run.hist["events"] if e["key"].startswith(run.data_prefix + "victim-") and e["type"] == "put"]
    assert not stale, f"the stale holder's write reached etcd: {stale}"


@pytest.mark.parametrize("lang", BINDINGS)
# covers: FAULT-CLIENT-KILL-001
def test_holder_killed(cluster, make_run, demo_built, lang):
    run = make_run(f"kill-{lang}")
    m = client_fault(run, lang, "kill")
    print(f"FAULT-CLIENT-KILL-001 {lang}: takeover {m['takeover_s']:.2f} s after SIGKILL (TTL {TTL} s)")
    assert m["takeover_s"] <= TTL + 1, f"takeover took {m['takeover_s']:.2f} s (TTL {TTL} s)"
    assert m["taker"]["acquired"] == 8, m["taker"]
    assert not m["writes"], m["writes"]
    run.check()
    assert_nothing_left(run.hist)


# A positive control: the same pause with a holder that writes unfenced. Its write lands while
# the taker holds the lock: the checker must report it, or it is blind.
def test_control_unfenced_paused_holder_is_caught(cluster, make_run):
    run = make_run("control-unfenced")
    m = client_fault(run, "python", "pause", unfenced=True)
    assert [w["phase"] for w in m["writes"]] == ["ok"], m["writes"]
    run.check(expect_ok=False)


# ------------------------------------------------------------------ S25 ---


# covers: FAULT-MEMBER-001
def test_member_added_and_removed_under_contention(make_run):
    with Cluster(3) as c:
        # An original member that is not the leader: every client knows it, and may have its
        # streams there. (Removing the leader adds an election, which a 2 s TTL may not outlive:
        # a waiter then fails LockLost, as it must; that is FAULT-LEADER's ground, not this.)
        leader = c.leader_index()
        gone = next(i for i in range(3) if i != leader)
        run = make_run("s25", c=c, watch_endpoints=[c.members[i].client_url for i in range(3) if i != gone])
        workers = [run.workload(f"w{i}", count=5000, duration=16, hold_ms=5) for i in range(3)]
        time.sleep(3)
        t_add = time.monotonic_ns()
        new = c.add_member()
        run.nemesis.event("member_add", target=c.members[new].name)
        time.sleep(2)
        leader = c.leader_index()
        assert leader != gone, "the member to remove became the leader"
        t_remove = time.monotonic_ns()
        c.remove_member(gone)
        run.nemesis.event("member_remove", target=c.members[gone].name, leader=c.members[leader].name if leader is not None else None)
        t_changed = time.monotonic_ns()
        late = run.workload("late", endpoints=[c.members[new].client_url], count=20, duration=15, hold_ms=5)
        stats = run.wait(workers + [late], 40)
        run.finish()
        recs = run.records()
        acq = oks(recs, "acquire")
        after = [r for r in acq if r["t"] > t_changed and r["process"] != "late"]
        failed = [r for r in recs if r["op"] == "acquire" and r["phase"] in ("fail", "unknown")]
        members = c.etcdctl("member", "list")
        print(f"FAULT-MEMBER-001: add took {(t_remove - t_add) / 1e9 - 2:.2f} s, remove {(t_changed - t_remove) / 1e9:.2f} s; "
              f"{len(acq)} acquisitions, {len(after)} by the first workers after the change, "
              f"{len(failed)} failed; {stats}")
        assert len(members.strip().splitlines()) == 3 and c.members[gone].peer_url not in members
        assert stats[-1]["acquired"] == 20, f"the client of the new member only: {stats[-1]}"
        assert len(after) >= 30, f"the first workers made {len(after)} acquisitions after the change"
        # Seen once in 17 runs (TTL 2 s): a waiter failed LockLost ("lost while waiting for the
        # lock (expired)") 1.5 s after the removal, its lease past its local deadline (its
        # keepalives presumably on the removed member), and went on. Safe (nothing held on a
        # dead lease; the checker's P5 covers it), but a lost wait: tolerated once, reported.
        safe = ("LockLost", "Unavailable", "Timeout")
        assert len(failed) <= 1 and all(r.get("error", "").startswith(safe) for r in failed), failed[:3]
        for r in failed:
            print(f"FAULT-MEMBER-001: a failed acquire, {(r['t'] - t_remove) / 1e9:+.2f} s from the removal: {r}")
            assert any(a["process"] == r["process"] and a["t"] > r["t"] for a in acq), "the worker stopped acquiring"
        run.check()
        assert_nothing_left(run.hist)


# --------------------------------------------------------------- S6 + S15 ---


# covers: LOCK-GHOST-003
def test_cancel_while_enqueue_held_leaves_no_ghost(cluster, make_run):
    run = make_run("s6")
    name = run.name
    marks = {}
    with HoldProxy(cluster.members[0].client_port) as proxy:

        async def main():
            holder_rec = Recorder(os.path.join(run.dir, "holder.jsonl"), "holder")
            waiter_rec = Recorder(os.path.join(run.dir, "waiter.jsonl"), "waiter")
            holder = etcdlock.AsyncClient(cluster.endpoints, timeout=5)
            waiter = etcdlock.AsyncClient(proxy.endpoint, timeout=5)
            try:
                await holder.connect()
                await waiter.connect()
                held = holder.lock(name, ttl=10)
                op = holder_rec.invoke("acquire", name=name)
                assert await held.acquire(timeout=5)
                holder_rec.ok(op, name=name, key=held.key.decode(), token=held.fencing_token, lease=f"{held.lease_id:x}")
                # Another lock of the waiter's client keeps its lease in use throughout (the late
                # enqueue would find it alive); a timed-out wait then teaches the client that the
                # queue is busy, so its next enqueue is the one request that writes its key.
                other = waiter.lock(name + "-other", ttl=10)
                assert await other.acquire(timeout=5)
                lease = f"{other.lease_id:x}"  # the client's locks with one TTL share one lease
                op = waiter_rec.invoke("acquire", name=name)
                assert await waiter.lock(name, ttl=10).acquire(timeout=0.3) is False
                waiter_rec.fail(op, "timeout", name=name, lease=lease)
                proxy.hold(f"{name}/".encode())
                op = waiter_rec.invoke("acquire", name=name)
                task = asyncio.ensure_future(waiter.lock(name, ttl=10).acquire())
                deadline = time.monotonic() + 5
                while not proxy.holding and time.monotonic() < deadline and not task.done():
                    await asyncio.sleep(0.01)
                assert proxy.holding, "the enqueue was not held by the proxy"
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await asyncio.wait_for(task, 12)
                waiter_rec.fail(op, "Cancelled", name=name, lease=lease)
                marks["cancelled"] = time.monotonic_ns()
                marks["waiter_lease"] = lease
                await asyncio.sleep(0.3)
                assert proxy.release() > 0, "nothing was held"
                await asyncio.sleep(0.3)
                op = holder_rec.invoke("release", key=held.key.decode(), token=held.fencing_token)
                key, token = held.key.decode(), held.fencing_token
                await held.release()
                holder_rec.ok(op, key=key, token=token)
                await other.release()
            finally:
                await holder.close()
                await waiter.close()
                holder_rec.close()
                waiter_rec.close()

        asyncio.run(asyncio.wait_for(main(), 60))
    # Other clients contend afterwards: a ghost key would block them until its lease expires.
    t0 = time.monotonic()
    stats = run.wait([run.workload(f"after{i}", count=10, duration=20, acquire_timeout=5) for i in range(2)], 30)
    took = time.monotonic() - t0
    run.finish()
    print(f"LOCK-GHOST-003: the two workers after the cancel made {[s['acquired'] for s in stats]} acquisitions in {took:.2f} s")
    assert [s["acquired"] for s in stats] == [10, 10], stats
    run.check()
    assert_nothing_left(run.hist)
    # The held enqueue, let go after the cancel returned, must not land: no put of a queue key
    # on the waiter's lease after that (etcd_history stamps each event with when it was read).
    late = [e for e in run.hist["events"] if e["type"] == "put" and e["key"].startswith(run.lock_prefix)
            and e.get("lease") == marks["waiter_lease"] and (e.get("t_obs") or 0) > marks["cancelled"]]
    assert not late, f"the cancelled acquire's enqueue landed after the cancel (a ghost): {late}"
