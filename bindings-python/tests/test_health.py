"""``health()`` on every lock-like handle (issue #59), and the readiness-probe example that
serves it (examples/readiness_probe.py)."""

import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

import etcdlock

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "readiness_probe.py")


def assert_held(h: etcdlock.Health, name: str, token: int) -> None:
    assert h.ok and h.state == "held" and h.lost_reason is None, h
    assert h.name == name and h.fencing_token == token and h.lease_id > 0, h
    assert h.exclusive_for is not None and 0 < h.exclusive_for <= 10, h


def assert_released(h: etcdlock.Health) -> None:
    assert not h.ok and h.state == "released" and h.exclusive_for is None, h


# covers: HEALTH-HANDLE-001
def test_a_locks_health_is_not_ok_by_the_time_on_lost_fires(client, etcd, prefix):
    lock = client.lock(f"{prefix}/h", ttl=10)
    idle = lock.health()
    assert (idle.state, idle.ok, idle.name, idle.fencing_token) == ("idle", False, f"{prefix}/h", 0)
    assert lock.acquire()
    assert_held(lock.health(), f"{prefix}/h", lock.fencing_token)
    with pytest.raises(dataclasses_frozen()):
        lock.health().ok = False  # a snapshot: frozen
    seen = []
    lock.on_lost(lambda reason: seen.append((reason, lock.health())))
    etcd.ctl("del", lock.key.decode())  # another client deletes the key
    etcd.wait_until(lambda: seen, what="on_lost")
    reason, h = seen[0]
    assert reason == "key_deleted"
    assert (h.ok, h.state, h.lost_reason, h.exclusive_for) == (False, "lost", "key_deleted", None), h
    with pytest.raises(etcdlock.NotHeld):
        lock.release()
    assert_released(lock.health())
    # A clean hold and release.
    assert lock.acquire()
    assert lock.health().ok
    lock.release()
    assert_released(lock.health())


def dataclasses_frozen():
    import dataclasses

    return dataclasses.FrozenInstanceError


# covers: HEALTH-HANDLE-001
def test_every_handle_reads_held_then_released(client, prefix):
    with client.semaphore(f"{prefix}/sem", 2, ttl=10) as permit:
        assert_held(permit.health(), f"{prefix}/sem", permit.fencing_token)
    assert_released(permit.health())
    rw = client.rwlock(f"{prefix}/rw", ttl=10)
    for side in (rw.read(), rw.write()):
        assert side.acquire()
        assert_held(side.health(), f"{prefix}/rw", side.fencing_token)
        side.release()
        assert_released(side.health())
    leadership = client.election(f"{prefix}/el", ttl=10).campaign("me")
    assert_held(leadership.health(), f"{prefix}/el", leadership.fencing_token)
    leadership.resign()
    assert_released(leadership.health())
    locks = client.lock_set([f"{prefix}/a", f"{prefix}/b"], ttl=10)
    assert locks.health().state == "idle" and locks.health().name == f"{prefix}/a,{prefix}/b"
    with locks:
        assert_held(locks.health(), f"{prefix}/a,{prefix}/b", locks.fencing_token)
    assert_released(locks.health())
    held = client.pool(f"{prefix}/pool", size=2, ttl=10).acquire(timeout=5.0)
    assert_held(held.health(), f"{prefix}/pool", held.fencing_token)
    held.release()
    assert_released(held.health())
    q = client.queue(f"{prefix}/q", ttl=10)
    q.put(b"x")
    task = q.claim(timeout=5.0)
    h = task.health()
    assert h.ok and h.name.startswith(f"{prefix}/q/claim/"), h
    task.ack()
    assert_released(task.health())
    with client.once(f"{prefix}/job", every=3600.0) as slot:
        assert slot is not None
        h = slot.health()
        assert h.ok and h.name.startswith(f"{prefix}/job/slot/"), h
    assert_released(slot.health())


# covers: HEALTH-HANDLE-001
def test_health_after_the_client_closed_is_not_ok(etcd, prefix):
    c = etcdlock.Client(etcd.endpoints)
    lock = c.lock(f"{prefix}/closed", ttl=10)
    assert lock.acquire()
    c.close()
    h = lock.health()  # no error: the view says why it is not ok
    assert not h.ok and h.state in ("lost", "released"), h


def get(url: str):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


# covers: HEALTH-HANDLE-001
def test_the_readiness_probe_example_says_200_while_leading_then_503(etcd, prefix):
    name = f"{prefix}/leader"
    env = dict(os.environ, ETCDLOCK_ENDPOINTS=etcd.endpoints, PYTHONUNBUFFERED="1")
    p = subprocess.Popen([sys.executable, EXAMPLE, "--port", "0", "--name", name, "--ttl", "10"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(iter(p.stdout.readline, "")), daemon=True)
        reader.start()
        deadline = time.monotonic() + 20
        while not any(l.startswith("leading") for l in lines) and time.monotonic() < deadline:
            time.sleep(0.05)
        port = int(next(l.split()[1] for l in lines if l.startswith("listening")))
        status, body = get(f"http://127.0.0.1:{port}/readyz")
        assert status == 200 and body.startswith("held"), (status, body)
        key = etcd.keys(f"{name}/")[0].decode()
        etcd.ctl("del", key)  # an operator deletes the leader's key: leadership lost
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(l.startswith("lost") for l in lines):
            time.sleep(0.05)
        assert "lost (key_deleted): not ready\n" in lines, lines
        # Once the example heard of the loss, no probe says 200.
        status, body = get(f"http://127.0.0.1:{port}/readyz")
        assert status == 503 and body.startswith("lost key_deleted"), (status, body)
        p.terminate()
        assert p.wait(timeout=10) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
