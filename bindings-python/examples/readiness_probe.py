"""A Kubernetes readiness probe for a leader-elected worker: ``GET /readyz`` answers 200 while
this process leads (``health().ok``) and 503 otherwise, so a Service routes only to the leader.

    ETCDLOCK_ENDPOINTS=http://127.0.0.1:2379 python3 readiness_probe.py --port 8080 --name jobs/leader

Prints ``listening <port>`` once it serves, ``leading <token>`` once it leads, and ``lost
(<reason>)`` when it no longer does (it then answers 503 until SIGTERM). See the
"Health and readiness" guide for the pod spec.
"""

import argparse
import os
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import etcdlock


def serve(leadership: etcdlock.Leadership, port: int) -> ThreadingHTTPServer:
    """Serves ``/readyz`` from ``leadership.health()`` on 127.0.0.1:``port`` (0: any free port)."""

    class Probe(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/readyz":
                self.send_error(404)
                return
            h = leadership.health()  # local reads only: cheap enough for every probe
            body = f"{h.state} {h.lost_reason or ''} token={h.fencing_token}\n".encode()
            self.send_response(200 if h.ok else 503)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Probe)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--name", default="jobs/leader")
    ap.add_argument("--ttl", type=int, default=10)
    args = ap.parse_args()
    with etcdlock.Client(os.environ.get("ETCDLOCK_ENDPOINTS", "http://127.0.0.1:2379")) as client:
        election = client.election(args.name, ttl=args.ttl)
        leadership = election.campaign(os.environ.get("HOSTNAME", "me"))
        server = serve(leadership, args.port)
        print(f"listening {server.server_address[1]}", flush=True)
        print(f"leading {leadership.fencing_token}", flush=True)
        lost, stop = threading.Event(), threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        leadership.on_lost(lambda reason: lost.set())
        while not lost.wait(0.5) and not stop.is_set():
            pass  # the leader's work goes here; on loss, stop it at once
        if lost.is_set():
            # Not ready (503) from now on; the pod is not broken, so liveness stays fine.
            print(f"lost ({leadership.lost_reason}): not ready", flush=True)
            stop.wait()
        server.shutdown()


if __name__ == "__main__":
    main()
