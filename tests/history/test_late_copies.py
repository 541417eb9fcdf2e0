"""Late copies of a request, made by a slow raft link on 3 members (tests/history/peernet.py:
``delay(a, b, s)`` makes what member a sends to member b arrive s seconds late).

- The tools' self-tests: a put through a follower whose traffic to the leader is delayed 1.5 s
  takes at least that long (the follower forwards the proposal to the leader); after
  ``undelay()`` a put through it is quick again. A put through a client-link proxy
  (``faultnet.CutProxy``) delayed 0.3 s takes at least 0.6 s (both ways); after ``delay(0)``,
  quick again. A put through a CutProxy holding replies is applied (its value is read on the
  member directly) while its client still waits, and answered once the replies are released.
- FAULT-LATE-ENQUEUE-001: a client whose connections are on a follower F (the other follower's
  path was cut while it connected, then restored) takes a lock while F's traffic to the leader is
  3 s late: F's copy of the enqueue stalls, the client sends it to the other follower after 1 s,
  that copy is applied and answered, and the client releases. F's copy reaches the leader 2 s
  later, into an empty queue. No key may come back (the acquisition's shared lease was retired
  and revoked once released): 5 s after the release the queue is empty and another client's
  try-lock succeeds.

Bounds: every wait is bounded; the clients are closed and the delay ended in ``finally``.
"""
from __future__ import annotations

import os
import sys
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # tests/, for etcd_harness

import etcdlock  # noqa: E402
from faultnet import CutProxy  # noqa: E402
from peernet import PeerProxiedCluster  # noqa: E402

LATE_S = 3.0  # how late the follower's proposals reach the leader


@pytest.fixture(scope="module")
def cluster():
    with PeerProxiedCluster(3) as c:
        yield c


def roles(c):
    """The leader and the two followers."""
    leader = c.leader_index()
    assert leader is not None, "no leader"
    f, g = (i for i in range(3) if i != leader)
    return leader, f, g


def timed_put(c, member: int, key: str) -> float:
    t = time.monotonic()
    c.etcdctl("put", key, "x", endpoints=[c.members[member].client_url], timeout=15)
    return time.monotonic() - t


def test_a_delayed_peer_link_delays_a_followers_proposals(cluster):
    leader, f, _ = roles(cluster)
    key = f"late-selftest-{time.monotonic_ns()}"
    try:
        cluster.net.delay(f, leader, 1.5)
        slow = timed_put(cluster, f, key)
    finally:
        cluster.net.undelay()
    time.sleep(1.6)  # what was on its way arrives
    fast = timed_put(cluster, f, key)
    print(f"peer link delay self-test: a put through the follower took {slow:.2f} s delayed, {fast:.2f} s after")
    assert slow >= 1.5, f"the delay did not hold the follower's proposal ({slow:.2f} s)"
    assert fast < 1.0, f"a put through the follower still took {fast:.2f} s after undelay()"


def test_a_delayed_client_link_delays_both_ways(cluster):
    key = f"late-selftest-client-{time.monotonic_ns()}"
    with CutProxy(cluster.members[0].client_port) as proxy:
        def put() -> float:
            t = time.monotonic()
            cluster.etcdctl("put", key, "x", endpoints=[proxy.endpoint], timeout=15)
            return time.monotonic() - t
        proxy.delay(0.3)
        slow = put()
        proxy.delay(0)
        time.sleep(0.6)
        fast = put()
    print(f"client link delay self-test: a put through the proxy took {slow:.2f} s delayed, {fast:.2f} s after")
    assert slow >= 0.6, f"the delay did not hold the request and its reply ({slow:.2f} s)"
    assert fast < 0.9, f"a put through the proxy still took {fast:.2f} s after delay(0)"


def test_held_replies_let_requests_be_applied_unanswered(cluster):
    key = f"late-selftest-held-{time.monotonic_ns()}"
    with CutProxy(cluster.members[0].client_port) as proxy:
        client = etcdlock.Client([proxy.endpoint], timeout=10)
        done = []
        try:
            client.put(key, b"before")  # the connection is up before the replies are held
            proxy.hold_replies()
            put = threading.Thread(target=lambda: done.append(client.put(key, b"held")), daemon=True)
            put.start()
            applied = False
            for _ in range(100):  # up to 5 s
                if cluster.etcdctl("get", key, "--print-value-only", timeout=15).strip() == "held":
                    applied = True
                    break
                time.sleep(0.05)
            answered_while_held = bool(done)
            proxy.release_replies()
            put.join(15)
        finally:
            proxy.release_replies()
            client.close()
    print(f"held replies self-test: applied while held {applied}, answered while held {answered_while_held}, after release {bool(done)}")
    assert applied, "the put was not applied while its reply was held"
    assert not answered_while_held, "the reply got through while held"
    assert done, "the held reply was not passed on after release_replies()"


def queue_keys(c, name: str):
    out = c.etcdctl("get", f"{name}/", "--prefix", "--keys-only", timeout=15)
    return [line for line in out.splitlines() if line.strip()]


# covers: FAULT-LATE-ENQUEUE-001
def test_a_late_enqueue_never_brings_a_released_key_back(cluster):
    leader, f, g = roles(cluster)
    name = f"late-enqueue-{time.monotonic_ns()}"
    other = etcdlock.Client([cluster.members[leader].client_url], timeout=5)
    client = None
    try:
        # Everything the client opens goes to F: G's path is silent while it connects.
        with CutProxy(cluster.members[g].client_port) as proxy:
            proxy.cut()
            client = etcdlock.Client([cluster.members[f].client_url, proxy.endpoint], timeout=5)
            lock = client.lock(name, ttl=10)
            assert lock.acquire(timeout=10)  # the session's lease granted, through F
            lock.release()
            proxy.restore()
            cluster.net.delay(f, leader, LATE_S)
            t = time.monotonic()
            assert lock.acquire(timeout=10)
            took = time.monotonic() - t
            lock.release()
            assert took >= 0.9, f"the enqueue was answered in {took:.2f} s: it did not go through the slow follower"
            time.sleep(LATE_S + 2.0)  # F's copy has reached the leader
            cluster.net.undelay()
            left = queue_keys(cluster, name)
            free = other.lock(name, ttl=10)
            got = free.acquire(blocking=False)
            if got:
                free.release()
        print(f"FAULT-LATE-ENQUEUE-001: acquired in {took:.2f} s through the other follower; "
              f"{LATE_S + 2:.0f} s after the release: keys {left}, try-lock {'free' if got else 'busy'}")
        assert left == [], f"a late enqueue put the released key back: {left}"
        assert got, "another client's try-lock found the lock busy: a holder nobody has"
    finally:
        cluster.net.undelay()
        if client is not None:
            client.close()
        other.close()
