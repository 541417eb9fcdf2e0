"""The Python demo worker: acquire → guarded increment → work → release, reported as JSON lines.

Environment: ETCDLOCK_ENDPOINTS, DEMO_LOCK, DEMO_COUNTER, DEMO_TTL, DEMO_WORK_MS,
DEMO_UNTIL_NS (a CLOCK_MONOTONIC deadline; time.monotonic_ns reads that clock on Linux); with
https:// endpoints (demo.sh --tls) also DEMO_TLS_CA, DEMO_TLS_CERT, DEMO_TLS_KEY (PEM file paths).
"""
import json
import os
import time

import etcdlock


def emit(**fields):
    print(json.dumps({"t": time.monotonic_ns(), **fields}), flush=True)


def main():
    env = os.environ
    until, work = int(env["DEMO_UNTIL_NS"]), int(env["DEMO_WORK_MS"]) / 1000
    tls = {}
    if env.get("DEMO_TLS_CA"):
        tls = {"ca_file": env["DEMO_TLS_CA"], "cert_file": env.get("DEMO_TLS_CERT"), "key_file": env.get("DEMO_TLS_KEY")}
    with etcdlock.Client(env["ETCDLOCK_ENDPOINTS"], **tls) as client:
        # The value is who queues: the report's queue inspection shows it.
        lock = client.lock(env["DEMO_LOCK"], ttl=int(env["DEMO_TTL"]), value=f"python pid {os.getpid()}")
        emit(ev="ready")
        while time.monotonic_ns() < until:
            emit(ev="waiting")
            try:
                lock.acquire()
            except etcdlock.Error as e:
                emit(ev="error", error=f"{type(e).__name__}: {e}")
                time.sleep(0.2)
                continue
            token = lock.fencing_token
            emit(ev="acquired", token=token, key=lock.key.decode())
            lock.on_lost(lambda reason, token=token: emit(ev="lost", token=token, reason=reason))
            time.sleep(work)
            try:
                current = int(client.get(env["DEMO_COUNTER"]) or 0)
            except etcdlock.Error as e:  # no write without the value it increments; release all the same
                emit(ev="error", error=f"read {type(e).__name__}: {e}")
                current = None
            if current is not None:
                try:
                    client.put(env["DEMO_COUNTER"], str(current + 1), if_held=lock)
                    emit(ev="wrote", token=token, value=current + 1)
                except etcdlock.Error as e:  # NotHeld: refused; a timeout: unknown (run.py tells them apart)
                    emit(ev="write_refused", token=token, value=current + 1, error=type(e).__name__)
            emit(ev="releasing", token=token)
            try:
                lock.release()
                emit(ev="released", token=token)
            except etcdlock.Error as e:
                emit(ev="release_failed", token=token, error=type(e).__name__)
        emit(ev="metrics", text=client.metrics_text())
    emit(ev="done")


if __name__ == "__main__":
    main()
