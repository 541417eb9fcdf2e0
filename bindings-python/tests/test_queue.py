"""A lock's queue holds only waiters: keys under ``<name>/`` that no waiter wrote never block
``<name>``, and fenced writes cannot put keys there."""

import json
import threading

import pytest

import etcdlock


# covers: LOCK-PREFIX-001
def test_fenced_write_under_the_locks_prefix_is_refused(client, etcd, prefix):
    name = f"{prefix}/orders"
    with client.lock(name, ttl=10, timeout=5.0) as lock:
        for key in (f"{name}/last", f"{name}/a/b"):
            with pytest.raises(ValueError):
                client.put(key, "42", if_held=lock)
        assert etcd.keys(f"{name}/") == [lock.key]  # nothing written
        client.put(f"{name}-state", "42", if_held=lock)  # only starts with the name: fine
    lock2 = client.lock(name, ttl=10)
    assert lock2.acquire(blocking=False) is True  # the next acquire is immediate
    lock2.release()


# covers: LOCK-FOREIGN-001
def test_keys_that_are_no_waiters_never_make_the_lock_busy(client, etcd, prefix):
    name = f"{prefix}/jobs"
    lease = int(json.loads(etcd.ctl("lease", "grant", "60", "-w", "json"))["ID"])
    etcd.ctl("put", f"{name}/last", "no lease")
    etcd.ctl("put", f"{name}/config", "a user's key on a lease", f"--lease={lease:x}")
    etcd.ctl("put", f"{name}/{lease + 1:x}", "named like another lease's waiter", f"--lease={lease:x}")
    etcd.ctl("put", f"{name}/{lease:x}", "named like a waiter, no lease")
    foreign = etcd.keys(f"{name}/")

    a, b = client.lock(name, ttl=10), client.lock(name, ttl=10)
    assert a.acquire(blocking=False) is True
    assert b.acquire(blocking=False) is False  # exclusion still holds
    assert b.acquire(timeout=0.3) is False
    etcd.ctl("put", f"{name}/between", "")
    got = []
    t = threading.Thread(target=lambda: got.append(b.acquire(timeout=10.0)))
    t.start()
    etcd.wait_until(lambda: len(etcd.keys(f"{name}/")) == len(foreign) + 3, what="b queued")
    a.release()
    t.join(15.0)
    assert got == [True]
    b.release()
    with client.lock(name, ttl=10, timeout=2.0):
        pass
    assert etcd.keys(f"{name}/") == sorted(foreign + [f"{name}/between".encode()])
    etcd.ctl("del", "--prefix", f"{name}/")
    etcd.ctl("lease", "revoke", f"{lease:x}")


# covers: LOCK-NESTED-001
def test_a_lock_and_a_lock_named_under_it_are_independent(etcd, prefix):
    name = f"{prefix}/jobs"
    with etcdlock.Client(etcd.endpoints) as c1, etcdlock.Client(etcd.endpoints) as c2:
        inner = c1.lock(f"{name}/a", ttl=10)
        assert inner.acquire(timeout=5.0)
        outer = c2.lock(name, ttl=10)
        assert outer.acquire(blocking=False) is True  # N is free while N/a is held
        assert c1.lock(name, ttl=10).acquire(blocking=False) is False
        assert c2.lock(f"{name}/a", ttl=10).acquire(blocking=False) is False
        assert inner.is_held() and outer.is_held()
        inner.release()
        outer.release()
    assert etcd.keys(f"{name}/") == []
