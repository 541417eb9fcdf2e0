"""A throwaway Prometheus (Debian's `prometheus`) on 127.0.0.1, and the dashboard's queries
evaluated through its HTTP API the way Grafana evaluates them. Used by dashboard_run.py.

Grafana's variables, as Grafana sets them for a Prometheus data source whose "scrape interval"
setting is the scrape interval used here, over a time range of `range` seconds:
  $__interval       the query step (here the scrape interval: the panels are wider in pixels
                    than the run has samples, so Grafana's range/width estimate is below it)
  $__rate_interval  max($__interval + scrape interval, 4 x scrape interval)
  $__range          the whole time range
  a dashboard variable ($client ...) with "All" selected: .* (its regex for all values)
"""
import ctypes
import json
import math
import os
import re
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request


class NoData(RuntimeError):
    """A panel's query returned no series, or only NaN: the picture would show an empty panel."""


def die_with_parent():
    """preexec_fn: the kernel sends the child SIGTERM if this process dies without stopping it
    (SIGKILLed, say), so no worker or Prometheus outlives a run."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read().decode())


class Prometheus:
    """Prometheus scraping `targets` ({instance label: "127.0.0.1:port"}) every `scrape_s`
    seconds, its config and TSDB in `tmp`. Stopped by its PID (stop())."""

    def __init__(self, tmp, targets, scrape_s, binary="prometheus"):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write(self.config(targets, scrape_s))
        self.log = open(os.path.join(tmp, "prometheus.log"), "w")
        self.proc = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={os.path.join(tmp, 'tsdb')}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=1d"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent)
        self._wait_ready(30)

    @staticmethod
    def config(targets, scrape_s):
        """One job; each target's `instance` label is the worker's name (the Active panel's legend)."""
        lines = ["global:", f"  scrape_interval: {scrape_s}s", f"  scrape_timeout: {max(1, scrape_s // 2)}s",
                 "scrape_configs:", "  - job_name: etcdlock", "    static_configs:"]
        for name, addr in targets.items():
            lines += [f"      - targets: ['{addr}']", f"        labels: {{instance: '{name}'}}"]
        return "\n".join(lines) + "\n"

    def _wait_ready(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self.proc.returncode} (log: {self.log.name})")
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"prometheus not ready within {seconds} s (log: {self.log.name})")

    def wait_targets_up(self, seconds):
        """Until every target's last scrape succeeded; raises naming those that did not."""
        deadline, down = time.monotonic() + seconds, ["?"]
        while time.monotonic() < deadline:
            active = _get(self.url + "/api/v1/targets")["data"]["activeTargets"]
            down = [t["labels"]["instance"] for t in active if t["health"] != "up"]
            if active and not down:
                return
            time.sleep(0.5)
        raise RuntimeError(f"targets not scraped within {seconds} s: {down}")

    def query_range(self, expr, start, end, step):
        q = urllib.parse.urlencode({"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step}s"})
        body = _get(f"{self.url}/api/v1/query_range?{q}", timeout=30)
        if body.get("status") != "success":
            raise RuntimeError(f"query failed: {expr}: {body}")
        return body["data"]["result"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def grafana_vars(dashboard, range_s, scrape_s, step_s):
    """The values Grafana gives its variables for this time range (see the module's doc)."""
    values = {
        "__interval": f"{step_s}s",
        "__rate_interval": f"{max(step_s + scrape_s, 4 * scrape_s)}s",
        "__range": f"{int(range_s)}s",
    }
    for var in dashboard.get("templating", {}).get("list", []):
        if var.get("type") in ("query", "custom"):
            values[var["name"]] = ".*"
    return values


def substitute(expr, values):
    """expr with $name / ${name} replaced; an unknown variable is an error, not a blank."""
    def one(m):
        name = m.group(1) or m.group(2)
        if name not in values:
            raise KeyError(f"unknown dashboard variable ${name} in {expr!r}")
        return values[name]
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", one, expr)


def legend(fmt, labels):
    """Grafana's legendFormat: {{label}} replaced by the series' label value."""
    if not fmt:
        return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), fmt)


def evaluate(dashboard, prom, start, end, scrape_s):
    """Every panel's targets through query_range. Returns [{panel fields, "series": [{"target",
    "legend", "t": [...], "v": [...]}]}]; raises NoData naming each query that returned nothing
    (no series, or only NaN) so the picture never shows an empty panel silently."""
    step = scrape_s
    values = grafana_vars(dashboard, end - start, scrape_s, step)
    panels, empty = [], []
    for panel in dashboard["panels"]:
        out = {k: panel.get(k) for k in ("id", "title", "gridPos", "fieldConfig")}
        out["series"] = []
        for target in panel.get("targets", []):
            expr = substitute(target["expr"], values)
            found = 0
            result = sorted(prom.query_range(expr, start, end, step), key=lambda s: sorted(s["metric"].items()))
            for s in result:
                t = [float(p[0]) for p in s["values"]]
                v = [float(p[1]) for p in s["values"]]
                if any(not math.isnan(x) for x in v):
                    found += 1
                out["series"].append({"target": target.get("refId"), "legend": legend(target.get("legendFormat"), s["metric"]), "t": t, "v": v})
            if not found:
                empty.append(f"panel {panel['title']!r}: {expr}")
        panels.append(out)
    if empty:
        raise NoData("queries that returned no data:\n  " + "\n  ".join(empty))
    return {"start": start, "end": end, "step": step, "vars": values, "panels": panels}
