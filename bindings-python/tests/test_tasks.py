"""The task queue (``client.queue``) against a real etcd: order, idempotent puts, the with
block's ack and nack, fenced writes and acks, delays, dead letters, bad input, asyncio, and
workers SIGKILLed or SIGSTOPped mid-task."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import etcdlock

PY = sys.executable


def drain(q):
    ids = []
    for _ in range(100):
        try:
            with q.claim(timeout=0) as task:
                ids.append(task.id)
        except etcdlock.WouldBlock:
            return ids
    raise AssertionError("more than 100 tasks")


# covers: QUEUE-ORDER-001
def test_priority_first_then_the_order_of_the_puts(client, etcd, prefix):
    q = client.queue(f"{prefix}/q", ttl=10)
    for task_id, p in [("a", 0), ("b", 5), ("c", 0), ("d", -1), ("e", 5), ("f", 0)]:
        assert q.put(task_id.encode(), id=task_id, priority=p) == task_id
    assert drain(q) == ["b", "e", "a", "c", "f", "d"]
    assert etcd.keys(f"{prefix}/q/") == []


# covers: QUEUE-PUT-ID-001
def test_a_put_with_an_existing_id_changes_nothing(client, prefix):
    q = client.queue(f"{prefix}/q", ttl=10, max_attempts=1)
    q.put(b"first", id="x")
    assert q.put(b"second", id="x", priority=9) == "x"
    assert q.stats().pending == 1
    task = q.claim(timeout=0)
    assert task.payload == b"first"
    assert q.put(b"third", id="x") == "x"
    task.nack()  # its last attempt: dead
    assert q.put(b"fourth", id="x") == "x"
    s = q.stats()
    assert (s.pending, s.claimed, s.dead) == (0, 0, 1)
    assert q.delete_dead("x") is True
    q.put(b"new", id="x")
    with q.claim(timeout=0) as t:
        assert t.payload == b"new"
    assert q.put(b"p") != q.put(b"p")  # no id: each its own item


# covers: QUEUE-ACK-001
def test_the_with_block_acks_or_nacks_and_writes_are_fenced(client, etcd, prefix):
    q = client.queue(f"{prefix}/q", ttl=10)
    q.put(b"img-17", id="img-17")
    with q.claim(timeout=5.0) as task:
        assert (task.id, task.payload, task.attempts, task.priority) == ("img-17", b"img-17", 1, 0)
        assert task.fencing_token > 0 and task.is_held()
        client.put(f"{prefix}/results/img-17", b"ok", if_held=task)
    assert not task.is_held()
    assert client.get(f"{prefix}/results/img-17") == b"ok"
    assert q.stats().pending == 0
    with pytest.raises(etcdlock.NotHeld):
        client.put(f"{prefix}/results/late", b"x", if_held=task)
    # An exception nacks, and propagates.
    q.put(b"boom", id="boom")
    with pytest.raises(RuntimeError):
        with q.claim(timeout=5.0) as task:
            raise RuntimeError("handler failed")
    again = q.claim(timeout=5.0)
    assert (again.id, again.attempts) == ("boom", 2)
    # The claim is lost (its lease revoked): the ack and its own write fail together.
    lease = json.loads(etcd.ctl("get", "--prefix", f"{prefix}/q/claim/", "-w", "json"))["kvs"][0]["lease"]
    etcd.ctl("lease", "revoke", format(lease, "x"))
    with pytest.raises(etcdlock.NotHeld):
        again.ack(puts={f"{prefix}/results/boom": b"late"})
    assert client.get(f"{prefix}/results/boom") is None
    with q.claim(timeout=5.0) as last:
        assert last.attempts == 3 and last.fencing_token > again.fencing_token
        last.ack(puts={f"{prefix}/results/boom": b"ok"}, deletes=[f"{prefix}/results/img-17"])
    assert client.get(f"{prefix}/results/boom") == b"ok"
    assert client.get(f"{prefix}/results/img-17") is None
    assert etcd.keys(f"{prefix}/q/") == []


# covers: QUEUE-DELAY-001
def test_a_delayed_item_waits_for_its_delay(client, prefix):
    q = client.queue(f"{prefix}/q", ttl=10)
    start = time.monotonic()
    q.put(b"later", id="later", delay=2.0)
    q.put(b"now", id="now")
    s = q.stats()
    assert (s.pending, s.delayed) == (1, 1)
    task = q.claim(timeout=0)
    assert task.id == "now"
    task.nack(delay=3.0)
    nacked = time.monotonic()
    with pytest.raises(etcdlock.WouldBlock):
        q.claim(timeout=0)
    with q.claim(timeout=10.0) as t:
        assert t.id == "later" and time.monotonic() - start >= 2.0
    with q.claim(timeout=10.0) as t:
        assert (t.id, t.attempts) == ("now", 2) and time.monotonic() - nacked >= 3.0


# covers: QUEUE-DEAD-001
def test_dead_letters_after_the_last_attempt(client, etcd, prefix):
    q = client.queue(f"{prefix}/q", ttl=10, max_attempts=2)
    q.put(b"p", id="p", priority=3)
    q.claim(timeout=0).nack()
    q.claim(timeout=0).nack()
    with pytest.raises(etcdlock.WouldBlock):
        q.claim(timeout=0)
    assert q.dead() == [etcdlock.DeadTask(id="p", payload=b"p", attempts=2, priority=3)]
    assert q.requeue_dead("p") is True
    assert q.requeue_dead("p") is False
    with q.claim(timeout=0) as t:
        assert (t.id, t.attempts, t.priority) == ("p", 1, 3)
    assert etcd.keys(f"{prefix}/q/") == []


# covers: QUEUE-INPUT-001
def test_bad_input_is_refused_with_nothing_written(client, etcd, prefix):
    name = f"{prefix}/q"
    for bad in [dict(name=""), dict(name=f"{name}/"), dict(name=name, ttl=0), dict(name=name, max_attempts=0)]:
        with pytest.raises(ValueError):
            client.queue(**{"name": name, **bad})
    with pytest.raises(TypeError):
        client.queue(name, max_attempts="5")
    q = client.queue(name)
    for kwargs in [dict(payload=b"x" * (1536 * 1024)), dict(payload=b"x", id=""), dict(payload=b"x", id="a\nb"), dict(payload=b"x", delay=-1)]:
        with pytest.raises(ValueError):
            q.put(**kwargs)
    with pytest.raises(TypeError):
        q.put(b"x", priority="high")
    with pytest.raises(TypeError):
        q.put(b"x", id=7)
    with pytest.raises(ValueError):
        q.claim(timeout=-1)
    assert etcd.keys(name) == []


# covers: QUEUE-ORDER-001
def test_asyncio_uses_the_same_names(etcd, prefix):
    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            q = client.queue(f"{prefix}/aq", ttl=10)
            await q.put(b"1", id="one")
            await q.put(b"2", id="two", priority=1)
            async with q.claim(timeout=5.0) as task:
                assert task.id == "two"
                await client.put(f"{prefix}/aresult", b"ok", if_held=task)
            task = await q.claim(timeout=5.0)
            assert task.id == "one"
            await task.nack(delay=1.0)
            seen = []
            async for t in q.tasks(timeout=5.0):
                seen.append((t.id, t.attempts))
                await t.ack()
            assert seen == [("one", 2)]
            assert (await q.stats()).pending == 0
            # A cancelled claim leaves nothing behind.
            waiter = asyncio.ensure_future(q.claim())
            await asyncio.sleep(0.3)
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
        assert etcd.keys(f"{prefix}/aq/") == []

    asyncio.run(asyncio.wait_for(main(), 30))


WORKER = textwrap.dedent(
    """
    import sys, time, etcdlock
    endpoints, name, ttl = sys.argv[1], sys.argv[2], int(sys.argv[3])
    client = etcdlock.Client(endpoints)
    q = client.queue(name, ttl=ttl)
    task = q.claim(timeout=10.0)
    print("claimed", task.id, task.attempts, flush=True)
    sys.stdin.readline()  # until told to go on
    try:
        task.ack(puts={name + "-result": b"first"})
        print("acked", flush=True)
    except etcdlock.NotHeld:
        print("not held", flush=True)
    """
)


def start_worker(etcd, name, ttl):
    p = subprocess.Popen([PY, "-c", WORKER, etcd.endpoints, name, str(ttl)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("claimed"), line
    return p


# covers: QUEUE-MAXPROC-001
def test_a_claim_past_max_processing_ends(client, prefix):
    q = client.queue(f"{prefix}/q", ttl=10, max_processing=1.0)
    q.put(b"hung", id="hung")
    task = q.claim(timeout=0)
    lost = threading.Event()
    task.on_lost(lambda reason: lost.set())
    assert lost.wait(5), "the claim outlived max_processing"
    with q.claim(timeout=5.0) as again:
        assert (again.id, again.attempts) == ("hung", 2)
    with pytest.raises(etcdlock.NotHeld):
        task.ack()
    with pytest.raises(ValueError):
        client.queue(f"{prefix}/q", max_processing=0)


# covers: QUEUE-KILL-001
def test_a_worker_killed_mid_task_loses_it_to_another_within_ttl(client, etcd, prefix):
    name = f"{prefix}/q"
    q = client.queue(name, ttl=2)
    q.put(b"job", id="job")
    worker = start_worker(etcd, name, 2)
    worker.kill()
    worker.wait(10)
    killed = time.monotonic()
    with q.claim(timeout=10.0) as task:
        took = time.monotonic() - killed
        assert (task.id, task.attempts) == ("job", 2)
        assert took < 2 + 1.5, f"claimed again after {took:.1f} s"


# covers: QUEUE-STOP-001
def test_a_worker_frozen_past_its_ttl_cannot_ack_and_the_others_result_stands(client, etcd, prefix):
    name = f"{prefix}/q"
    q = client.queue(name, ttl=2)
    q.put(b"job", id="job")
    worker = start_worker(etcd, name, 2)
    os.kill(worker.pid, signal.SIGSTOP)
    try:
        with q.claim(timeout=10.0) as task:
            assert task.attempts == 2
            task.ack(puts={name + "-result": b"second"})
    finally:
        os.kill(worker.pid, signal.SIGCONT)
    out, _ = worker.communicate("go\n", timeout=20)
    assert out.strip() == "not held"
    assert client.get(name + "-result") == b"second"


# covers: ONCE-SLOT-001
def test_once_per_period_runs_one_trigger_per_period(etcd, prefix):
    name = f"{prefix}/daily"
    t = 3600.0 * 500_000
    clients = [etcdlock.Client(etcd.endpoints) for _ in range(3)]
    try:
        won = []
        barrier = threading.Barrier(3)

        def trigger(c, offset):
            barrier.wait(5)
            with c.once(name, every=3600.0, at=t + offset) as slot:
                won.append(slot)

        threads = [threading.Thread(target=trigger, args=(c, off)) for c, off in zip(clients, (-29 * 60, 0, 29 * 60))]
        for th in threads:
            th.start()
        for th in threads:
            th.join(15)
        assert sum(s is not None for s in won) == 1, won
        assert next(s for s in won if s).slot == 500_000
        with clients[0].once(name, every=3600.0, at=t + 60) as slot:
            assert slot is None  # done for this period
        with clients[1].once(name, every=3600.0, at=t + 3600) as slot:
            assert slot is not None and slot.slot == 500_001
    finally:
        for c in clients:
            c.close()


# covers: ONCE-RETRY-001
def test_a_failed_or_lost_once_job_runs_at_the_next_trigger(client, etcd, prefix):
    name = f"{prefix}/job"
    with pytest.raises(RuntimeError):
        with client.once(name, every=3600.0, ttl=2) as slot:
            assert slot is not None
            raise RuntimeError("the job failed")
    slot = client.once(name, every=3600.0, ttl=2).claim()
    assert slot is not None and slot.is_held()
    lease = json.loads(etcd.ctl("get", "--prefix", f"{name}/slot/", "-w", "json"))["kvs"][0]["lease"]
    etcd.ctl("lease", "revoke", format(lease, "x"))
    again = client.once(name, every=3600.0, ttl=2).claim()
    assert again is not None, "a lost winner's job did not run again"
    with pytest.raises(etcdlock.NotHeld):
        slot.done()
    again.done()
    assert client.once(name, every=3600.0).claim() is None

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as ac:
            async with ac.once(name, every=3600.0) as s:
                assert s is None
            async with ac.once(f"{name}-2", every=3600.0) as s:
                assert s is not None and s.fencing_token > 0

    asyncio.run(asyncio.wait_for(main(), 20))


# covers: ONCE-FENCE-001
def test_a_once_slot_fences_the_jobs_writes(client, etcd, prefix):
    name = f"{prefix}/fenced"
    slot = client.once(name, every=3600.0, ttl=2).claim()
    assert slot is not None
    assert client.put(f"{prefix}/result", b"first", if_held=slot) > slot.fencing_token
    with pytest.raises(ValueError):
        client.put(f"{name}/done/{slot.slot}", b"done", if_held=slot)  # the job's own keys
    lease = json.loads(etcd.ctl("get", "--prefix", f"{name}/slot/", "-w", "json"))["kvs"][0]["lease"]
    etcd.ctl("lease", "revoke", format(lease, "x"))
    again = client.once(name, every=3600.0, ttl=2).claim()
    assert again is not None
    client.put(f"{prefix}/result", b"second", if_held=again)
    with pytest.raises(etcdlock.NotHeld):
        client.put(f"{prefix}/result", b"late", if_held=slot)
    assert client.get(f"{prefix}/result") == b"second"

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as ac:
            async with ac.once(f"{name}-2", every=3600.0) as s:
                assert s is not None
                await ac.put(f"{prefix}/result-2", b"ok", if_held=s)
    asyncio.run(asyncio.wait_for(main(), 20))
    assert client.get(f"{prefix}/result-2") == b"ok"
    again.done()


# covers: ONCE-INPUT-001
def test_once_options_are_checked(client, etcd, prefix):
    for kwargs in [dict(name=""), dict(every=0.5), dict(keep_periods=1), dict(ttl=0), dict(at=-1.0)]:
        args = {"name": f"{prefix}/j", "every": 60.0, **kwargs}
        with pytest.raises(ValueError):
            name, every = args.pop("name"), args.pop("every")
            client.once(name, every, **args).claim()
    with pytest.raises(TypeError):
        client.once(f"{prefix}/j", "hourly")
    assert etcd.keys(f"{prefix}/j") == []
