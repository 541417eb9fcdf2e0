"""Lock sets (``client.lock_set``) against a real etcd: opposite orders never deadlock and never
share a name, one token on every member's key, writes fenced by every member, a lost member,
mixed modes, and timeouts, tries, cancels and bad input that leave no key. What etcd holds is
read with etcdctl, not with the library under test."""

import asyncio
import json
import sqlite3
import threading
import time

import pytest

import etcdlock
from etcdlock.fencing import Fence, StaleFence
from etcdlock.fencing import sqlite as sqlite_fence


def kv(etcd, key):
    """(create revision, lease) of ``key`` as etcd has it."""
    found = json.loads(etcd.ctl("get", key.decode() if isinstance(key, bytes) else key, "-w", "json")).get("kvs") or []
    return (found[0]["create_revision"], found[0]["lease"]) if found else None


def queues(etcd, *names):
    """Every key in the queues of ``names``."""
    return [k for n in names for k in etcd.keys(f"{n}/")]


# covers: LOCKSET-ABBA-001
def test_two_threads_in_opposite_orders_never_deadlock_and_never_share_a_name(etcd, prefix):
    a, b, counter = f"{prefix}/a", f"{prefix}/b", f"{prefix}/counter"
    errors = []

    def worker(names):
        try:
            with etcdlock.Client(etcd.endpoints) as c:
                locks = c.lock_set(names, ttl=10)
                for _ in range(200):
                    assert locks.acquire(timeout=10.0), "a set waited 10 s: deadlock?"
                    # Read, then write through the set: a second holder in between would lose
                    # an increment.
                    n = int(c.get(counter) or b"0")
                    c.put(counter, str(n + 1), if_held=locks)
                    locks.release()
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(names,)) for names in ([a, b], [b, a])]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "deadlock"
    assert errors == []
    assert etcd.ctl("get", counter, "--print-value-only").strip() == "400"
    assert queues(etcd, a, b) == []


# covers: LOCKSET-TOKEN-001
def test_one_token_on_every_key_and_writes_fenced_by_every_member(client, etcd, prefix):
    names = [f"{prefix}/x", f"{prefix}/y", f"{prefix}/z"]
    data = f"{prefix}/data"
    with client.lock(names[1], timeout=5.0) as earlier:
        earlier_token = earlier.fencing_token
    reasons, lost = [], threading.Event()
    with pytest.raises(etcdlock.LockLost):
        with client.lock_set(names, ttl=10, timeout=5.0) as locks:
            assert locks.is_held() and locks.lost_reason is None
            assert locks.names == [n.encode() for n in names] and len(locks.keys) == 3
            token = locks.fencing_token
            assert token > earlier_token
            # One Txn put every key: one create revision (the token), one lease.
            for key in locks.keys:
                assert kv(etcd, key) == (token, locks.lease_id)
            assert client.put(data, "1", if_held=locks) > token
            with pytest.raises(ValueError):
                client.put(f"{names[2]}/x", "1", if_held=locks)  # under a member's queue
            locks.on_lost(lambda r: (reasons.append(r), lost.set()))
            # One member's key deleted by someone else: the set is lost, writes go nowhere.
            etcd.ctl("del", locks.keys[2].decode())
            with pytest.raises(etcdlock.NotHeld):
                client.put(data, "2", if_held=locks)
            assert lost.wait(5), "on_lost did not fire"
            assert reasons == ["key_deleted"] and not locks.is_held()
            assert locks.fencing_token is None and locks.lost_reason == "key_deleted"
    # The with block's release said the set was lost (LockLost) and deleted the keys left.
    assert etcd.ctl("get", data, "--print-value-only").strip() == "1"
    assert queues(etcd, *names) == []
    with pytest.raises(etcdlock.NotHeld):
        client.put(data, "3", if_held=locks)
    with pytest.raises(etcdlock.NotHeld):
        locks.release()


# covers: LOCKSET-TOKEN-001
def test_a_members_fence_is_at_the_sets_token_checks_while_held_and_passes_the_database(tmp_path, client, etcd, prefix):
    x, y, other = f"{prefix}/fx", f"{prefix}/fy", f"{prefix}/fother"
    conn = sqlite3.connect(tmp_path / "set.sqlite", isolation_level=None)
    sqlite_fence.install(conn)
    locks = client.lock_set([x, etcdlock.write(y)], ttl=10)
    with pytest.raises(etcdlock.NotHeld):
        locks.fence(x)  # before the first acquire: nothing holds (as Lock.fence)
    assert locks.acquire(timeout=5.0)
    fx, fy = locks.fence(x), locks.fence(y.encode())
    for f, n in ((fx, x), (fy, y)):
        assert isinstance(f, Fence) and f.kind == "q" and f.name == n.encode()
        assert f.token == locks.fencing_token
        assert client.check_fence(f) and client.check_fence(str(f))
    assert [kv(etcd, k)[0] for k in locks.keys] == [fx.token, fy.token]
    assert sqlite_fence.check(conn, fx) == fx.token
    assert sqlite_fence.check(conn, fy) == fy.token  # each member has its own mark
    with pytest.raises(ValueError):
        locks.fence(other)  # not a member
    with pytest.raises(TypeError):
        locks.fence(1)  # type: ignore[arg-type]
    locks.release()
    assert client.check_fence(fx) is False and client.check_fence(fy) is False
    with pytest.raises(etcdlock.NotHeld):
        locks.fence(x)
    # The next holder of x: a larger token; the set's fence is refused at the database after it.
    with client.lock(x, timeout=5.0) as lone:
        later = lone.fence()
        assert later.token > fx.token
        assert sqlite_fence.check(conn, later) == later.token
        with pytest.raises(StaleFence):
            sqlite_fence.check(conn, fx)

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as ac:
            async with ac.lock_set([x, y], timeout=5.0) as alocks:
                af = await alocks.fence(y)
                assert af.kind == "q" and af.name == y.encode() and af.token == alocks.fencing_token
                assert af.token > fy.token and await ac.check_fence(af)
                with pytest.raises(ValueError):
                    await alocks.fence(other)
            assert await ac.check_fence(af) is False
            with pytest.raises(etcdlock.NotHeld):
                await alocks.fence(y)

    asyncio.run(asyncio.wait_for(main(), 30))
    assert queues(etcd, x, y) == []


# covers: LOCKSET-MIXED-001
def test_mixed_modes_two_readers_at_once_a_third_without_a_permit_and_a_writer_waits(client, etcd, prefix):
    cfg, gpus = f"{prefix}/cfg", f"{prefix}/gpus"

    def job(j):
        return client.lock_set([etcdlock.read(cfg), etcdlock.write(f"{prefix}/jobs/{j}"), etcdlock.permit(gpus, 2)], ttl=10)

    s1, s2, s3 = job("a"), job("b"), job("c")
    assert s1.acquire(timeout=5.0) and s2.acquire(timeout=5.0)  # two readers, two permits
    assert [m.mode for m in s1.members] == ["read", "write", "permit"] and s1.members[2].permits == 2
    assert s3.acquire(blocking=False) is False  # no permit left: nothing kept
    assert len(queues(etcd, cfg)) == 2 and len(queues(etcd, gpus)) == 2
    assert queues(etcd, f"{prefix}/jobs/c") == []
    # A writer of cfg waits for both reading sets; a reading set after it waits for it.
    writer = client.rwlock(cfg).write()
    got = []
    t = threading.Thread(target=lambda: got.append(writer.acquire(timeout=10.0)))
    t.start()
    etcd.wait_until(lambda: len(queues(etcd, cfg)) == 3, 5, "the writer to queue")
    time.sleep(0.3)
    assert got == []
    reader = client.lock_set([etcdlock.read(cfg)], ttl=10)
    assert reader.acquire(timeout=0.5) is False, "a reading set passed a waiting writer"
    s1.release()
    time.sleep(0.2)
    assert got == [], "the writer went in beside a reader"
    s2.release()
    t.join(5)
    assert got == [True]
    assert reader.acquire(timeout=0.3) is False, "a reading set went in beside the writer"
    writer.release()
    assert reader.acquire(timeout=5.0)
    reader.release()
    assert queues(etcd, cfg, gpus, f"{prefix}/jobs/a", f"{prefix}/jobs/b") == []


# covers: LOCKSET-BINDING-001
def test_timeout_try_and_bad_input_leave_no_key(client, etcd, prefix):
    a, b = f"{prefix}/a", f"{prefix}/b"
    holder = client.lock(b)
    assert holder.acquire(timeout=5.0)
    locks = client.lock_set([a, b], ttl=10)
    started = time.monotonic()
    assert locks.acquire(timeout=0.5) is False
    assert 0.4 < time.monotonic() - started < 3
    assert queues(etcd, a) == [] and len(queues(etcd, b)) == 1
    assert locks.acquire(blocking=False) is False  # a try: never held in part, nothing kept
    assert queues(etcd, a) == [] and len(queues(etcd, b)) == 1
    with pytest.raises(etcdlock.LockTimeout):
        with client.lock_set([b, a], timeout=0.3):
            pass
    assert queues(etcd, a) == [] and not locks.is_held() and locks.fencing_token is None
    with pytest.raises(etcdlock.NotHeld):
        locks.release()
    holder.release()
    assert locks.acquire(blocking=False)
    locks.release()
    with pytest.raises(etcdlock.NotHeld):
        locks.release()  # twice
    # The largest set: 64 names.
    many = [f"{prefix}/m{i}" for i in range(etcdlock.MAX_LOCK_SET)]
    with client.lock_set(many, timeout=5.0) as big:
        assert len(big.keys) == 64
    assert queues(etcd, *many[:3], many[-1]) == []
    # Bad input: refused before anything is sent.
    for bad in ([], [a, a], [a, f"{a}/b"], [f"{a}/b/c", f"{a}/b"], [f"{prefix}/n{i}" for i in range(65)], [""], [f"{a}/"], ["x\0y"]):
        with pytest.raises(ValueError):
            client.lock_set(bad)
    for bad_ttl in (0, -1, 10**10):
        with pytest.raises(ValueError):
            client.lock_set([a], ttl=bad_ttl)
    for bad_permits in (0, 1025, -1):
        with pytest.raises(ValueError):
            etcdlock.permit(a, bad_permits)
    with pytest.raises(ValueError):
        etcdlock.SetMember(a, "lurk")
    with pytest.raises(ValueError):
        client.lock_set([a], value=b"v" * 4097)
    with pytest.raises(ValueError):
        locks.acquire(timeout=-2)
    for bad_type in ("ab", b"ab", 7, None, [7], [None], [(a, "read")], {a: 1}):
        with pytest.raises(TypeError):
            client.lock_set(bad_type)  # type: ignore[arg-type]
    for kwargs in ({"ttl": 1.5}, {"ttl": True}, {"ttl": "10"}, {"timeout": "1"}):
        with pytest.raises(TypeError):
            client.lock_set([a], **kwargs)  # type: ignore[arg-type]
    for bad_permits in ("2", 2.0, True):
        with pytest.raises(TypeError):
            etcdlock.permit(a, bad_permits)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        client.put(f"{prefix}/x", "v", if_held=[locks])  # type: ignore[arg-type]
    assert queues(etcd, a, b) == []
    client.close()
    with pytest.raises(etcdlock.Closed):
        client.lock_set([a])
    with pytest.raises(etcdlock.Closed):
        locks.acquire(timeout=1.0)


# covers: LOCKSET-ABBA-001, LOCKSET-TOKEN-001, LOCKSET-BINDING-001
def test_asyncio_opposite_orders_cancel_and_a_lost_member(etcd, prefix):
    a, b, counter = f"{prefix}/aa", f"{prefix}/ab", f"{prefix}/acounter"

    async def worker(names):
        async with etcdlock.AsyncClient(etcd.endpoints) as c:
            locks = c.lock_set(names, ttl=10)
            for _ in range(50):
                assert await locks.acquire(timeout=10.0), "a set waited 10 s: deadlock?"
                n = int(await c.get(counter) or b"0")
                await c.put(counter, str(n + 1), if_held=locks)
                await locks.release()

    async def main():
        await asyncio.gather(worker([a, b]), worker([b, a]))
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            # async with, fenced writes, one token, a lost member.
            reasons = []
            lost = asyncio.Event()
            with pytest.raises(etcdlock.LockLost):
                async with client.lock_set([a, etcdlock.write(b)], timeout=5.0) as locks:
                    assert isinstance(locks, etcdlock.AsyncLockSet) and locks.is_held()
                    assert [kv(etcd, k) for k in locks.keys] == [(locks.fencing_token, locks.lease_id)] * 2
                    await client.put(f"{prefix}/adata", "1", if_held=locks)
                    locks.on_lost(lambda r: (reasons.append(r), lost.set()))
                    etcd.ctl("del", locks.keys[0].decode())
                    with pytest.raises(etcdlock.NotHeld):
                        await client.put(f"{prefix}/adata", "2", if_held=locks)
                    await asyncio.wait_for(lost.wait(), 5)
                    assert reasons == ["key_deleted"] and not locks.is_held()
            assert queues(etcd, a, b) == []
            # A waiting acquire cancelled: it ends at once and leaves no key in any queue.
            holder = client.lock(b)
            assert await holder.acquire(timeout=5.0)
            waiting = client.lock_set([a, b], ttl=10)
            task = asyncio.ensure_future(waiting.acquire(timeout=20.0))
            await asyncio.sleep(0.3)
            assert len(queues(etcd, a)) == 1 and not task.done()
            cancelled = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert time.monotonic() - cancelled < 1.0, "the cancel did not reach the core's wait"
            assert queues(etcd, a) == [] and len(queues(etcd, b)) == 1
            assert await waiting.acquire(blocking=False) is False
            assert await waiting.acquire(timeout=0.3) is False
            with pytest.raises(etcdlock.LockTimeout):
                async with client.lock_set([b], timeout=0.2):
                    pass
            assert queues(etcd, a) == [] and len(queues(etcd, b)) == 1
            await holder.release()
            for bad in ([], [a, a], [a, f"{a}/x"]):
                with pytest.raises(ValueError):
                    client.lock_set(bad)
            with pytest.raises(TypeError):
                client.lock_set(a)
            with pytest.raises(TypeError):
                await client.put(f"{prefix}/adata", "3", if_held=object())  # type: ignore[arg-type]
        with pytest.raises(etcdlock.Closed):
            await waiting.acquire(timeout=1.0)

    asyncio.run(asyncio.wait_for(main(), 90))
    assert etcd.ctl("get", counter, "--print-value-only").strip() == "100"
    assert etcd.ctl("get", f"{prefix}/adata", "--print-value-only").strip() == "1"
    assert queues(etcd, a, b) == []
