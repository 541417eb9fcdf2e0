#!/usr/bin/env python3
"""Draws docs/grafana/etcdlock.png: docs/grafana/etcdlock.json's panels, each panel's own queries
evaluated by a real Prometheus over a real run. Run it through scripts/docs/dashboard-picture.sh
(which installs Prometheus and matplotlib when missing).

The run (about four minutes; every wait below is bounded):
  - a throwaway 3-member etcd (tests/etcd_harness.py) on 127.0.0.1;
  - three of the demo's Python workers (demo/workers/worker.py via dashboard_worker.py, which
    serves each client's /metrics): acquire -> work -> fenced write -> release on one lock, each
    registered in a service, one also following the service's instances;
  - three `etcdlock elect --health-addr` candidates for one election (their /metrics has
    etcdlock_cli_active, the Active panel);
  - a throwaway Prometheus scraping all six every SCRAPE_S seconds;
  - FREEZE_AT s in: the lock's holder and the election's leader are frozen (SIGSTOP) for
    FREEZE_FOR s, longer than their TTL: their leases expire, another worker takes the lock and
    another candidate leads; on SIGCONT both learn of the loss (the old leader exits 75 and is
    started again as a candidate);
  - MEMBER_DOWN_AT s in: the first etcd member (the first endpoint) is killed for
    MEMBER_DOWN_FOR s, then restarted: the clients move to another member.
Then each panel's queries go through query_range (dashboard_prom.evaluate: fails, exit 1, if any
returns no data) and dashboard_render.py draws the grid. Everything started here is stopped by
its PID; all traffic is on 127.0.0.1.

    python3 scripts/docs/dashboard_run.py [--out PNG] [--save-data JSON] [--from-data JSON]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, HERE)
from etcd_harness import Cluster  # noqa: E402
import dashboard_prom  # noqa: E402
import dashboard_render  # noqa: E402

SCRAPE_S = 2
TTL = 5
WORK_MS = 300
FREEZE_AT, FREEZE_FOR = 70, 15
MEMBER_DOWN_AT, MEMBER_DOWN_FOR = 140, 15
END = 210


def log(msg):
    print(f"dashboard-picture: {msg}", flush=True)


def last_event(path):
    """The worker's last complete JSON line (its stdout), or {}."""
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    for line in reversed(lines[:-1]):  # lines[-1]: after the last newline, maybe half written
        try:
            return json.loads(line)
        except ValueError:
            continue
    return {}


def healthz(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


class Run:
    def __init__(self, tmp, cluster, etcdlock):
        self.tmp, self.cluster, self.etcdlock = tmp, cluster, etcdlock
        self.procs = {}  # name -> Popen, every process this run started (etcd: the cluster's)
        self.ports = {}
        self.annotations = []  # (label, start, end) in epoch seconds

    def spawn(self, name, argv, env=None):
        out = open(os.path.join(self.tmp, f"{name}.log"), "ab")
        self.procs[name] = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                          start_new_session=True, preexec_fn=dashboard_prom.die_with_parent)
        out.close()

    def start_workers(self, until_ns):
        base = dict(os.environ, ETCDLOCK_ENDPOINTS=self.cluster.endpoints_str, DEMO_LOCK="dash/orders",
                    DEMO_COUNTER="dash/counter", DEMO_TTL=str(TTL), DEMO_WORK_MS=str(WORK_MS),
                    DEMO_SERVICE="dash/orders-svc", DEMO_UNTIL_NS=str(until_ns))
        for i in (1, 2, 3):
            name = f"orders-{i}"
            self.ports[name] = dashboard_prom.free_port()
            env = dict(base, DEMO_LABEL=name, DASH_CLIENT=name, DASH_METRICS_PORT=str(self.ports[name]))
            if i == 1:
                env["DASH_DISCOVER"] = "1"
            self.spawn(name, [sys.executable, os.path.join(HERE, "dashboard_worker.py")], env)
        for i in (1, 2, 3):
            self.ports[f"node-{i}"] = dashboard_prom.free_port()
            self.start_candidate(f"node-{i}")
            time.sleep(0.5)  # node-1 campaigns first and leads

    def start_candidate(self, name):
        env = dict(os.environ, ETCDLOCK_ENDPOINTS=self.cluster.endpoints_str)
        self.spawn(name, [self.etcdlock, "elect", "--ttl", str(TTL), "--health-addr", f"127.0.0.1:{self.ports[name]}",
                          "dash/leader", name], env)

    def holder(self, seconds=20):
        """SIGSTOPs a worker in the middle of its work under the lock (its last event 'acquired',
        still so once stopped: it had not begun releasing) and returns its name."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for i in (1, 2, 3):
                name = f"orders-{i}"
                path = os.path.join(self.tmp, f"{name}.log")
                if last_event(path).get("ev") != "acquired":
                    continue
                self.procs[name].send_signal(signal.SIGSTOP)
                if last_event(path).get("ev") == "acquired":
                    return name
                self.procs[name].send_signal(signal.SIGCONT)
            time.sleep(0.02)
        raise RuntimeError(f"no worker found holding the lock within {seconds} s")

    def leader(self):
        leaders = [n for n in ("node-1", "node-2", "node-3") if healthz(self.ports[n]) == 200]
        if len(leaders) != 1:
            raise RuntimeError(f"expected one leader among the candidates, /healthz says {leaders}")
        return leaders[0]

    def freeze(self):
        leader = self.leader()
        holder = self.holder()
        self.procs[leader].send_signal(signal.SIGSTOP)
        t0 = time.time()
        log(f"froze {holder} (holding the lock) and {leader} (leading) for {FREEZE_FOR} s")
        time.sleep(FREEZE_FOR)
        for name in (holder, leader):
            self.procs[name].send_signal(signal.SIGCONT)
        self.annotations.append((f"lock holder {holder} and leader {leader} frozen (SIGSTOP) {FREEZE_FOR} s", t0, time.time()))
        try:  # the old leader learns it lost, exits 75, and campaigns again as a new process
            code = self.procs[leader].wait(timeout=20)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{leader} did not exit within 20 s of SIGCONT after losing its leadership")
        log(f"{leader} exited {code} after the freeze; campaigning again")
        if code != 75:
            raise RuntimeError(f"{leader} exited {code}, not 75 (lost)")
        self.start_candidate(leader)

    def member_down(self):
        t0 = time.time()
        self.cluster.kill(0)
        log(f"etcd member 0 killed for {MEMBER_DOWN_FOR} s")
        time.sleep(MEMBER_DOWN_FOR)
        self.cluster.restart(0)
        self.annotations.append((f"etcd member 1 of 3 killed, restarted {MEMBER_DOWN_FOR} s later", t0, time.time()))

    def stop(self):
        for name, p in self.procs.items():
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.terminate()
        for name, p in self.procs.items():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def run(etcdlock, dashboard, seconds):
    with tempfile.TemporaryDirectory(prefix="etcdlock-dashboard-") as tmp, Cluster(3) as cluster:
        r, prom = Run(tmp, cluster, etcdlock), None
        try:
            r.start_workers(time.monotonic_ns() + (seconds + 120) * 10**9)
            prom = dashboard_prom.Prometheus(tmp, {n: f"127.0.0.1:{p}" for n, p in r.ports.items()}, SCRAPE_S)
            prom.wait_targets_up(30)
            start = time.time()
            log(f"prometheus at {prom.url} scrapes {len(r.ports)} workers; the run lasts {seconds} s")
            steps = [(FREEZE_AT, r.freeze), (MEMBER_DOWN_AT, r.member_down)]
            for at, step in [(at, step) for at, step in steps if at + FREEZE_FOR < seconds]:
                time.sleep(max(0.0, start + at - time.time()))
                step()
            time.sleep(max(0.0, start + seconds - time.time()))
            end = time.time()
            time.sleep(SCRAPE_S * 1.5)  # the last scrape is in
            # Every worker lasted the run (a crashed one would leave its lines cut short, silently).
            exited = {n: p.returncode for n, p in r.procs.items() if p.poll() is not None}
            if exited:
                raise RuntimeError(f"workers exited during the run: {exited}")
            prom.wait_targets_up(10)
            data = dashboard_prom.evaluate(json.load(open(dashboard)), prom, start, end, SCRAPE_S)
            data["annotations"] = r.annotations
            return data
        except dashboard_prom.NoData:
            raise
        except BaseException:
            log(f"failed; the workers' and Prometheus' logs were in {tmp}:")
            for f in sorted(os.listdir(tmp)):
                if f.endswith(".log"):
                    tail = open(os.path.join(tmp, f), errors="replace").read()[-1500:]
                    print(f"--- {f} (end)\n{tail}", file=sys.stderr)
            raise
        finally:
            r.stop()
            if prom is not None:
                prom.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "docs/grafana/etcdlock.png"))
    ap.add_argument("--etcdlock", default=os.path.join(ROOT, "target/release/etcdlock"))
    ap.add_argument("--dashboard", default=os.path.join(ROOT, "docs/grafana/etcdlock.json"))
    ap.add_argument("--seconds", type=int, default=END, help="the run's length (the disturbances need the default)")
    ap.add_argument("--save-data", help="also write the queries' results (JSON) here")
    ap.add_argument("--from-data", help="draw from results saved by --save-data, without a run")
    args = ap.parse_args()
    t0 = time.monotonic()
    if args.from_data:
        data = json.load(open(args.from_data))
    else:
        try:
            data = run(args.etcdlock, args.dashboard, args.seconds)
        except dashboard_prom.NoData as e:
            log(str(e))
            return 1
        if args.save_data:
            with open(args.save_data, "w") as f:
                json.dump(data, f)
    dashboard_render.render(data, args.out)
    log(f"wrote {os.path.relpath(args.out, ROOT)} ({os.path.getsize(args.out) // 1024} KB) in {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
