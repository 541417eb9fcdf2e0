"""A recorded history of client operations, one JSON object per line (stdlib only).

Each process (or each worker thread that wants its own op ids) appends to its own file::

    rec = Recorder("/tmp/run/h-py-1.jsonl", "py-1")
    op = rec.invoke("acquire", name="demo/lock")
    rec.ok(op, key="demo/lock/694d8c1f2a3b4c5d", token=17, lease="694d8c1f2a3b4c5d")
    w = rec.invoke("write", data_key="data/x", value="17:py-1:0", token=17)
    rec.unknown(w, "Timeout")            # may or may not have been committed
    rec.event("lost", key="demo/lock/694d...", token=17, reason="lease expired")

Every record is ``{"id", "process", "op", "phase", "t", ...fields}`` where ``phase`` is one of
``invoke``, ``ok``, ``fail``, ``unknown``, ``event`` and ``t`` is ``time.monotonic_ns()``
(CLOCK_MONOTONIC on Linux: one clock for every process on the host, so a Node worker's
``process.hrtime.bigint()`` and a C worker's ``clock_gettime(CLOCK_MONOTONIC)`` write comparable
times). Completions (ok/fail/unknown) repeat the invoke's ``id`` and ``op``; events get their own
id. Ops and their fields:

- ``acquire``: ``name``; on ok ``key``, ``token`` (the key's create revision), ``lease`` (hex);
  fail = the acquisition did not happen (timeout, cancelled, error), unknown = the outcome is not
  known (the library should still have removed its key: property P5 checks that).
- ``write``: ``data_key``, ``value``, ``token``; ok = etcd said written, fail = refused (the lock
  was not held), unknown = timeout/unavailable: it may or may not have been committed.
- ``release``: ``key``, ``token``.
- events: ``lost`` (``key``, ``token``, ``reason``); the nemesis writes ``pause``/``resume``
  (``target`` = the paused process name, ``pid``) and ``kill`` (``target``, ``pid``).

Appends are one ``write()`` of one line on a file opened with O_APPEND and flushed at once, so a
reader never sees half a record from a live writer except possibly the last line, which
``load()`` skips when it does not parse (a writer killed mid-line).
"""
from __future__ import annotations

import itertools
import json
import os
import threading
import time
from typing import Iterable, Optional

PHASES = ("invoke", "ok", "fail", "unknown", "event")


class Recorder:
    """Appends one process's records to ``path`` (created if missing). Thread-safe."""

    def __init__(self, path: str, process: str):
        self.path, self.process = path, process
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._n = itertools.count(1)
        self._ops: dict[str, str] = {}
        self._lock = threading.Lock()

    def _write(self, rec: dict) -> None:
        line = (json.dumps(rec, separators=(",", ":")) + "\n").encode()
        with self._lock:
            os.write(self._fd, line)

    def _new_id(self) -> str:
        with self._lock:
            return f"{self.process}#{next(self._n)}"

    def invoke(self, op: str, **fields) -> str:
        op_id = self._new_id()
        with self._lock:
            self._ops[op_id] = op
        self._write({"id": op_id, "process": self.process, "op": op, "phase": "invoke",
                     "t": time.monotonic_ns(), **fields})
        return op_id

    def _complete(self, op_id: str, phase: str, fields: dict) -> None:
        t = time.monotonic_ns()
        with self._lock:
            op = self._ops.pop(op_id, None)
        if op is None:
            raise ValueError(f"{op_id} was not invoked by this recorder, or already completed")
        self._write({"id": op_id, "process": self.process, "op": op, "phase": phase, "t": t, **fields})

    def ok(self, op_id: str, **fields) -> None:
        self._complete(op_id, "ok", fields)

    def fail(self, op_id: str, error: str, **fields) -> None:
        self._complete(op_id, "fail", {"error": error, **fields})

    def unknown(self, op_id: str, error: str, **fields) -> None:
        self._complete(op_id, "unknown", {"error": error, **fields})

    def event(self, op: str, **fields) -> str:
        op_id = self._new_id()
        self._write({"id": op_id, "process": self.process, "op": op, "phase": "event",
                     "t": time.monotonic_ns(), **fields})
        return op_id

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def load(paths: Iterable[str] | str) -> list[dict]:
    """Every record of the given files, sorted by time (ties keep file order). A last line
    that does not parse (a writer killed mid-write) is skipped; a bad line elsewhere raises."""
    if isinstance(paths, str):
        paths = [paths]
    out: list[dict] = []
    for path in paths:
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
        while lines and not lines[-1].strip():
            lines.pop()
        for i, raw in enumerate(lines):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except ValueError:
                if i == len(lines) - 1:
                    continue
                raise ValueError(f"{path}:{i + 1}: not a JSON record: {raw[:80]!r}")
            if rec.get("phase") not in PHASES or "t" not in rec or "op" not in rec:
                raise ValueError(f"{path}:{i + 1}: not a history record: {raw[:80]!r}")
            rec["t"] = int(rec["t"])
            out.append(rec)
    out.sort(key=lambda r: r["t"])
    return out


def completions(records: list[dict]) -> dict[str, dict]:
    """The completion (ok/fail/unknown) of every op id that has one."""
    return {r["id"]: r for r in records if r["phase"] in ("ok", "fail", "unknown")}


def lease_of_key(key: Optional[str]) -> Optional[str]:
    """The lease hex at the end of a queue key ``<name>/<lease hex>``."""
    if not key or "/" not in key:
        return None
    return key.rsplit("/", 1)[1].lower()
