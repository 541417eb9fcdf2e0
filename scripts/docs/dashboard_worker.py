#!/usr/bin/env python3
"""The demo's Python worker (demo/workers/worker.py, run unchanged) with its client's metrics
served for Prometheus: GET /metrics on 127.0.0.1:DASH_METRICS_PORT answers the client's
metrics_text(). Used by scripts/docs/dashboard_run.py to draw the dashboard's picture.

The worker makes its own etcdlock.Client; this wraps that class before running it, so the
worker's code and behaviour are the demo's. The wrapper adds:
  - the client's name, DASH_CLIENT (the dashboard's `client` label; the demo's clients are
    unnamed, `etcdlock-1` in every process);
  - the HTTP server (127.0.0.1 only, a daemon thread, stopped when the client closes);
  - with DASH_DISCOVER set: a thread following DEMO_SERVICE's instances (client.discover), as a
    load balancer would, so the registry panel's discovery rate has a reader.
"""
import http.server
import os
import runpy
import sys
import threading

import etcdlock

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "demo", "workers", "worker.py")


class _Metrics(http.server.BaseHTTPRequestHandler):
    client = None

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path != "/metrics":
            self.send_error(404)
            return
        body = self.client.metrics_text().encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # one line per scrape would drown the worker's own output
        pass


class ServedClient(etcdlock.Client):
    """etcdlock.Client, named DASH_CLIENT, whose metrics are served over HTTP while it is open."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("name", os.environ["DASH_CLIENT"])
        super().__init__(*args, **kwargs)
        handler = type("Handler", (_Metrics,), {"client": self})
        self._http = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["DASH_METRICS_PORT"])), handler)
        threading.Thread(target=self._http.serve_forever, name="dash-metrics", daemon=True).start()
        self._discovery = None
        if os.environ.get("DASH_DISCOVER"):
            self._discovery = self.discover(os.environ["DEMO_SERVICE"])
            threading.Thread(target=self._follow, name="dash-discover", daemon=True).start()

    def _follow(self):
        try:
            for _ in self._discovery:
                pass
        except etcdlock.Error as e:  # ends with the client; anything else is worth seeing
            print(f"dashboard worker: discovery ended: {type(e).__name__}: {e}", file=sys.stderr)

    def __exit__(self, *exc):
        if self._discovery is not None:
            self._discovery.close()
        self._http.shutdown()
        self._http.server_close()
        return super().__exit__(*exc)


etcdlock.Client = ServedClient
runpy.run_path(WORKER, run_name="__main__")
