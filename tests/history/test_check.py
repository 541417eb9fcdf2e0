#!/usr/bin/env python3
"""check.py on small hand-made histories (no etcd, under a second): a clean history passes
every property, and each broken one is reported on exactly the property it breaks. Runs as a
script (exit 1 on a failure) or under pytest. The end-to-end evidence is controls.py; this pins
each rule down on a history whose answer is known.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check  # noqa: E402

MS = 1_000_000
L, D = "L/", "D/x"


class H:
    """A tiny scenario builder: etcd events (revision order, t_obs in ms) and client records."""

    def __init__(self):
        self.events, self.records, self.rev, self.n = [], [], 1, 0
        self.keys, self.leases = [], []

    def put(self, key, t, value="", lease="0"):
        self.rev += 1
        cr = next((e["create_revision"] for e in reversed(self.events)
                   if e["key"] == key and e["type"] == "put"), None)
        alive = cr is not None and not any(e["key"] == key and e["type"] == "delete" and e["revision"] > cr
                                           for e in self.events)
        self.events.append({"type": "put", "key": key, "value": value, "revision": self.rev,
                            "create_revision": cr if alive else self.rev, "version": 1, "lease": lease,
                            "t_obs": t * MS})
        return self.rev

    def delete(self, key, t):
        self.rev += 1
        self.events.append({"type": "delete", "key": key, "revision": self.rev, "t_obs": t * MS})

    def op(self, proc, op, t_inv, phase, t_end, inv=None, end=None):
        self.n += 1
        i = f"{proc}#{self.n}"
        self.records.append({"id": i, "process": proc, "op": op, "phase": "invoke", "t": t_inv * MS, **(inv or {})})
        if phase:
            self.records.append({"id": i, "process": proc, "op": op, "phase": phase, "t": t_end * MS, **(end or {})})

    def ev(self, proc, op, t, **f):
        self.n += 1
        self.records.append({"id": f"{proc}#{self.n}", "process": proc, "op": op, "phase": "event", "t": t * MS, **f})

    def acquire(self, proc, t_inv, t_ok, key, token):
        self.op(proc, "acquire", t_inv, "ok", t_ok, {"name": "L/a"}, {"key": key, "token": token,
                                                                        "lease": key.rsplit("/", 1)[1]})

    def write(self, proc, t, token, value, phase="ok"):
        self.op(proc, "write", t, phase, t + 1, {"data_key": D, "value": value, "token": token},
                {"error": "NotHeld"} if phase == "fail" else {})

    def release(self, proc, t, key, token):
        self.op(proc, "release", t, "ok", t + 2, {"key": key, "token": token})

    def violated(self):
        hist = {"events": self.events, "keys_at_end": self.keys, "leases_at_end": self.leases, "complete": True}
        return {r.prop for r in check.check(sorted(self.records, key=lambda r: r["t"]), hist, L, D) if not r.ok}


def clean() -> H:
    """p holds L/a/1 (token 2) then q holds L/a/2 (token 3), each writing once while it holds."""
    h = H()
    h.put("L/a/1", 100)                        # rev 2: p's key, head
    h.acquire("p", 99, 101, "L/a/1", 2)
    h.put("L/a/2", 110)                        # rev 3: q's key, waits
    h.put(D, 150, "2:p")                       # rev 4: p's write
    h.write("p", 149, 2, "2:p")
    h.release("p", 200, "L/a/1", 2)
    h.delete("L/a/1", 203)                     # rev 5: q becomes head
    h.acquire("q", 109, 205, "L/a/2", 3)
    h.put(D, 250, "3:q")                       # rev 6
    h.write("q", 249, 3, "3:q")
    h.release("q", 300, "L/a/2", 3)
    h.delete("L/a/2", 303)                     # rev 7
    return h


def test_clean_history_passes():
    assert clean().violated() == set()


def test_p1_write_by_a_waiter():
    h = clean()
    h.put(D, 160, "3:q-early")                 # q writes while p still holds
    h.events.sort(key=lambda e: e["t_obs"])
    for r, e in enumerate(h.events, start=2):
        e["revision"] = r
        if e["type"] == "put" and e["key"].startswith(L):
            e["create_revision"] = {"L/a/1": 2, "L/a/2": 3}[e["key"]]
    h.write("q", 159, 3, "3:q-early", phase="unknown")
    assert h.violated() == {"P1"}


def test_p1_unrecorded_put_and_lost_ack():
    h = clean()
    h.put(D, 260, "nobody")
    assert h.violated() == {"P1"}
    h = clean()
    h.write("q", 260, 3, "never-committed")    # told ok, not in etcd's history
    assert h.violated() == {"P1"}


def test_p1_refused_write_committed():
    h = clean()
    h.put(D, 260, "3:q-refused")
    h.write("q", 259, 3, "3:q-refused", phase="fail")
    assert h.violated() == {"P1"}


def test_p2_and_p3_tokens_out_of_order():
    h = clean()
    for r in h.records:                        # q claims token 3 before p claims token 2
        if r["process"] == "q" and r["op"] == "acquire":
            r["t"] = (50 if r["phase"] == "ok" else 40) * MS
    assert {"P2", "P3"} <= h.violated()


def test_p3_overlap():
    h = clean()
    for r in h.records:                        # q believes it holds from 120 ms, while p does until 200
        if r["process"] == "q" and r["op"] == "acquire" and r["phase"] == "ok":
            r["t"] = 120 * MS
    assert h.violated() == {"P3"}


def test_p4_key_and_lease_left():
    h = clean()
    h.keys, h.leases = ["L/a/9"], ["694d"]
    assert h.violated() == {"P4"}


def test_p5_failed_acquire_left_its_key():
    h = clean()
    h.put("L/a/7", 320)                        # r's key, becomes head at once (the queue is empty)
    h.op("r", "acquire", 319, "fail", 400, {"name": "L/a"}, {"error": "LockTimeout", "lease": "7"})
    h.delete("L/a/7", 3000)                    # 2.6 s after the failure
    assert h.violated() == {"P5"}
    h = clean()
    h.put("L/a/7", 320)
    h.op("r", "acquire", 319, "fail", 400, {"name": "L/a"}, {"error": "LockTimeout", "lease": "7"})
    h.delete("L/a/7", 402)                     # cleaned up: fine
    assert h.violated() == set()


def test_p6_held_after_delete():
    h = clean()
    for r in h.records:                        # q believes it holds 100 ms past its key's deletion
        if r["process"] == "q" and r["op"] == "release":
            r["t"] = 403 * MS if r["phase"] == "invoke" else 405 * MS
    assert h.violated() == {"P6"}
    h.ev("nemesis", "pause", 280, target="q")  # ...unless it was paused before that
    assert h.violated() == set()


def test_no_observation_times_is_a_violation_not_a_pass():
    h = clean()
    for e in h.events:
        e["t_obs"] = None
    assert h.violated() == {"P5", "P6"}


def main() -> int:
    tests = [(k, v) for k, v in globals().items() if k.startswith("test_") and callable(v)]
    failed = 0
    for name, fn in tests:
        try:
            fn()
            print(f"ok    {name}")
        except Exception as e:  # noqa: BLE001
            failed += 1
            print(f"FAIL  {name}: {e!r}")
    print(f"{len(tests) - failed}/{len(tests)} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
