#!/usr/bin/env python3
"""Checks docs/grafana/etcdlock.json against a real scrape: every metric its queries name is one
that etcdlock exports, and every family etcdlock exports is on the dashboard.

The scrape is the command line's /metrics (the library's families, under the client's label, and
`etcdlock_cli_active`) while `etcdlock run --health-addr` holds a lock on a throwaway etcd.

    python3 tests/dashboard/check.py [--etcdlock target/release/etcdlock]
"""
import argparse, json, os, re, socket, subprocess, sys, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from etcd_harness import Cluster  # noqa: E402

SUFFIXES = ("_bucket", "_sum", "_count")


def queried(dashboard):
    """Every etcdlock_* metric name in the dashboard's queries, histogram suffixes removed."""
    names = set()
    for panel in dashboard["panels"]:
        assert panel.get("targets"), f"panel {panel['title']!r} has no query"
        for t in panel["targets"]:
            for m in re.findall(r"\betcdlock_[a-z_]+\b", t["expr"]):
                for s in SUFFIXES:
                    if m.endswith(s):
                        m = m[: -len(s)]
                names.add(m)
    return names


def scrape(binary, endpoints):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, ETCDLOCK_ENDPOINTS=endpoints)
    run = subprocess.Popen([binary, "run", "--health-addr", f"127.0.0.1:{port}", "dashboard/check", "--", "sleep", "30"], env=env)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    text = r.read().decode()
                if "etcdlock_cli_active 1" in text:
                    return text
            except OSError:
                pass
            if time.monotonic() > deadline or run.poll() is not None:
                raise SystemExit("dashboard check: no /metrics with the lock held within 20 s")
            time.sleep(0.1)
    finally:
        run.terminate()
        run.wait(timeout=20)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--etcdlock", default=os.path.join(ROOT, "target/release/etcdlock"))
    ap.add_argument("--dashboard", default=os.path.join(ROOT, "docs/grafana/etcdlock.json"))
    args = ap.parse_args()
    dashboard = json.load(open(args.dashboard))
    with Cluster(1) as c:
        text = scrape(args.etcdlock, c.endpoints_str)
    exported = set(re.findall(r"^# TYPE (etcdlock_[a-z_]+) ", text, re.M))
    names = queried(dashboard)
    unknown, missing = sorted(names - exported), sorted(exported - names)
    if unknown:
        print(f"dashboard check: queries name metrics etcdlock does not export: {unknown}")
    if missing:
        print(f"dashboard check: families etcdlock exports that no panel shows: {missing}")
    if unknown or missing:
        return 1
    print(f"dashboard check: {len(dashboard['panels'])} panels query {len(names)} families, each exported (scrape of etcdlock run's /metrics)")
    return 0


sys.exit(main())
