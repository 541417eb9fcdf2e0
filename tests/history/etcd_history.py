"""etcd's own history of some prefixes, read with etcdctl (independent of etcdlock).

Every put and delete under the given prefixes since revision 1 comes from
``etcdctl watch --rev=1 --prefix P -w json`` (one etcdctl per prefix). A watch never ends by
itself, so after the run a *sentinel* key is written under each prefix and each watch is read
until its sentinel's put arrives: etcd's watch delivers events in revision order without gaps,
so everything committed before the sentinel has been seen, and the history is provably complete.
Reading is bounded by a timeout that raises ``HistoryError`` (never a silent cut). A history that
was compacted cannot be read from revision 1: the watch is cancelled and that raises too (run
without compaction, or have the writers record the revisions of their puts).

Two ways to use it:

- ``LiveWatcher``: started BEFORE the workload, its watches stamp every event with the
  ``time.monotonic_ns()`` at which it was read (``t_obs``: an upper bound of when the server
  applied it, used by property P6 "held ended no later than the server deleted its key")::

      w = LiveWatcher(endpoints, ["demo/lock/", "demo/data/"]).start()
      ... workload ...
      hist = w.finish(settle_s=3)     # sentinel, complete history, leftovers; stops etcdctl
      save(hist, path)

- ``fetch(endpoints, prefixes)``: the same history after the run, without observation times.
  ``LiveWatcher.finish`` also runs it and raises if the two disagree (an event the live watch
  missed or invented).

The saved file is one JSON object: ``prefixes``, ``events`` (revision order: ``type``
put|delete, ``key``, ``value``, ``create_revision``, ``revision`` (mod revision), ``version``,
``lease`` (hex, puts only), ``t_obs`` (ns or null)), ``sentinels`` (prefix -> its revision;
sentinel events are not in ``events``), ``keys_at_end`` (keys under the prefixes after the
settle), ``leases_at_end`` (``etcdctl lease list``, hex), ``complete`` (true).

CLI: ``python3 tests/history/etcd_history.py --endpoints E --prefix P [--prefix Q] -o FILE``.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from typing import Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/, for etcd_harness

SENTINEL_MARK = "~etcd-history-sentinel-"


class HistoryError(RuntimeError):
    pass


def _etcdctl() -> str:
    try:
        import etcd_harness
        return etcd_harness.find_etcdctl()
    except Exception:  # noqa: BLE001 - fall back to the repo's copy
        return os.environ.get("ETCDCTL_BIN") or os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                             ".tools", "bin", "etcdctl")


def _env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ETCD_", "ETCDCTL_")) and not k.lower().endswith("_proxy")}
    env["ETCDCTL_API"] = "3"
    return env


def _ctl(endpoints: str, flags: Sequence[str], *args: str, timeout: float = 15) -> str:
    cmd = [_etcdctl(), f"--endpoints={endpoints}", *flags, *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env(), stdin=subprocess.DEVNULL)
    if res.returncode != 0:
        raise HistoryError(f"{' '.join(cmd[1:])}: exit {res.returncode}: {res.stderr.strip()[:300]}")
    return res.stdout


def is_sentinel(key: str) -> bool:
    return SENTINEL_MARK in key


def _b64(s: Optional[str]) -> str:
    if not s:
        return ""
    return base64.b64decode(s).decode("utf-8", "replace")


class _PrefixWatch:
    """One ``etcdctl watch --rev=1 --prefix P -w json`` read by a thread."""

    def __init__(self, endpoints: str, prefix: str, flags: Sequence[str]):
        self.prefix = prefix
        self.events: list[dict] = []
        self.sentinels_seen: dict[str, int] = {}  # sentinel key -> revision of its put
        self.sentinel: Optional[str] = None  # the one that ends the history
        self.sentinel_rev: Optional[int] = None
        self.error: Optional[str] = None
        self.cond = threading.Condition()
        cmd = [_etcdctl(), f"--endpoints={endpoints}", *flags, "watch", "--prefix", prefix, "--rev=1", "-w", "json"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                     env=_env())
        self.stderr: list[bytes] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        self.err_thread = threading.Thread(target=self._read_err, daemon=True)
        self.err_thread.start()

    def _read_err(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line)

    def _read(self) -> None:
        dec = json.JSONDecoder()
        buf = ""
        fd = self.proc.stdout.fileno()
        while True:
            chunk = os.read(fd, 1 << 16)
            t = time.monotonic_ns()
            if not chunk:
                break
            buf += chunk.decode("utf-8", "replace")
            i = 0
            while True:
                while i < len(buf) and buf[i] in " \r\n\t":
                    i += 1
                if i >= len(buf):
                    break
                if buf[i] != "{":  # not a response (a warning line): skip it whole
                    nl = buf.find("\n", i)
                    if nl < 0:
                        break
                    i = nl + 1
                    continue
                try:
                    obj, j = dec.raw_decode(buf, i)
                except ValueError:
                    break  # incomplete: wait for more
                i = j
                self._response(obj, t)
            buf = buf[i:]
        with self.cond:
            if self.error is None:
                err = b"".join(self.stderr[-5:]).decode(errors="replace").strip()
                self.error = f"etcdctl watch {self.prefix!r} ended (exit {self.proc.poll()}) before its sentinel: {err}"
            self.cond.notify_all()

    def _response(self, obj: dict, t: int) -> None:
        if obj.get("Canceled") or obj.get("CompactRevision"):
            with self.cond:
                self.error = (f"watch {self.prefix!r} from revision 1 was cancelled "
                              f"(compact revision {obj.get('CompactRevision')}): the history is not complete")
                self.cond.notify_all()
            return
        for e in obj.get("Events") or []:
            kv = e.get("kv", {})
            key = _b64(kv.get("key"))
            typ = "delete" if e.get("type", 0) in (1, "DELETE") else "put"
            ev = {"type": typ, "key": key, "revision": int(kv.get("mod_revision", 0)), "t_obs": t}
            if typ == "put":
                ev.update(value=_b64(kv.get("value")), create_revision=int(kv.get("create_revision", 0)),
                          version=int(kv.get("version", 0)), lease=format(int(kv.get("lease", 0)), "x"))
            with self.cond:
                if is_sentinel(key):  # never part of the history
                    if typ == "put":
                        self.sentinels_seen.setdefault(key, ev["revision"])
                        self.cond.notify_all()
                    continue
                self.events.append(ev)

    def wait_for(self, sentinel: str, deadline: float) -> bool:
        """True once the put of ``sentinel`` was delivered (then ``events`` are complete up to it)."""
        with self.cond:
            while sentinel not in self.sentinels_seen and self.error is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(timeout=min(left, 0.5))
            if sentinel in self.sentinels_seen:
                return True
            raise HistoryError(self.error)

    def history(self) -> list[dict]:
        """The events before the ending sentinel."""
        with self.cond:
            return [e for e in self.events if e["revision"] < self.sentinel_rev]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.thread.join(timeout=5)
        self.err_thread.join(timeout=5)


class LiveWatcher:
    """Watches ``prefixes`` from revision 1 in the background, stamping observation times."""

    def __init__(self, endpoints: str | Sequence[str], prefixes: Sequence[str], flags: Sequence[str] = ()):
        self.endpoints = endpoints if isinstance(endpoints, str) else ",".join(endpoints)
        self.prefixes = list(prefixes)
        self.flags = list(flags)
        self.watches: list[_PrefixWatch] = []
        self.started_ns: Optional[int] = None

    def start(self, ready_timeout: float = 10.0) -> "LiveWatcher":
        """Starts one watch per prefix and returns once each has delivered a probe key written
        now, so that events after this call get honest t_obs."""
        self.watches = [_PrefixWatch(self.endpoints, p, self.flags) for p in self.prefixes]
        probe = uuid.uuid4().hex[:12]
        for w in self.watches:
            _ctl(self.endpoints, self.flags, "put", f"{w.prefix}{SENTINEL_MARK}probe-{probe}", "probe")
        self._wait_sentinels(f"probe-{probe}", ready_timeout, "start")
        for w in self.watches:
            _ctl(self.endpoints, self.flags, "del", f"{w.prefix}{SENTINEL_MARK}probe-{probe}")
        self.started_ns = time.monotonic_ns()
        return self

    def _wait_sentinels(self, nonce: str, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        for w in self.watches:
            key = f"{w.prefix}{SENTINEL_MARK}{nonce}"
            try:
                seen = w.wait_for(key, deadline)
            except HistoryError:
                self.stop()
                raise
            if not seen:
                self.stop()
                raise HistoryError(f"{what}: the watch on {w.prefix!r} did not deliver the sentinel {key!r} "
                                   f"within {timeout:.0f} s: the history would be incomplete")
            w.sentinel, w.sentinel_rev = key, w.sentinels_seen[key]

    def finish(self, settle_s: float = 0.0, timeout: float = 30.0, cross_check: bool = True) -> dict:
        """Waits up to ``settle_s`` for the prefixes to hold no key and etcd no lease (a killed
        client's lease needs its TTL), records what is left, writes the sentinels, reads each
        watch up to its sentinel (bounded by ``timeout``: HistoryError), stops the watches, and
        returns the history. With ``cross_check`` a post-run ``fetch`` must agree event by event."""
        keys, leases = leftovers(self.endpoints, self.prefixes, settle_s, self.flags)
        nonce = uuid.uuid4().hex[:12]
        for w in self.watches:
            _ctl(self.endpoints, self.flags, "put", f"{w.prefix}{SENTINEL_MARK}{nonce}", "end")
        try:
            self._wait_sentinels(nonce, timeout, "finish")
        finally:
            self.stop()
        hist = _assemble(self.prefixes, self.watches, keys, leases, live=True)
        if cross_check:
            post = fetch(self.endpoints, self.prefixes, timeout=timeout, flags=self.flags, settle_s=0,
                         cleanup=False, _sentinel_nonce=nonce)
            a = [(e["type"], e["key"], e["revision"]) for e in hist["events"]]
            b = [(e["type"], e["key"], e["revision"]) for e in post["events"]]
            if a != b:
                diff = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                raise HistoryError(f"the live watch and the post-run fetch disagree at event {diff} "
                                   f"({a[diff:diff + 1]} vs {b[diff:diff + 1]}; {len(a)} vs {len(b)} events)")
        for w in self.watches:
            _ctl(self.endpoints, self.flags, "del", w.sentinel)
        return hist

    def stop(self) -> None:
        for w in self.watches:
            w.stop()


def _assemble(prefixes, watches, keys, leases, live: bool) -> dict:
    events = sorted((e for w in watches for e in w.history()), key=lambda e: e["revision"])
    if not live:
        for e in events:
            e["t_obs"] = None
    return {"prefixes": list(prefixes), "events": events,
            "sentinels": {w.prefix: w.sentinel_rev for w in watches},
            "keys_at_end": keys, "leases_at_end": leases, "complete": True, "live": live}


def leftovers(endpoints: str, prefixes: Sequence[str], settle_s: float, flags: Sequence[str] = ()):
    """(keys under the prefixes, lease ids in hex), polled until both are empty or ``settle_s``."""
    deadline = time.monotonic() + settle_s
    while True:
        keys = []
        for p in prefixes:
            out = _ctl(endpoints, flags, "get", "--prefix", p, "--keys-only")
            keys += [k for k in out.split() if not is_sentinel(k)]
        out = _ctl(endpoints, flags, "lease", "list")
        leases = [line.split()[-1].lower() for line in out.splitlines()
                  if line.strip() and not line.startswith("found")]
        if (not keys and not leases) or time.monotonic() >= deadline:
            return keys, leases
        time.sleep(0.2)


def fetch(endpoints: str | Sequence[str], prefixes: Sequence[str], timeout: float = 30.0, flags: Sequence[str] = (),
          settle_s: float = 0.0, cleanup: bool = True, _sentinel_nonce: Optional[str] = None) -> dict:
    """The complete history of ``prefixes`` after the run (no observation times)."""
    endpoints = endpoints if isinstance(endpoints, str) else ",".join(endpoints)
    keys, leases = leftovers(endpoints, prefixes, settle_s, flags)
    nonce = _sentinel_nonce or uuid.uuid4().hex[:12]
    watches = [_PrefixWatch(endpoints, p, flags) for p in prefixes]
    try:
        if not _sentinel_nonce:
            for w in watches:
                _ctl(endpoints, flags, "put", f"{w.prefix}{SENTINEL_MARK}{nonce}", "end")
        deadline = time.monotonic() + timeout
        for w in watches:
            key = f"{w.prefix}{SENTINEL_MARK}{nonce}"
            if not w.wait_for(key, deadline):
                raise HistoryError(f"the watch on {w.prefix!r} did not deliver its sentinel {key!r} "
                                   f"within {timeout:.0f} s: the history would be incomplete")
            w.sentinel, w.sentinel_rev = key, w.sentinels_seen[key]
    finally:
        for w in watches:
            w.stop()
    if cleanup and not _sentinel_nonce:
        for w in watches:
            _ctl(endpoints, flags, "del", w.sentinel)
    return _assemble(prefixes, watches, keys, leases, live=False)


def save(hist: dict, path: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(hist, f)
    os.replace(tmp, path)


def load(path: str) -> dict:
    with open(path) as f:
        hist = json.load(f)
    if not hist.get("complete"):
        raise HistoryError(f"{path}: not a complete etcd history")
    return hist


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Fetch etcd's complete history of some prefixes (post-run).")
    p.add_argument("--endpoints", required=True)
    p.add_argument("--prefix", action="append", required=True)
    p.add_argument("--settle", type=float, default=0.0, help="seconds to wait for no keys and no leases first")
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("-o", "--output", required=True)
    a = p.parse_args(argv)
    hist = fetch(a.endpoints, a.prefix, timeout=a.timeout, settle_s=a.settle)
    save(hist, a.output)
    print(f"{len(hist['events'])} events, {len(hist['keys_at_end'])} keys and "
          f"{len(hist['leases_at_end'])} leases left -> {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
