#!/usr/bin/env python3
"""A prefix cache's follower for the cache checker's controls (Python binding).

    cache_worker.py --endpoints E --prefix P --history FILE --process NAME --mode MODE --until T

Records every event of the copy (``ev``: type, key, value, prev_value, revision; ``resynced``
markers too) and, every 0.3 s and at the end, the copy (``snap``: entries and the revision it
says it is at), from the first snapshot until the wall-clock time ``--until``. Modes:

- ``correct``: ``client.cache(P)``.
- ``from-now``: a hand-made copy: loaded from a cache's snapshot once, then kept by a plain watch
  that it drops and opens again from "now" every second (what a client that restarts its watch
  after an error without a start revision does): the changes in between are lost (CA1, CA2).
- ``torn-snapshot``: the cache's entries, but the revision taken from a separate read of etcd
  afterwards (the copy and its revision not read together): a snapshot claims a revision its
  entries have not reached (CA2).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import etcdlock  # noqa: E402
from history import Recorder  # noqa: E402

MODES = ("correct", "from-now", "torn-snapshot")


def s(b) -> str | None:
    return None if b is None else b.decode("latin-1")


def record_event(rec: Recorder, type_: str, key, value, prev, revision: int) -> None:
    rec.event("ev", type=type_, key=s(key), value=s(value), prev_value=s(prev), revision=revision)


class HandMade:
    """The ``from-now`` copy: a dict and a plain watch, opened again from now every second."""

    def __init__(self, client, prefix: str, rec: Recorder, until: float):
        self.client, self.prefix, self.rec, self.until = client, prefix, rec, until
        self.lock = threading.Lock()
        with client.cache(prefix) as c:
            snap = c.snapshot()
        self.entries, self.revision = dict(snap.entries), snap.revision
        threading.Thread(target=self._follow, daemon=True).start()

    def _follow(self) -> None:
        while time.time() < self.until:
            w = self.client.watch(self.prefix, prefix=True)
            threading.Timer(1.0, w.close).start()
            for ev in w:
                with self.lock:
                    prev = self.entries.get(ev.key)
                    if ev.type == "put":
                        self.entries[ev.key] = ev.value
                    else:
                        self.entries.pop(ev.key, None)
                    self.revision = max(self.revision, ev.revision)
                record_event(self.rec, ev.type, ev.key, ev.value if ev.type == "put" else b"", prev, ev.revision)
            time.sleep(0.05)  # a reconnect's pause

    def snapshot(self):
        with self.lock:
            return dict(self.entries), self.revision


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    for flag in ("--endpoints", "--prefix", "--history", "--process"):
        p.add_argument(flag, required=True)
    p.add_argument("--mode", choices=MODES, default="correct")
    p.add_argument("--until", type=float, required=True, help="wall-clock time (time.time()) to stop")
    a = p.parse_args(argv)
    rec = Recorder(a.history, a.process)
    rec.event("start", pid=os.getpid())
    client = etcdlock.Client(a.endpoints)
    if a.mode == "from-now":
        copy = HandMade(client, a.prefix, rec, a.until)
        snapshot = copy.snapshot
    else:
        cache = client.cache(a.prefix)
        events = cache.events()

        def follow() -> None:
            for ev in events:
                record_event(rec, ev.type, ev.key, ev.value, ev.prev_value, ev.revision)
        threading.Thread(target=follow, daemon=True).start()

        def snapshot():
            snap = cache.snapshot()
            if a.mode == "torn-snapshot":
                time.sleep(0.02)  # the revision read a moment later, as a separate call would
                return dict(snap.entries), client.put(f"{a.prefix}.torn", a.process) - 1
            return dict(snap.entries), snap.revision
    while True:
        entries, revision = snapshot()
        rec.event("snap", revision=revision, entries={s(k): s(v) for k, v in entries.items()})
        if time.time() >= a.until:
            break
        time.sleep(0.3)
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
