"""What the demo shows of the library's own observability: each worker's metrics (the Prometheus
text it prints before it exits, read with the strict reader tests/prometheus_text.py) summed into
one summary, the lock's queue as `client.inspect()` saw it at one moment of contention, and who
was up when, as the workers' service registrations discovered by `client.discover()`."""
from __future__ import annotations

import re
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


def without_client(samples: dict[str, float]) -> dict[str, float]:
    """The samples keyed without their `client` label (each worker's one client has its own
    name), so that the workers' numbers add up by metric."""
    out = {}
    for key, v in samples.items():
        key = re.sub(r'client="(?:[^"\\]|\\.)*",?', "", key).replace("{}", "")
        out[key] = out.get(key, 0) + v
    return out


def summary(texts: dict[str, str]) -> tuple[list[str], list[str]]:
    """Lines of the summary of every worker's metrics text, and the workers whose text did not parse."""
    parsed, bad = {}, []
    for label, text in sorted(texts.items()):
        try:
            parsed[label] = without_client(prometheus_text.parse(text))
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


class DiscoveryWatcher:
    """Follows the workers' service with `client.discover()` from a client of its own: every set
    it was given, stamped with when. Each mutex worker registers itself there (its label as the
    instance name) while it runs."""

    def __init__(self, endpoints: str, service: str, t0_ns: int, tls: dict):
        self.endpoints, self.service, self.t0, self.tls = endpoints, service, t0_ns, tls
        self.sets: list[tuple[int, list[str]]] = []  # (monotonic ns, instance names)
        self.error: str | None = None
        self.discovery = None
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "DiscoveryWatcher":
        self.thread.start()
        self.started.wait(10)
        return self

    def _run(self) -> None:
        try:
            import etcdlock
        except ImportError as e:
            self.error = f"the etcdlock Python package is not installed ({e})"
            self.started.set()
            return
        try:
            with etcdlock.Client(self.endpoints, **self.tls) as client, client.discover(self.service) as self.discovery:
                for snapshot in self.discovery:
                    self.sets.append((time.monotonic_ns(), [i.name.decode() for i in snapshot.instances]))
                    self.started.set()
        except etcdlock.Error as e:
            self.error = f"{type(e).__name__}: {e}"
        self.started.set()

    def finish(self) -> None:
        if self.discovery is not None:
            self.discovery.close()
        self.thread.join(timeout=10)

    def seen(self) -> set[str]:
        return {name for _, names in self.sets for name in names}

    def left_at(self, label: str, after_ns: int) -> int | None:
        """When `label` was first missing from a set after `after_ns` (None: never)."""
        return next((t for t, names in self.sets if t >= after_ns and label not in names), None)

    def checks(self, labels: list[str], kill: dict | None, ttl: float) -> list[tuple[bool, str]]:
        if self.error or not self.sets:
            return [(False, f"service discovery saw nothing ({self.error or 'no set'})")]
        missing = sorted(set(labels) - self.seen())
        out = [(not missing, f"every worker was discovered in '{self.service}' while it ran ({len(labels) - len(missing)} of {len(labels)})"
                + (f"; never seen: {', '.join(missing)}" if missing else ""))]
        if kill is not None:
            gone = self.left_at(kill["label"], kill["t"])
            took = None if gone is None else (gone - kill["t"]) / 1e9
            out.append((took is not None and took <= ttl + 1.0,
                        f"the SIGKILLed {kill['label']} left every discovered set within its TTL + 1 s "
                        f"({'never' if took is None else f'{took:.2f} s'} after the kill)"))
        last = self.sets[-1][1]
        out.append((not last, "no worker was still registered after the run" + (f": {', '.join(last)}" if last else "")))
        return out

    def lines(self) -> list[str]:
        """Who was up when: each change of the discovered set, as a Markdown table."""
        if self.error or not self.sets:
            return [f"not seen: {self.error or 'no set'}"]
        out = ["| t (s) | joined | left | registered then |", "|---|---|---|---|"]
        before: list[str] = []
        for t, names in self.sets:
            joined, left = sorted(set(names) - set(before)), sorted(set(before) - set(names))
            out.append(f"| {(t - self.t0) / 1e9:.2f} | {', '.join(joined) or '—'} | {', '.join(left) or '—'} | "
                       f"{', '.join(names) or '(none)'} |")
            before = names
        return out
