"""Leader election, the semaphore and the read-write lock, sync and asyncio, against a real etcd."""

import asyncio
import threading
import time

import pytest

import etcdlock


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


# covers: ELECT-BASIC-001, ELECT-PROCLAIM-001, ELECT-RESIGN-001, ELECT-PROCLAIM-FENCED-001
def test_campaign_proclaim_resign(etcd, client, prefix):
    election = client.election(f"{prefix}/svc", ttl=10)
    assert election.leader() is None
    with election.campaign("node-1", timeout=5.0) as leadership:
        assert isinstance(leadership, etcdlock.Leadership) and leadership.is_leader()
        leader = election.leader()
        assert leader == etcdlock.Leader(b"node-1", leadership.key, leadership.fencing_token, leadership.lease_id)
        assert leadership.proclaim("node-1 ready") > leadership.fencing_token
        assert election.leader().value == b"node-1 ready"
        # Fenced writes with if_held=, as with a lock.
        client.put(f"{prefix}/data", "x", if_held=leadership)
        first = leadership.fencing_token
    assert election.leader() is None and not leadership.is_leader()
    with pytest.raises(etcdlock.NotHeld):
        leadership.proclaim("late")
    again = election.campaign("node-1")
    assert again.fencing_token > first
    # Deposed behind its back: nothing it proclaims or writes lands.
    etcd.ctl("del", again.key.decode())
    with pytest.raises(etcdlock.NotHeld):
        again.proclaim("still me")
    with pytest.raises(etcdlock.NotHeld):
        client.put(f"{prefix}/data", "y", if_held=again)
    assert election.leader() is None and client.get(f"{prefix}/data") == b"x"
    assert etcd.keys(f"{prefix}/svc/") == []


# covers: ELECT-FIFO-001, ELECT-TIMEOUT-001, ELECT-OBSERVE-001, ELECT-OBSERVE-NOLEADER-001
def test_candidates_take_turns_and_the_observer_sees_each(etcd, client, prefix):
    name = f"{prefix}/svc"
    seen = []
    with etcdlock.Client(etcd.endpoints) as other:
        observer = other.election(name).observe()
        first_seen = threading.Event()

        def follow():
            for leader in observer:
                seen.append(None if leader is None else leader.value)
                first_seen.set()

        t = threading.Thread(target=follow, daemon=True)
        t.start()
        assert first_seen.wait(5)
        a = client.election(name).campaign("a")
        # The observer may merge changes it has not read yet into the latest (documented), so
        # each state is awaited before the next change: then every one must be reported.
        etcd.wait_until(lambda: seen[-1:] == [b"a"], what="the first leader")
        with pytest.raises(etcdlock.LockTimeout):
            other.election(name).campaign("b", timeout=0.3)
        with pytest.raises(etcdlock.LockTimeout):
            other.election(name).campaign("b", timeout=0)
        assert len(etcd.keys(f"{name}/")) == 1, "the timed-out candidates left nothing"
        got = []
        waiter = threading.Thread(target=lambda: got.append(other.election(name).campaign("b")))
        waiter.start()
        etcd.wait_until(lambda: len(etcd.keys(f"{name}/")) == 2, what="the second candidate")
        a.proclaim("a2")
        etcd.wait_until(lambda: seen[-1:] == [b"a2"], what="the proclamation")
        first = a.fencing_token
        a.resign()
        waiter.join(5)
        assert got and got[0].fencing_token > first
        etcd.wait_until(lambda: seen[-1:] == [b"b"], what="the second leader")
        got[0].resign()
        etcd.wait_until(lambda: seen[-1:] == [None] and len(seen) > 1, what="no leader reported")
        observer.close()
        t.join(5)
        assert not t.is_alive()
    assert seen == [None, b"a", b"a2", b"b", None]


# covers: ELECT-INTEROP-001
def test_etcdctl_elect_sees_our_leader(etcd, client, prefix):
    import subprocess

    from etcd_harness import find_etcdctl

    name = f"{prefix}/svc"
    leadership = client.election(name).campaign("ours")
    listen = subprocess.Popen(
        [find_etcdctl(), "--endpoints", etcd.endpoints, "elect", "-l", name],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    import queue

    lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in listen.stdout], daemon=True).start()

    def printed(text: str) -> bool:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                if text in lines.get(timeout=max(0.01, deadline - time.monotonic())):
                    return True
            except queue.Empty:
                break
        return False

    try:
        assert printed("ours"), "etcdctl elect -l did not print our leader"
        leadership.proclaim("ours, proclaimed")
        assert printed("ours, proclaimed"), "etcdctl elect -l missed the proclamation"
    finally:
        listen.terminate()
        listen.wait(5)
        leadership.resign()


# covers: SEM-LIMIT-001
def test_semaphore_holds_at_most_n(etcd, client, prefix):
    name = f"{prefix}/slots"
    inside, most, lock = [0], [0], threading.Lock()

    def work(i):
        with etcdlock.Client(etcd.endpoints) as c:
            for _ in range(3):
                with c.semaphore(name, permits=2, ttl=10, timeout=20.0) as permit:
                    with lock:
                        inside[0] += 1
                        most[0] = max(most[0], inside[0])
                    c.put(f"{prefix}/mark-{i}", "x", if_held=permit)
                    time.sleep(0.01)
                    with lock:
                        inside[0] -= 1

    threads = [threading.Thread(target=work, args=(i,)) for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert most[0] == 2
    assert etcd.keys(f"{name}/") == []


# covers: SEM-PERMITS-001, SEM-TRY-001, SEM-TIMEOUT-001
def test_semaphore_arguments_try_and_timeout(etcd, client, prefix):
    name = f"{prefix}/slots"
    for bad in (0, 1025, -1):
        with pytest.raises(ValueError):
            client.semaphore(name, permits=bad)
    with pytest.raises(TypeError):
        client.semaphore(name, permits="3")
    a, b = client.semaphore(name, permits=2), client.semaphore(name, permits=2)
    assert a.acquire(blocking=False) and b.acquire(blocking=False)
    c = client.semaphore(name, permits=2)
    assert c.acquire(blocking=False) is False
    assert c.acquire(timeout=0.3) is False
    with pytest.raises(ValueError, match="2 permits"):
        client.semaphore(name, permits=3).acquire()
    assert len(etcd.keys(f"{name}/")) == 2
    a.release()
    b.release()


# covers: RW-READERS-001, RW-WRITER-FAIR-001
def test_rwlock_readers_together_writer_alone(etcd, client, prefix):
    rw = client.rwlock(f"{prefix}/cfg")
    r1, r2 = rw.read(), rw.read()
    assert r1.acquire() and r2.acquire(timeout=1)
    w = rw.write(timeout=0.3)
    with pytest.raises(etcdlock.LockTimeout):
        with w:
            pass
    order = []
    writer = threading.Thread(target=lambda: (w.acquire(), order.append("w"), w.release()))
    writer.start()
    etcd.wait_until(lambda: len(etcd.keys(f"{prefix}/cfg/")) == 3, what="the writer queued")
    late = rw.read()
    assert late.acquire(blocking=False) is False, "a later reader does not overtake a waiting writer"
    r1.release()
    r2.release()
    writer.join(5)
    with rw.read(timeout=5.0):
        order.append("r")
    assert order == ["w", "r"]
    assert etcd.keys(f"{prefix}/cfg/") == []


def test_async_recipes(etcd, prefix):
    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            election = client.election(f"{prefix}/svc")
            observer = election.observe()
            assert await observer.__anext__() is None
            async with election.campaign("a", timeout=5.0) as leadership:
                assert isinstance(leadership, etcdlock.AsyncLeadership) and leadership.is_leader()
                assert (await observer.__anext__()).value == b"a"
                await leadership.proclaim("a2")
                assert (await observer.__anext__()).value == b"a2"
                assert (await election.leader()).revision == leadership.fencing_token
            assert await observer.__anext__() is None
            observer.close()
            with pytest.raises(StopAsyncIteration):
                await observer.__anext__()
            # A cancelled campaign leaves nothing.
            held = await election.campaign("b")
            task = asyncio.ensure_future(client.election(f"{prefix}/svc").campaign("c"))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert len(etcd.keys(f"{prefix}/svc/")) == 1
            await held.resign()

            async with client.semaphore(f"{prefix}/slots", permits=2, timeout=5.0) as p1:
                async with client.semaphore(f"{prefix}/slots", permits=2, timeout=5.0):
                    assert await client.semaphore(f"{prefix}/slots", permits=2).acquire(blocking=False) is False
                assert p1.is_held()
            rw = client.rwlock(f"{prefix}/cfg")
            async with rw.read(timeout=5.0):
                async with rw.read(timeout=5.0):
                    assert await rw.write().acquire(timeout=0.2) is False
            async with rw.write(timeout=5.0) as w:
                assert await client.put(f"{prefix}/cfg-data", "v", if_held=w) > 0

    run(main())
    assert etcd.keys(f"{prefix}/") == [f"{prefix}/cfg-data".encode()]
