"""What the demo shows of the library's own observability: each worker's metrics (the Prometheus
text it prints before it exits, read with the strict reader tests/prometheus_text.py) summed into
one summary, and the lock's queue as `client.inspect()` saw it at one moment of contention."""
from __future__ import annotations

import threading
import time

import prometheus_text

# Summary rows: (label, sample names summed over the workers).
COUNTS = [
    ("acquisitions", ["etcdlock_lock_acquisitions_total"]),
    ("acquires that timed out / failed", ["etcdlock_lock_timeouts_total", "etcdlock_lock_acquire_failures_total"]),
    ("releases / failed releases", ["etcdlock_lock_releases_total", "etcdlock_lock_release_failures_total"]),
    ("locks lost (expired, revoked, key deleted, closed)",
     [f'etcdlock_lock_losses_total{{reason="{r}"}}' for r in ("expired", "revoked", "key_deleted", "closed")]),
    ("requests sent again / KV member switches", ["etcdlock_request_retries_total", "etcdlock_member_switches_total"]),
    ("stream reopens (keepalive, watch)", ['etcdlock_stream_reopens_total{stream="keepalive"}', 'etcdlock_stream_reopens_total{stream="watch"}']),
]
MEANS = [("lock wait", "etcdlock_lock_wait_seconds"), ("lock hold", "etcdlock_lock_hold_seconds"),
         ("keepalive round trip", "etcdlock_keepalive_rtt_seconds")]


def summary(texts: dict[str, str]) -> tuple[list[str], list[str]]:
    """Lines of the summary of every worker's metrics text, and the workers whose text did not parse."""
    parsed, bad = {}, []
    for label, text in sorted(texts.items()):
        try:
            parsed[label] = prometheus_text.parse(text)
        except ValueError as e:
            bad.append(f"{label}: {e}")
    total = lambda name: sum(s.get(name, 0) for s in parsed.values())  # noqa: E731
    lines = [f"{label:<52} {' / '.join(f'{total(n):g}' for n in names)}" for label, names in COUNTS]
    for label, h in MEANS:
        count, s = total(h + "_count"), total(h + "_sum")
        lines.append(f"{'mean ' + label + ' (ms)':<52} {s / count * 1000 if count else 0:.1f} over {count:g}")
    return [f"metrics of {len(parsed)} workers (each client's, summed):"] + lines, bad


class QueueWatcher:
    """Polls `inspect()` from a client of its own until the lock has a holder and at least
    `waiters` waiters, and keeps that moment's queue."""

    def __init__(self, endpoints: str, lock: str, t0_ns: int, tls: dict, waiters: int = 2):
        self.endpoints, self.lock, self.t0, self.tls, self.want = endpoints, lock, t0_ns, tls, waiters
        self.seen: dict | None = None
        self.error: str | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self, until_ns: int) -> "QueueWatcher":
        self.until = until_ns
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            import etcdlock  # the Python package the demo builds for its workers
        except ImportError as e:
            self.error = f"the etcdlock Python package is not installed ({e})"
            return
        try:
            with etcdlock.Client(self.endpoints, **self.tls) as client:
                while not self.stop.is_set() and time.monotonic_ns() < self.until:
                    state = client.inspect(self.lock)
                    if state.holder is not None and len(state.waiters) >= self.want:
                        self.seen = {"t": (time.monotonic_ns() - self.t0) / 1e9, "state": state}
                        return
                    self.stop.wait(0.05)
        except etcdlock.Error as e:
            self.error = f"{type(e).__name__}: {e}"

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)

    def lines(self) -> list[str]:
        """The queue as a Markdown table, or why there is none."""
        if self.seen is None:
            return [f"not seen: {self.error or 'never a holder and ' + str(self.want) + ' waiters at one poll'}"]
        st = self.seen["state"]
        out = [f"At {self.seen['t']:.2f}s (etcd revision {st.revision}), `client.inspect({self.lock!r})` showed:", "",
               "| place | key | fencing token | lease | TTL left (s) | value |", "|---|---|---|---|---|---|"]
        for i, e in enumerate([st.holder] + st.waiters):
            place = "holder" if i == 0 else f"waiter {i}"
            out.append(f"| {place} | `{e.key.decode(errors='replace')}` | {e.fencing_token} | {e.lease:x} | "
                       f"{'gone' if e.ttl is None else e.ttl} | {e.value.decode(errors='replace')} |")
        return out
