#!/usr/bin/env python3
"""A lock worker for the history checker's positive controls, on the Python binding.

    broken_worker.py --endpoints E --lock NAME --data-key K --mode MODE --history FILE \\
        --process NAME --until-ns NS [--ttl 2] [--work-ms 400] [--acquire-timeout 1.5] [--index I]

Loops until the CLOCK_MONOTONIC deadline ``--until-ns`` (and at most --max-rounds rounds):
acquire -> write(s) of ``"<token>:<process>:<n>"`` to the data key -> release, recording every
step with history.Recorder. Modes:

- ``correct``: acquire with a timeout, one guarded write (``if_held``), ``release()``; the lost
  signal is recorded.
- ``unfenced``: like correct, but the write is a plain put (no ``if_held``): a holder paused
  past its TTL writes after someone else took the lock (P1).
- ``ignore-lost``: writes (plain puts) four times during its turn and keeps writing after its
  lost signal, which it records and ignores (P1).
- ``release-by-name``: releases by deleting the lowest key under the lock name (what a release
  by name does, like Go etcd issue #22082; the worker follows the queue with a watch and reads it
  after a probe write, so the view is current), and, like Go's Mutex, keeps no lost signal: a
  holder believes it holds until it releases. After its own key expired (a pause), its release
  deletes the current holder's key while that holder still believes it holds (P6, P3).
- ``ghost``: with ``--index 0``, its second acquire puts its queue key on a lease of 30 s that
  nobody keeps alive or revokes, then reports the acquire as failed (a cancelled enqueue that
  left its key): the key becomes a holder nobody owns (P5) and outlives the run (P4). Other
  indexes behave as ``correct``.
- ``barge``: with an even ``--index``, "acquires" by putting its key and claiming the lock at
  once, without waiting for the keys before it (plain writes); odd indexes behave as
  ``correct`` (P2, P3, P1).

``--kind`` picks the primitive (``correct`` and ``barge`` only, for any but ``mutex``):
``semaphore`` (``--permits`` N), ``rwlock`` (even indexes write, odd ones read; a barging
worker claims as a writer) or ``election`` (each round campaigns with the process name as its
proposal; a barging one puts a candidate key and claims leadership at once). recipes_check.py
judges those runs (R1 by the primitive's rule).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import etcdlock  # noqa: E402
from history import Recorder  # noqa: E402

MODES = ("correct", "unfenced", "ignore-lost", "release-by-name", "ghost", "barge")
KINDS = ("mutex", "semaphore", "rwlock", "election")


def etcdctl(endpoints: str, *args: str) -> str:
    import etcd_harness
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ETCD_", "ETCDCTL_"))}
    env["ETCDCTL_API"] = "3"
    res = subprocess.run([etcd_harness.find_etcdctl(), f"--endpoints={endpoints}", *args], capture_output=True,
                         text=True, timeout=10, env=env, stdin=subprocess.DEVNULL)
    if res.returncode != 0:
        raise RuntimeError(f"etcdctl {' '.join(args)}: {res.stderr.strip()}")
    return res.stdout


def err_name(e: BaseException) -> str:
    return type(e).__name__


def refused(e: BaseException) -> bool:
    return isinstance(e, (etcdlock.NotHeld, etcdlock.LockLost))


class Worker:
    def __init__(self, a):
        self.a = a
        self.rec = Recorder(a.history, a.process)
        self.client = etcdlock.Client(a.endpoints)
        self.writer = a.index % 2 == 0
        self.election = self.client.election(a.lock, ttl=a.ttl) if a.kind == "election" else None
        if a.kind == "semaphore":
            self.lock = self.client.semaphore(a.lock, permits=a.permits, ttl=a.ttl)
        elif a.kind == "rwlock":
            rw = self.client.rwlock(a.lock, ttl=a.ttl)
            self.lock = rw.write() if self.writer else rw.read()
        else:
            self.lock = self.client.lock(a.lock, ttl=a.ttl)  # an election's is replaced per campaign
        self.token = None
        self.key = None
        self.writes = 0
        self.rounds = 0
        if a.mode != "release-by-name":
            self.lock.on_lost(self._lost)
        else:
            self._start_queue_view()

    # -- release-by-name's view of the queue (what a "first key of the name" release reads) ----------

    def _start_queue_view(self) -> None:
        """Follows every key under the lock name's parent prefix (the queue keys and this
        worker's probe key) from revision 1 with the binding's watch, in a thread."""
        self.parent = self.a.lock.rsplit("/", 1)[0] + "/"
        self.probe = f"{self.parent}probe-{self.a.process}"
        self.queue: dict[str, int] = {}
        self.seen_rev = 0
        self.qcond = threading.Condition()
        self.qwatch = self.client.watch(self.parent, prefix=True, start_revision=1)
        threading.Thread(target=self._follow, daemon=True).start()

    def _follow(self) -> None:
        prefix = self.a.lock + "/"
        try:
            for ev in self.qwatch:
                key = ev.key.decode()
                with self.qcond:
                    if key.startswith(prefix):
                        if ev.type == "put":
                            self.queue.setdefault(key, ev.revision)
                        else:
                            self.queue.pop(key, None)
                    self.seen_rev = max(self.seen_rev, ev.revision)
                    self.qcond.notify_all()
        except etcdlock.Error:
            pass  # closed at the end

    def _lowest_key(self):
        """The first key of the name, from a view at least as new as a write made now."""
        rev = self.client.put(self.probe, str(self.rounds))
        deadline = time.monotonic() + 2.0
        with self.qcond:
            while self.seen_rev < rev and time.monotonic() < deadline:
                self.qcond.wait(timeout=0.1)
            if self.seen_rev < rev:
                raise RuntimeError("the queue view did not catch up within 2 s")
            return min(self.queue, key=self.queue.get) if self.queue else None

    def _lost(self, reason: str) -> None:
        self.rec.event("lost", key=self.key, token=self.token, reason=reason)

    # -- steps -------------------------------------------------------------------------------

    def acquire(self) -> bool:
        a = self.a
        op = self.rec.invoke("acquire", name=a.lock)
        try:
            if self.election is not None:
                try:
                    self.lock = self.election.campaign(a.process, timeout=a.acquire_timeout)
                    self.lock.on_lost(self._lost)
                    ok = True
                except etcdlock.LockTimeout:
                    ok = False
            else:
                ok = self.lock.acquire(timeout=a.acquire_timeout)
        except etcdlock.Error as e:
            lease = self.lock.lease_id
            (self.rec.fail if isinstance(e, (etcdlock.LockLost, etcdlock.Closed)) else self.rec.unknown)(
                op, err_name(e), **({"lease": format(lease, "x")} if lease else {}))
            return False
        if not ok:
            lease = self.lock.lease_id
            self.rec.fail(op, "LockTimeout", **({"lease": format(lease, "x")} if lease else {}))
            return False
        self.token, self.key = self.lock.fencing_token, self.lock.key.decode()
        self.rec.ok(op, key=self.key, token=self.token, lease=self.key.rsplit("/", 1)[1])
        return True

    def write(self, guarded: bool) -> None:
        value = f"{self.token}:{self.a.process}:{self.writes}"
        self.writes += 1
        op = self.rec.invoke("write", data_key=self.a.data_key, value=value, token=self.token)
        try:
            self.client.put(self.a.data_key, value, if_held=self.lock if guarded else None)
            self.rec.ok(op)
        except etcdlock.Error as e:
            (self.rec.fail if refused(e) else self.rec.unknown)(op, err_name(e))

    def release(self) -> None:
        op = self.rec.invoke("release", key=self.key, token=self.token)
        try:
            if self.a.mode == "release-by-name":
                # "my lock is the first key under the name": true while held, wrong once lost
                first = self._lowest_key()
                if first:
                    self.client.delete(first)
                try:
                    self.lock.release()  # returns the handle to idle (its key is already gone)
                except etcdlock.NotHeld:
                    pass
            else:
                self.lock.release()
            self.rec.ok(op)
        except etcdlock.Error as e:
            (self.rec.fail if refused(e) else self.rec.unknown)(op, err_name(e))

    def sleep_work(self, frac: float = 1.0) -> None:
        time.sleep(self.a.work_ms / 1000 * frac)

    # -- broken acquisitions ---------------------------------------------------------------------

    def ghost(self) -> None:
        op = self.rec.invoke("acquire", name=self.a.lock)
        out = etcdctl(self.a.endpoints, "lease", "grant", "30")  # "lease 694d... granted with TTL(30s)"
        lease = format(int(out.split()[1], 16), "x")
        key = f"{self.a.lock}/{lease}"
        etcdctl(self.a.endpoints, "put", "--lease", out.split()[1], key, "")
        self.rec.fail(op, "Cancelled", key=key, lease=lease)

    def barge(self) -> None:
        op = self.rec.invoke("acquire", name=self.a.lock)
        lease = self.client.lease(ttl=10)
        key = f"{self.a.lock}/{lease.id:x}"
        # What the primitive's own keys carry (sync/mutex/kind.rs): a barging writer, for rwlock.
        value = {"semaphore": f"permits={self.a.permits};", "rwlock": "rw=w;", "election": self.a.process}.get(self.a.kind, "")
        token = self.client.put(key, value, lease=lease)
        self.token, self.key = token, key
        self.rec.ok(op, key=key, token=token, lease=f"{lease.id:x}")
        self.sleep_work()
        self.write(guarded=False)
        r = self.rec.invoke("release", key=key, token=token)
        self.client.delete(key)
        lease.revoke()
        self.rec.ok(r)

    # -- the loop ----------------------------------------------------------------------------------

    def run(self) -> None:
        a = self.a
        self.rec.event("start", pid=os.getpid(), mode=a.mode)
        while time.monotonic_ns() < a.until_ns and self.rounds < a.max_rounds:
            self.rounds += 1
            if a.mode == "ghost" and a.index == 0 and self.rounds == 2:
                self.ghost()
                continue
            if a.mode == "barge" and a.index % 2 == 0:
                self.barge()
                time.sleep(0.05)
                continue
            if not self.acquire():
                time.sleep(0.05)
                continue
            if a.mode == "ignore-lost":
                for _ in range(4):
                    self.sleep_work(0.25)
                    self.write(guarded=False)
            else:
                self.sleep_work()
                self.write(guarded=a.mode not in ("unfenced",))
            self.release()
        self.rec.event("done", rounds=self.rounds)
        self.client.close()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--endpoints", required=True)
    p.add_argument("--lock", required=True, help="lock name (keys are NAME/<lease hex>)")
    p.add_argument("--data-key", required=True)
    p.add_argument("--mode", choices=MODES, required=True)
    p.add_argument("--kind", choices=KINDS, default="mutex")
    p.add_argument("--permits", type=int, default=2)
    p.add_argument("--history", required=True)
    p.add_argument("--process", required=True)
    p.add_argument("--index", type=int, default=0)
    p.add_argument("--until-ns", type=int, required=True, help="CLOCK_MONOTONIC deadline (ns)")
    p.add_argument("--max-rounds", type=int, default=200)
    p.add_argument("--ttl", type=int, default=2)
    p.add_argument("--work-ms", type=int, default=400)
    p.add_argument("--acquire-timeout", type=float, default=1.5)
    a = p.parse_args(argv)
    if a.kind != "mutex" and a.mode not in ("correct", "barge"):
        p.error(f"--kind {a.kind} takes --mode correct or barge")
    Worker(a).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
