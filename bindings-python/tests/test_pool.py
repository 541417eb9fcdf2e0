"""Pools of named slots (``client.pool``) and semaphores that take several permits at once
(``client.semaphore(count=)``) against a real etcd: never two holders of a slot, a SIGKILLed
holder's slot rests the reuse delay (a released one does not), FIFO with the head-of-line rule,
owners, definitions, runtime changes, the lost signal, bad input, asyncio and its cancel."""

import asyncio
import json
import math
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import etcdlock
from etcdlock.fencing import Fence, StaleFence
from etcdlock.fencing import sqlite as sqlite_fence

PY = sys.executable


def queued(etcd, name, n, timeout=5.0):
    """Waits until `n` requests are queued for the pool (its admission keys)."""
    etcd.wait_until(lambda: len(etcd.keys(f"{name}/queue/")) == n, timeout, f"{n} queued requests")


# covers: POOL-EXCL-001
def test_twelve_workers_on_three_slots_never_share_one(etcd, prefix):
    name, rounds = f"{prefix}/gpus", 5
    lock, inside, most, using, errors = threading.Lock(), [0], [0], set(), []
    start = threading.Barrier(12)

    def work(i):
        try:
            with etcdlock.Client(etcd.endpoints) as c:
                pool = c.pool(name, slots=["gpu0", "gpu1", "gpu2"], ttl=10, reuse_delay=2.0)
                start.wait(10)
                for _ in range(rounds):
                    with pool.acquire(timeout=30.0) as held:
                        (slot,) = held.slots
                        with lock:
                            assert slot not in using, f"slot {slot} held twice"
                            using.add(slot)
                            inside[0] += 1
                            most[0] = max(most[0], inside[0])
                        # A read-modify-write per slot, fenced by the holding: a second holder
                        # of the slot at the same time would lose one of the two counts.
                        key = f"{prefix}/count/{slot}"
                        n = int(c.get(key) or b"0")
                        time.sleep(0.005 * (i % 3))
                        c.put(key, str(n + 1), if_held=held)
                        with lock:
                            using.discard(slot)
                            inside[0] -= 1
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert most[0] <= 3
    with etcdlock.Client(etcd.endpoints) as c:
        counts = [int(c.get(f"{prefix}/count/gpu{s}") or b"0") for s in range(3)]
    assert sum(counts) == 12 * rounds, counts
    left = etcd.keys(f"{name}/")
    assert not [k for k in left if b"/queue/" in k or b"/slot/" in k or b"/cool/" in k], left


HOLDER = textwrap.dedent(
    """
    import sys, time, etcdlock
    endpoints, name = sys.argv[1], sys.argv[2]
    client = etcdlock.Client(endpoints)
    held = client.pool(name, slots=["w0"], ttl=2, reuse_delay=3.0).acquire(timeout=10.0)
    print(held.slots[0], held.tokens["w0"], held.lease_id, flush=True)
    time.sleep(60)
    """
)


# covers: POOL-REUSE-001
def test_a_killed_holders_slot_rests_the_reuse_delay_and_a_released_one_does_not(client, etcd, prefix):
    name = f"{prefix}/ids"
    pool = client.pool(name, slots=["w0"], ttl=2, reuse_delay=3.0)
    # A clean release: the next request gets the slot at once, with a larger token.
    first = pool.acquire(timeout=5.0)
    token = first.tokens["w0"]
    first.release()
    released = time.monotonic()
    with etcdlock.Client(etcd.endpoints) as other:
        with other.pool(name, slots=["w0"], ttl=2, reuse_delay=3.0).acquire(timeout=5.0) as second:
            assert time.monotonic() - released < 0.5, "a released slot rested"
            assert second.tokens["w0"] > token
            token = second.tokens["w0"]
    # A holder in another process, SIGKILLed: its slot waits for its lease to end, then rests.
    # Timed by a watch of the slot key: its delete (the lease ended) and the next holder's put.
    events = []
    watch = client.watch(f"{name}/slot/", prefix=True)
    follower = threading.Thread(target=lambda: events.extend((e.type, time.monotonic()) for e in watch))
    follower.start()
    holder = subprocess.Popen([PY, "-c", HOLDER, etcd.endpoints, name], stdout=subprocess.PIPE, text=True)
    slot, killed_token, _lease = holder.stdout.readline().split()
    assert slot == "w0" and int(killed_token) > token
    got = []
    waiter = threading.Thread(target=lambda: got.append(pool.acquire(timeout=20.0)))
    waiter.start()
    queued(etcd, name, 1)
    holder.kill()
    holder.wait(10)
    etcd.wait_until(lambda: len(events) >= 2, 10, "the killed holder's lease to end")
    time.sleep(1.0)
    assert not got and len(events) == 2, "the dead holder's slot was handed out before the reuse delay"
    (resting,) = pool.slots()
    assert resting.state == "resting" and 0 <= resting.ttl <= 3
    # The rest is timed by an etcd lease of the reuse delay, not by a client's clock.
    ttl = json.loads(etcd.ctl("lease", "timetolive", format(resting.lease, "x"), "-w", "json"))
    assert ttl["granted-ttl"] == 3, ttl
    waiter.join(15)
    etcd.wait_until(lambda: len(events) == 3, 5, "the next holder's put")
    watch.close()
    follower.join(5)
    assert [t for t, _ in events] == ["put", "delete", "put"]
    rested = events[2][1] - events[1][1]
    assert rested >= 2.9, f"handed out {rested:.2f} s after the holder's lease ended"
    assert rested < 6.0, f"the slot rested {rested:.2f} s"
    held = got[0]
    assert held.tokens["w0"] > int(killed_token)
    held.release()


# covers: POOL-FIFO-001
def test_two_slots_are_served_before_later_single_requests(client, etcd, prefix):
    name = f"{prefix}/p"
    pool = client.pool(name, size=3)
    x, y = pool.acquire(timeout=5.0), pool.acquire(timeout=5.0)
    assert (x.slots, y.slots) == (["0"], ["1"])
    order, got = [], {}

    def wait(i, count):
        h = pool.acquire(count, timeout=20.0)
        order.append(i)
        got[i] = h

    threads = []
    for i, count in [(0, 2), (1, 1), (2, 1)]:
        threads.append(threading.Thread(target=wait, args=(i, count)))
        threads[-1].start()
        queued(etcd, name, 1 + i)
    # One slot is free, but the head wants two: nobody passes it.
    time.sleep(0.3)
    assert order == [], "a later single request passed the request for two"
    x.release()
    threads[0].join(5)
    assert order == [0] and sorted(got[0].slots) == ["0", "2"]
    # Singles then go one free slot at a time, in their order (each release
    # frees exactly one slot, so the order checked is etcd's, not the threads').
    y.release()
    threads[1].join(5)
    assert order == [0, 1], "the later single request went first"
    got[0].release()
    threads[2].join(5)
    assert order == [0, 1, 2]
    for i in (1, 2):
        got[i].release()
    assert etcd.keys(f"{name}/queue/") == []


# covers: POOL-OWNER-001
def test_an_acquire_with_the_owner_of_a_live_holding_returns_it(client, prefix):
    name = f"{prefix}/p"
    pool = client.pool(name, size=2)
    first = pool.acquire(owner="job-7", timeout=5.0)
    again = pool.acquire(owner="job-7", timeout=5.0)
    assert (again.slots, again.fencing_token, again.owner) == (first.slots, first.fencing_token, "job-7")
    other = pool.acquire(owner="job-8", timeout=5.0)
    assert other.slots != first.slots
    slots = client.inspect_pool(name)
    assert slots == pool.slots()
    assert [(s.id, s.state, s.owner) for s in slots] == [("0", "held", "job-7"), ("1", "held", "job-8")]
    assert slots[0].token == first.tokens["0"] and slots[0].acquisition == first.fencing_token
    assert slots[0].lease == first.lease_id and 0 < slots[0].ttl <= 10
    # Both handles are one holding: released through one, the other is released too.
    again.release()
    assert not first.is_held()
    with pytest.raises(etcdlock.NotHeld):
        first.release()
    fresh = pool.acquire(owner="job-7", timeout=5.0)
    assert fresh.fencing_token > first.fencing_token, "a released holding came back"
    with fresh:
        pass
    other.release()
    assert [s.state for s in pool.slots()] == ["free", "free"]
    assert client.inspect_pool(f"{prefix}/nothing") is None
    # A holding nobody keeps is given back in the background.
    pool.acquire(timeout=5.0)
    with pool.acquire(2, timeout=5.0) as both:
        assert both.slots == ["0", "1"]


# covers: POOL-DEF-001
def test_definitions_must_agree_and_slots_change_at_runtime(client, etcd, prefix):
    name = f"{prefix}/p"
    pool = client.pool(name, slots=["a", "b"])
    with pytest.raises(ValueError, match="acquire from it once first"):
        pool.add_slots(["c"])
    with pool.acquire(timeout=5.0):
        pass
    for other in [dict(slots=["a", "c"]), dict(slots=["a", "b"], reuse_delay=5.0), dict(size=2)]:
        with pytest.raises(ValueError, match="add_slots"):
            client.pool(name, **other).acquire(timeout=1.0)
    held = pool.acquire(2, timeout=5.0)
    # A waiting request gets a slot added meanwhile.
    got = []
    waiter = threading.Thread(target=lambda: got.append(pool.acquire(timeout=10.0)))
    waiter.start()
    queued(etcd, name, 1)
    assert pool.add_slots(["c"]) == ["a", "b", "c"]
    waiter.join(5)
    assert got and got[0].slots == ["c"]
    # A held slot removed goes at its release; it is not handed out meanwhile.
    assert pool.remove_slots(["a"]) == ["b", "c"]
    held.release()
    assert [(s.id, s.state) for s in pool.slots()] == [("b", "free"), ("c", "held")]
    with pytest.raises(ValueError):
        pool.add_slots(["b"])
    with pytest.raises(ValueError):
        pool.remove_slots(["zz"])
    got[0].release()
    # A participant that gives the changed definition agrees; one that gives none joins it.
    with client.pool(name, slots=["b", "c"]).acquire(timeout=5.0) as h:
        assert h.slots == ["b"]
    joined = client.pool(name)
    with joined.acquire(2, timeout=5.0) as h:
        assert h.slots == ["b", "c"]
    with pytest.raises(ValueError, match="not defined"):
        client.pool(f"{prefix}/nothing").acquire(timeout=1.0)
    assert etcd.keys(f"{prefix}/nothing") == []
    # The removed slot's markers were tidied by that acquire.
    assert not [k for k in etcd.keys(f"{name}/") if k.endswith(b"/a")]


# covers: POOL-INPUT-001
def test_bad_input_is_rejected_with_nothing_written(client, etcd, prefix):
    name = f"{prefix}/p"
    for kwargs in [
        dict(slots=[]),
        dict(slots=["a", "a"]),
        dict(slots=["a/b"]),
        dict(slots=[""]),
        dict(slots=["a"], ttl=0),
        dict(size=0),
        dict(size=1025),
        dict(size=-1),
        dict(size=2**70),
        dict(size=2, reuse_delay=-1.0),
        dict(size=2, reuse_delay=math.nan),
        dict(size=2, reuse_delay=math.inf),
        dict(slots=["a"], size=1),
        dict(reuse_delay=5.0),
    ]:
        with pytest.raises(ValueError):
            client.pool(name, **kwargs)
    with pytest.raises(ValueError):
        client.pool("", size=2)
    for kwargs in [
        dict(slots="abc"),
        dict(slots=[1, 2]),
        dict(slots=[b"a"]),
        dict(size="3"),
        dict(size=2.0),
        dict(size=True),
        dict(size=2, reuse_delay="5s"),
        dict(size=2, ttl=1.5),
    ]:
        with pytest.raises(TypeError):
            client.pool(name, **kwargs)
    pool = client.pool(name, size=2)
    for count in (0, 3, -1, 31):
        with pytest.raises(ValueError):
            pool.acquire(count, timeout=1.0)
    for kwargs in [dict(count=1.0), dict(count="1"), dict(owner=7), dict(timeout="1")]:
        with pytest.raises(TypeError):
            pool.acquire(**kwargs)
    with pytest.raises(ValueError):
        pool.acquire(timeout=-1)
    with pytest.raises(TypeError):
        pool.add_slots("c")
    assert etcd.keys(name) == []
    # A try that finds no slot free leaves nothing but the definition.
    held = pool.acquire(2, timeout=5.0)
    with pytest.raises(etcdlock.WouldBlock):
        pool.acquire(timeout=0)
    with pytest.raises(etcdlock.LockTimeout):
        pool.acquire(timeout=0.3)
    assert etcd.keys(f"{name}/queue/") == []
    with pytest.raises(TypeError):
        client.put(f"{prefix}/x", "v", if_held=pool)
    held.release()


# covers: POOL-LOST-001
def test_a_lost_holding_fires_on_lost_and_writes_nothing(client, etcd, prefix):
    name = f"{prefix}/p"
    pool = client.pool(name, slots=["gpu0", "gpu1"], ttl=2)  # a loss is seen within about 1 s
    lost = threading.Event()
    reasons = []
    with pytest.raises(etcdlock.LockLost):
        with pool.acquire(2, timeout=5.0) as held:
            assert held.is_held() and held.lost_reason is None
            assert held.fencing_token > 0 and set(held.tokens) == {"gpu0", "gpu1"}
            held.on_lost(lambda reason: (reasons.append(reason), lost.set()))
            assert client.put(f"{prefix}/result", "first", if_held=held) > held.fencing_token
            with pytest.raises(ValueError):
                client.put(f"{name}/slot/gpu0", "x", if_held=held)  # the pool's own keys
            etcd.ctl("lease", "revoke", format(held.lease_id, "x"))
            assert lost.wait(5), "on_lost did not fire"
            assert reasons == ["expired"] and not held.is_held()  # revoked by another: ended on the server
            with pytest.raises(etcdlock.NotHeld):
                client.put(f"{prefix}/result", "late", if_held=held)
    assert client.get(f"{prefix}/result") == b"first"
    # Released, not lost: callbacks stay silent.
    quiet = []
    with pool.acquire(timeout=5.0) as held:
        held.on_lost(quiet.append)
    time.sleep(0.2)
    assert quiet == []


# covers: FENCE-POOL-001
def test_a_slots_fence_checks_while_held_and_passes_the_database_then_not_after_release(tmp_path, client, etcd, prefix):
    name = f"{prefix}/fp"
    pool = client.pool(name, slots=["a", "b"], ttl=10)
    conn = sqlite3.connect(tmp_path / "pool.sqlite", isolation_level=None)
    sqlite_fence.install(conn)
    held = pool.acquire(2, timeout=5.0)
    f = held.fence("b")
    assert isinstance(f, Fence) and f.kind == "k"
    assert f.name == f"{name}/slot/b".encode() and f.token == held.tokens["b"]
    # The slot key's create revision, as etcd has it, is the token.
    assert json.loads(etcd.ctl("get", f"{name}/slot/b", "-w", "json"))["kvs"][0]["create_revision"] == f.token
    assert Fence.parse(str(f)) == f
    assert client.check_fence(f) and client.check_fence(str(f))
    assert held.fence("a").token == held.tokens["a"] and client.check_fence(held.fence("a"))
    assert sqlite_fence.check(conn, f) == f.token
    assert sqlite_fence.check(conn, str(f)) == f.token  # the same holder again: the mark is >=
    with pytest.raises(ValueError):
        held.fence("z")  # no such slot
    with pytest.raises(TypeError):
        held.fence(b"b")  # type: ignore[arg-type]
    held.release()
    assert client.check_fence(f) is False, "a released slot's fence still checks"
    # As the core's: the fence is still given after the release, and does not check.
    assert held.fence("b") == f
    nxt = pool.acquire(2, timeout=5.0)
    newer = nxt.fence("b")
    assert newer.name == f.name and newer.token > f.token and newer.token == nxt.tokens["b"]
    assert sqlite_fence.check(conn, newer) == newer.token
    with pytest.raises(StaleFence):
        sqlite_fence.check(conn, f)  # the first holder's late write
    nxt.release()
    assert client.check_fence(newer) is False

    # Another client's holding of one slot: a fence for the slot it does not hold is refused.
    one = pool.acquire(1, timeout=5.0)

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as ac:
            async with ac.pool(name, slots=["a", "b"], ttl=10).acquire(timeout=5.0) as aheld:
                (mine,), (theirs,) = aheld.slots, one.slots
                assert {mine, theirs} == {"a", "b"}
                af = await aheld.fence(mine)
                assert af.kind == "k" and af.name == f"{name}/slot/{mine}".encode() and af.token == aheld.tokens[mine]
                assert af.token > newer.token and await ac.check_fence(af)
                with pytest.raises(ValueError):
                    await aheld.fence(theirs)  # the pool's, held by the other holding
            assert await ac.check_fence(af) is False
            return af

    af = asyncio.run(asyncio.wait_for(main(), 30))
    assert client.check_fence(af) is False
    one.release()
    assert etcd.keys(f"{name}/queue/") == [] and etcd.keys(f"{name}/slot/") == []


# covers: SEM-COUNT-001
def test_a_request_for_two_permits_waits_at_the_head(client, etcd, prefix):
    name = f"{prefix}/encoders"
    a, b = client.semaphore(name, permits=3), client.semaphore(name, permits=3)
    assert a.acquire(timeout=5.0) and b.acquire(timeout=5.0)
    double = client.semaphore(name, permits=3, count=2, timeout=10.0)
    got = []
    waiter = threading.Thread(target=lambda: got.append(double.acquire(timeout=10.0)))
    waiter.start()
    etcd.wait_until(lambda: len(etcd.keys(f"{name}/")) == 3, 5, "the request for two to queue")
    # One permit is free, but a later request for one waits behind the request for two.
    late = client.semaphore(name, permits=3)
    assert late.acquire(timeout=0.6) is False, "a single request passed the waiting double one"
    a.release()
    waiter.join(5)
    assert got == [True] and double.fencing_token > b.fencing_token
    assert late.acquire(blocking=False) is False  # two of three held by it, one by b
    state = client.inspect(name)
    assert [h.mode for h in state.holders] == ["permits=3", "permits=3,count=2"]
    double.release()
    with client.semaphore(name, permits=3, count=2, timeout=5.0) as two:
        client.put(f"{prefix}/encoded", "ok", if_held=two)
    b.release()
    for count in (0, 4, -1):
        with pytest.raises(ValueError):
            client.semaphore(name, permits=3, count=count)
    for count in ("2", 2.0, True):
        with pytest.raises(TypeError):
            client.semaphore(name, permits=3, count=count)
    assert etcd.keys(f"{name}/") == []


# covers: POOL-FIFO-001, POOL-CANCEL-001, SEM-COUNT-001
def test_asyncio_uses_the_same_names_and_a_cancelled_acquire_leaves_nothing(etcd, prefix):
    name = f"{prefix}/apool"

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            pool = client.pool(name, slots=["gpu0", "gpu1", "gpu2"], ttl=10, reuse_delay=5.0)
            async with pool.acquire(count=1, timeout=5.0) as held:
                assert held.slots == ["gpu0"] and held.is_held()
                await client.put(f"{prefix}/aresult", b"ok", if_held=held)
            assert not held.is_held()
            two = await pool.acquire(2, timeout=5.0)
            assert two.slots == ["gpu0", "gpu1"]
            assert [s.state for s in await pool.slots()] == ["held", "held", "free"]
            assert await pool.add_slots(["gpu3"]) == ["gpu0", "gpu1", "gpu2", "gpu3"]
            # The head of the queue wants three: a later request for one waits behind it.
            three = asyncio.ensure_future(pool.acquire(3, timeout=10.0))
            await asyncio.sleep(0.3)
            one = asyncio.ensure_future(pool.acquire(timeout=10.0))
            await asyncio.sleep(0.3)
            assert not three.done() and not one.done()
            # Cancelled while it waits at the head: it ends at once, leaving nothing, and the
            # one behind it goes.
            cancelled = time.monotonic()
            three.cancel()
            with pytest.raises(asyncio.CancelledError):
                await three
            assert time.monotonic() - cancelled < 1.0, "the cancel did not reach the core's wait"
            got = await asyncio.wait_for(one, 5)
            assert got.slots == ["gpu2"]
            assert etcd.keys(f"{name}/queue/") == []  # a holding's turn ended when it took its slots
            await got.release()
            await two.release()
            assert await pool.remove_slots(["gpu3"]) == ["gpu0", "gpu1", "gpu2"]
            # Cancelled while every slot is held: no queued request, no slot taken.
            every = await pool.acquire(3, timeout=5.0)
            waiter = asyncio.ensure_future(pool.acquire(timeout=10.0))
            await asyncio.sleep(0.3)
            cancelled = time.monotonic()
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            assert time.monotonic() - cancelled < 1.0, "the cancel did not reach the core's wait"
            assert etcd.keys(f"{name}/queue/") == []
            with pytest.raises(etcdlock.WouldBlock):
                await pool.acquire(timeout=0)
            await every.release()
            assert [s.state for s in await client.inspect_pool(name)] == ["free"] * 3
            # A semaphore's count, awaited.
            async with client.semaphore(f"{prefix}/asem", permits=4, count=2, ttl=10, timeout=5.0) as permits:
                assert permits.is_held()
                assert (await client.inspect(f"{prefix}/asem")).holders[0].mode == "permits=4,count=2"
        assert etcd.keys(f"{name}/queue/") == [] and etcd.keys(f"{name}/slot/") == []

    asyncio.run(asyncio.wait_for(main(), 40))
    assert etcd.keys(f"{prefix}/asem") == []
