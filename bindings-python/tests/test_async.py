"""The asyncio API against a real etcd."""

import asyncio
import time

import pytest

import etcdlock


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_construct_without_loop_and_kv(etcd, prefix):
    client = etcdlock.AsyncClient(etcd.endpoints)  # synchronous, sends nothing

    async def main():
        assert await client.put(f"{prefix}/k", "v") > 0
        assert await client.get(f"{prefix}/k") == b"v"
        assert await client.get(f"{prefix}/none") is None
        assert await client.delete(f"{prefix}/k") is True
        await client.close()
        await client.close()
        with pytest.raises(etcdlock.Closed):
            await client.get(f"{prefix}/k")

    run(main())


def test_lock_cycle_and_async_with(etcd, prefix):
    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            lock = client.lock(f"{prefix}/l", ttl=5)
            assert await lock.acquire() is True
            t1 = lock.fencing_token
            assert lock.is_held() and etcd.keys(f"{prefix}/l/") == [lock.key]
            other = client.lock(f"{prefix}/l", ttl=5)
            assert await other.acquire(blocking=False) is False
            assert await other.acquire(timeout=0.2) is False
            await client.put(f"{prefix}/data", "x", if_held=lock)
            await lock.release()
            with pytest.raises(etcdlock.NotHeld):
                await lock.release()
            with pytest.raises(etcdlock.NotHeld):
                await client.put(f"{prefix}/data", "y", if_held=lock)
            async with client.lock(f"{prefix}/l", ttl=5, timeout=5) as held:
                assert held.fencing_token > t1
            with pytest.raises(etcdlock.LockTimeout):
                async with lock:
                    async with client.lock(f"{prefix}/l", ttl=5, timeout=0.2):
                        pytest.fail("ran without the lock")
            assert await client.get(f"{prefix}/data") == b"x"
        assert etcd.keys(f"{prefix}/l/") == []

    run(main())


def test_many_tasks_one_client(etcd, prefix):
    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            locks = [client.lock(f"{prefix}/m{i}", ttl=5) for i in range(16)]

            async def cycle(lock):
                for _ in range(3):
                    assert await lock.acquire()
                    await lock.release()

            await asyncio.gather(*(cycle(l) for l in locks))

    run(main())


# covers: LOCK-CANCEL-001
def test_cancel_waiting_acquire_removes_queue_key(etcd, prefix):
    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            holder = client.lock(f"{prefix}/c", ttl=5)
            assert await holder.acquire()
            waiter = client.lock(f"{prefix}/c", ttl=5)
            task = asyncio.ensure_future(waiter.acquire())
            deadline = time.monotonic() + 5
            while len(etcd.keys(f"{prefix}/c/")) < 2 and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert len(etcd.keys(f"{prefix}/c/")) == 2
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The core's cleanup finished before CancelledError propagated.
            assert etcd.keys(f"{prefix}/c/") == [holder.key]
            # wait_for's timeout cancels the same way.
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(waiter.acquire(), 0.3)
            assert etcd.keys(f"{prefix}/c/") == [holder.key]
            assert not waiter.is_held()
            await holder.release()
            assert await waiter.acquire(timeout=5)
            await waiter.release()

    run(main())


def test_close_ends_waiting_acquire(etcd, prefix):
    async def main():
        a = etcdlock.AsyncClient(etcd.endpoints)
        b = etcdlock.AsyncClient(etcd.endpoints)
        holder = a.lock(f"{prefix}/w", ttl=5)
        assert await holder.acquire()
        got = []
        holder.on_lost(got.append)
        waiter = b.lock(f"{prefix}/w", ttl=5)
        task = asyncio.ensure_future(waiter.acquire())
        await asyncio.sleep(0.3)
        await b.close()
        with pytest.raises(etcdlock.Closed):
            await task
        await a.close()
        for _ in range(100):
            if got:
                break
            await asyncio.sleep(0.02)
        assert got == ["closed"]

    run(main())


def test_on_lost_runs_on_the_loop(etcd, prefix):
    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            lock = client.lock(f"{prefix}/o", ttl=5)
            loop = asyncio.get_running_loop()
            got, coro_ran = [], asyncio.Event()

            def cb(reason):
                assert asyncio.get_running_loop() is loop
                got.append(reason)

            async def acb(reason):
                coro_ran.set()

            lock.on_lost(cb)
            lock.on_lost(acb)
            assert await lock.acquire()
            etcd.ctl("del", lock.key.decode())
            await asyncio.wait_for(coro_ran.wait(), 5)
            assert got == ["key_deleted"] and lock.lost_reason == "key_deleted"
            with pytest.raises(etcdlock.NotHeld):
                await lock.release()

    run(main())


def test_lease(etcd, prefix):
    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            lease = await client.lease(5)
            assert lease.ttl == 5 and lease.is_alive()
            await client.put(f"{prefix}/k", "v", lease=lease)
            got = []
            lease.on_lost(got.append)
            await lease.revoke()
            assert await client.get(f"{prefix}/k") is None
            for _ in range(100):
                if got:
                    break
                await asyncio.sleep(0.02)
            assert got == ["revoked"]
            async with client.lease(5) as l2:
                await client.put(f"{prefix}/k2", "v", lease=l2)
            assert await client.get(f"{prefix}/k2") is None

    run(main())


def test_watch(etcd, prefix):
    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            async with client.watch(f"{prefix}/", prefix=True) as w:
                await client.put(f"{prefix}/a", "1")
                await client.delete(f"{prefix}/a")
                events = []
                async for ev in w:
                    events.append((ev.type, ev.key, ev.value))
                    if len(events) == 2:
                        break
                assert events == [("put", f"{prefix}/a".encode(), b"1"), ("delete", f"{prefix}/a".encode(), b"")]
                # A cancelled read loses nothing.
                with pytest.raises(asyncio.TimeoutError):
                    await asyncio.wait_for(w.__anext__(), 0.2)
                await client.put(f"{prefix}/b", "2")
                ev = await asyncio.wait_for(w.__anext__(), 5)
                assert ev.key == f"{prefix}/b".encode()
            assert [e async for e in w] == []

    run(main())


def test_watch_compacted(etcd, prefix):
    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            old = await client.put(f"{prefix}/c", "1")
            now = await client.put(f"{prefix}/c", "2")
            etcd.ctl("compact", str(now))
            with pytest.raises(etcdlock.Compacted) as ei:
                async for _ in client.watch(f"{prefix}/c", start_revision=old):
                    pass
            assert ei.value.compact_revision == now

    run(main())


def test_unreachable_endpoint():
    async def main():
        client = etcdlock.AsyncClient("http://127.0.0.1:1", timeout=0.5)
        t0 = time.monotonic()
        with pytest.raises(etcdlock.Unavailable):
            await client.get("x")
        assert time.monotonic() - t0 < 3.0
        lock = client.lock("x", ttl=5)  # a plain call; the error comes when it talks to etcd
        with pytest.raises(etcdlock.Unavailable):
            await lock.acquire()

    run(main())


def test_one_client_across_event_loops(etcd, prefix):
    client = etcdlock.AsyncClient(etcd.endpoints)
    lock = client.lock(f"{prefix}/loops", ttl=5)

    async def cycle():
        assert await lock.acquire(timeout=5)
        await client.put(f"{prefix}/k", "v", if_held=lock)
        await lock.release()

    asyncio.run(cycle())
    asyncio.run(cycle())  # a second loop: the client and the lock still work
    asyncio.run(client.close())
