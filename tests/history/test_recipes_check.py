#!/usr/bin/env python3
"""recipes_check.py's R1 on small hand-made histories (no etcd, under a second): for each
primitive, a write by a key that holds by its rule passes, and one by a key that does not is
reported. Runs as a script (exit 1 on a failure) or under pytest; controls.py --kind is the
end-to-end evidence."""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import recipes_check  # noqa: E402
from test_check import D, H  # noqa: E402


def queue(values: list[str]) -> H:
    """Keys L/a/1.. (tokens 2..) put in order with these values, each acquired by process p<i>."""
    h = H()
    for i, v in enumerate(values, start=1):
        token = h.put(f"L/a/{i}", 100 + i, v)
        h.acquire(f"p{i}", 99 + i, 100 + i, f"L/a/{i}", token)
    return h


def write_by(h: H, i: int) -> None:
    """Process p<i> writes once (its token is i + 1) and the write lands."""
    value = f"{i + 1}:p{i}"
    h.put(D, 200 + i, value)
    h.write(f"p{i}", 199 + i, i + 1, value)


def bad(h: H, kind: str, permits: int = 1) -> bool:
    hist = {"events": h.events, "keys_at_end": [], "leases_at_end": [], "complete": True}
    ops, _ = recipes_check.check.client_ops(sorted(h.records, key=lambda r: r["t"]))
    return not recipes_check.r1(ops, hist["events"], "L/", D, recipes_check.rule(kind, permits)).ok


def test_semaphore_allows_n_and_no_more():
    h = queue(["permits=2;"] * 3)
    write_by(h, 2)
    assert not bad(h, "semaphore", 2), "the second key holds one of 2 permits"
    write_by(h, 3)
    assert bad(h, "semaphore", 2), "the third key holds none of 2"
    assert not bad(h, "semaphore", 3)


def test_semaphore_holder_after_an_older_key_left():
    h = queue(["permits=2;"] * 3)
    h.delete("L/a/1", 150)
    write_by(h, 3)
    assert not bad(h, "semaphore", 2)


def test_rwlock_readers_together_never_beside_a_writer():
    h = queue(["rw=r;", "rw=r;", "rw=w;", "rw=r;"])
    write_by(h, 2)
    assert not bad(h, "rwlock"), "two readers hold together"
    h2 = queue(["rw=r;", "rw=r;", "rw=w;", "rw=r;"])
    write_by(h2, 4)
    assert bad(h2, "rwlock"), "a reader behind a waiting writer does not hold"
    h3 = queue(["rw=r;", "rw=w;"])
    write_by(h3, 2)
    assert bad(h3, "rwlock"), "a writer behind a reader does not hold"
    h4 = queue(["", "rw=r;"])
    write_by(h4, 2)
    assert bad(h4, "rwlock"), "a plain lock's key counts as a writer's"


def test_election_one_leader_per_term():
    h = queue(["a", "b"])
    write_by(h, 1)
    assert not bad(h, "election")
    write_by(h, 2)
    assert bad(h, "election"), "the second candidate does not lead while the first does"
    h2 = queue(["a", "b"])
    h2.delete("L/a/1", 150)
    write_by(h2, 2)
    assert not bad(h2, "election"), "the next term's leader"


def test_a_write_with_no_live_key_is_reported():
    h = queue(["permits=2;"])
    h.delete("L/a/1", 150)
    write_by(h, 1)
    assert bad(h, "semaphore", 2)


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
