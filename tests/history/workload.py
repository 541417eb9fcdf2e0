#!/usr/bin/env python3
"""A lock workload for the history checker: one worker process, through the Python binding.

Each round: acquire the lock -> (hold --hold-ms) -> read the counter -> write counter + 1,
fenced by the lock (``put(if_held=lock)``) -> release. Every step is recorded with
``tests/history/history.py``'s ``Recorder`` (ops ``acquire``, ``write``, ``release``; event
``lost``), so that ``tests/history/check.py`` can judge the run against etcd's own history.

The counter's value encodes its writer: ``TOKEN:PROCESS:N`` (N counts the writes), so every
committed value is unique and names the fencing token it was written under.

Outcomes: an acquire that returns False (its own timeout) fails; one that raises
``Timeout``/``Unavailable`` is unknown, other errors fail. A write refused with ``NotHeld`` fails
(nothing was written); a request error is unknown (it may have been applied). A release that
raises ``NotHeld`` fails.

Bounds: ``--count`` rounds per worker and ``--duration`` seconds (whichever ends first; both
default to a bound, never unbounded), every call with a timeout.

Modes:
- default: one blocking ``Client``, one process = one history ``process``;
- ``--herd N``: an ``AsyncClient`` with N asyncio tasks, each its own history process
  (``LABEL/i``, one history file each: ``HISTORY`` with ``.i`` before ``.jsonl``), each doing
  ``--count`` rounds (1 by default in herd mode); all tasks start acquiring together;
- ``--unfenced``: BROKEN on purpose (a positive control): the write is a plain put, not fenced
  by the lock, so a holder that lost its lock still writes. The checker must report it.
- ``--stale-writes``: BROKEN on purpose: after each release the worker writes once more, unfenced,
  under the token it just gave up (a client that goes on after its lock ended). Under
  contention another worker holds the lock by then: the checker must report it.

Prints one JSON summary line on stdout at the end: ``{"process", "acquired", "wrote",
"refused", "unknown", "errors"}``.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import etcdlock  # noqa: E402

from history import Recorder  # noqa: E402  (tests/history/history.py)


UNKNOWN_ERRORS = (etcdlock.Timeout, etcdlock.Unavailable)


def encode(n: int, token: int, process: str) -> str:
    """``TOKEN:PROCESS:N``: unique per committed write, and names the token it was written under."""
    return f"{token}:{process}:{n}"


def decode_n(value) -> int:
    """The counter's N (the last field); 0 when absent. A plain integer (the demo workers'
    format) is read too."""
    if value is None:
        return 0
    text = value.decode() if isinstance(value, bytes) else value
    return int(text.rsplit(":", 1)[-1])


def err(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


class Stats:
    def __init__(self, process: str) -> None:
        self.process = process
        self.acquired = self.wrote = self.refused = self.unknown = self.errors = 0

    def merge(self, other: "Stats") -> None:
        for k in ("acquired", "wrote", "refused", "unknown", "errors"):
            setattr(self, k, getattr(self, k) + getattr(other, k))

    def line(self) -> str:
        return json.dumps({k: getattr(self, k) for k in ("process", "acquired", "wrote", "refused", "unknown", "errors")})


# ------------------------------------------------------------------ blocking ---


def record_acquire_error(a, rec, st: Stats, op: str, e: BaseException) -> None:
    """An acquire that raised: its outcome is unknown after a timeout or an unreachable
    cluster (the enqueue may have landed), else it failed."""
    if isinstance(e, UNKNOWN_ERRORS):
        rec.unknown(op, err(e), name=a.name)
        st.unknown += 1
    else:
        rec.fail(op, err(e), name=a.name)
        st.errors += 1


def record_acquire(a, rec, st: Stats, op: str, lock, got: bool):
    """An acquire that returned (False: it timed out). When held, returns (key, token) and
    records the lock's loss from then on."""
    if not got:
        rec.fail(op, "timeout", name=a.name)
        st.errors += 1
        return None
    key, token, lease = lock.key.decode(), lock.fencing_token, lock.lease_id
    rec.ok(op, name=a.name, key=key, token=token, lease=f"{lease:x}")
    st.acquired += 1
    lock.on_lost(lambda reason, key=key, token=token: rec.event("lost", key=key, token=token, reason=reason))
    return key, token


def run_sync(a: argparse.Namespace) -> Stats:
    rec = Recorder(a.history, a.process)
    st = Stats(a.process)
    deadline = time.monotonic() + a.duration
    with etcdlock.Client(a.endpoints, timeout=a.timeout) as client:
        for _ in range(a.count):
            if time.monotonic() >= deadline:
                break
            lock = client.lock(a.name, ttl=a.ttl)
            op = rec.invoke("acquire", name=a.name)
            try:
                got = lock.acquire(timeout=min(a.acquire_timeout, max(0.0, deadline - time.monotonic()) + 1))
            except etcdlock.Error as e:
                record_acquire_error(a, rec, st, op, e)
                time.sleep(0.1)
                continue
            held = record_acquire(a, rec, st, op, lock, got)
            if held is None:
                continue
            key, token = held
            if a.hold_ms:
                time.sleep(a.hold_ms / 1000)
            write_sync(a, rec, st, client, lock, token)
            op = rec.invoke("release", key=key, token=token)
            try:
                lock.release()
                rec.ok(op, key=key, token=token)
            except etcdlock.NotHeld as e:
                rec.fail(op, err(e), key=key, token=token)
            except etcdlock.Error as e:
                rec.unknown(op, err(e), key=key, token=token)
            if a.stale_writes:
                stale_write_sync(a, rec, st, client, token)
            if a.pause_ms:
                time.sleep(a.pause_ms / 1000)
    return st


def stale_write_sync(a, rec, st: Stats, client, token: int) -> None:
    """BROKEN on purpose (--stale-writes): an unfenced write under a token given up."""
    try:
        value = encode(decode_n(client.get(a.data_key)) + 1, token, a.process)
        op = rec.invoke("write", data_key=a.data_key, value=value, token=token)
        client.put(a.data_key, value)
        rec.ok(op, data_key=a.data_key, value=value, token=token)
    except etcdlock.Error as e:
        rec.event("read_failed", data_key=a.data_key, token=token, error=err(e))


def write_sync(a, rec, st: Stats, client, lock, token: int) -> None:
    try:
        n = decode_n(client.get(a.data_key)) + 1
    except etcdlock.Error as e:
        rec.event("read_failed", data_key=a.data_key, token=token, error=err(e))
        st.errors += 1
        return
    value = encode(n, token, a.process)
    op = rec.invoke("write", data_key=a.data_key, value=value, token=token)
    try:
        if a.unfenced:
            client.put(a.data_key, value)
        else:
            client.put(a.data_key, value, if_held=lock)
    except etcdlock.Error as e:
        record_write(a, rec, st, op, value, token, e)
    else:
        record_write(a, rec, st, op, value, token)


def record_write(a, rec, st: Stats, op, value: str, token: int, e: "etcdlock.Error | None" = None) -> None:
    """A write's outcome: done, refused (the fence said we no longer hold), or unknown."""
    where = dict(data_key=a.data_key, value=value, token=token)
    if e is None:
        rec.ok(op, **where)
        st.wrote += 1
    elif isinstance(e, etcdlock.NotHeld):
        rec.fail(op, err(e), **where)
        st.refused += 1
    else:
        rec.unknown(op, err(e), **where)
        st.unknown += 1


# ------------------------------------------------------------------- asyncio ---


def task_history_path(path: str, i: int) -> str:
    root, ext = os.path.splitext(path)
    return f"{root}.{i}{ext or '.jsonl'}"


async def run_herd(a: argparse.Namespace) -> Stats:
    total = Stats(a.process)
    deadline = time.monotonic() + a.duration
    async with etcdlock.AsyncClient(a.endpoints, timeout=a.timeout) as client:
        await client.connect()
        start = asyncio.Event()

        async def one(i: int) -> Stats:
            process = f"{a.process}/{i}"
            rec = Recorder(task_history_path(a.history, i), process)
            st = Stats(process)
            await start.wait()
            for _ in range(a.count):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                lock = client.lock(a.name, ttl=a.ttl)
                op = rec.invoke("acquire", name=a.name)
                try:
                    got = await lock.acquire(timeout=min(a.acquire_timeout, left + 1))
                except etcdlock.Error as e:
                    record_acquire_error(a, rec, st, op, e)
                    await asyncio.sleep(0.1)
                    continue
                held = record_acquire(a, rec, st, op, lock, got)
                if held is None:
                    continue
                key, token = held
                if a.hold_ms:
                    await asyncio.sleep(a.hold_ms / 1000)
                try:
                    n = decode_n(await client.get(a.data_key)) + 1
                except etcdlock.Error as e:
                    rec.event("read_failed", data_key=a.data_key, token=token, error=err(e))
                    st.errors += 1
                    n = None
                if n is not None:
                    value = encode(n, token, process)
                    op = rec.invoke("write", data_key=a.data_key, value=value, token=token)
                    try:
                        if a.unfenced:
                            await client.put(a.data_key, value)
                        else:
                            await client.put(a.data_key, value, if_held=lock)
                    except etcdlock.Error as e:
                        record_write(a, rec, st, op, value, token, e)
                    else:
                        record_write(a, rec, st, op, value, token)
                op = rec.invoke("release", key=key, token=token)
                try:
                    await lock.release()
                    rec.ok(op, key=key, token=token)
                except etcdlock.NotHeld as e:
                    rec.fail(op, err(e), key=key, token=token)
                except etcdlock.Error as e:
                    rec.unknown(op, err(e), key=key, token=token)
                if a.stale_writes:  # BROKEN on purpose: see --stale-writes
                    value = encode(decode_n(await client.get(a.data_key)) + 1, token, process)
                    op = rec.invoke("write", data_key=a.data_key, value=value, token=token)
                    await client.put(a.data_key, value)
                    rec.ok(op, data_key=a.data_key, value=value, token=token)
                if a.pause_ms:
                    await asyncio.sleep(a.pause_ms / 1000)
            return st

        tasks = [asyncio.ensure_future(one(i)) for i in range(a.herd)]
        await asyncio.sleep(0)
        start.set()
        for st in await asyncio.wait_for(asyncio.gather(*tasks), a.duration + a.acquire_timeout + 30):
            total.merge(st)
    return total


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--endpoints", default=os.environ.get("ETCDLOCK_ENDPOINTS", "http://127.0.0.1:2379"))
    p.add_argument("--history", required=True, help="the history file (JSON lines) to append to")
    p.add_argument("--process", default=f"py-{os.getpid()}", help="this worker's name in the history")
    p.add_argument("--name", default="history/lock", help="the lock's name")
    p.add_argument("--data-key", default="history/data/counter", help="the fenced counter's key")
    p.add_argument("--ttl", type=int, default=2)
    p.add_argument("--count", type=int, default=None, help="rounds per worker (default 1000; herd: 1)")
    p.add_argument("--duration", type=float, default=60.0, help="seconds, at most")
    p.add_argument("--hold-ms", type=int, default=0, help="sleep while holding, before the read")
    p.add_argument("--pause-ms", type=int, default=0, help="sleep after each release")
    p.add_argument("--timeout", type=float, default=5.0, help="the client's request timeout (s)")
    p.add_argument("--acquire-timeout", type=float, default=30.0, help="each acquire's own timeout (s)")
    p.add_argument("--herd", type=int, default=0, help="asyncio mode with N waiting tasks")
    p.add_argument("--unfenced", action="store_true", help="BROKEN: unfenced writes (a positive control)")
    p.add_argument("--stale-writes", action="store_true",
                   help="BROKEN: one more unfenced write after each release (a positive control)")
    a = p.parse_args(argv)
    if a.count is None:
        a.count = 1 if a.herd else 1000
    if a.count < 1 or a.duration <= 0:
        p.error("--count and --duration must be positive")
    return a


def main(argv=None) -> int:
    a = parse(argv)
    st = asyncio.run(run_herd(a)) if a.herd else run_sync(a)
    print(st.line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
