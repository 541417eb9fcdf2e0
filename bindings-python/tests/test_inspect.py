"""Queue inspection (``client.inspect``) and the value an acquire attaches (``lock(value=)``)."""

import asyncio
import base64
import json
import threading

import pytest

import etcdlock


def etcdctl_queue(etcd, prefix):
    """(create revision, lease, value) of each key under ``prefix``, oldest first, as etcdctl shows them."""
    out = json.loads(etcd.ctl("get", "--prefix", "--sort-by=CREATE", "--order=ASCEND", "-w", "json", prefix))
    return [(kv["create_revision"], kv["lease"], base64.b64decode(kv.get("value", ""))) for kv in out.get("kvs") or []]


# covers: LOCK-INSPECT-001
def test_inspect_shows_the_holder_and_waiters_as_etcdctl_does(etcd, prefix):
    name = f"{prefix}/jobs"
    with etcdlock.Client(etcd.endpoints) as a, etcdlock.Client(etcd.endpoints) as b:
        state = a.inspect(name)
        assert state.holder is None and state.waiters == []
        holder = a.lock(name, ttl=10, value="host-a pid 1")
        assert holder.acquire()
        tokens = {}

        def wait(i, client, value):
            with client.lock(name, ttl=10, value=value) as lock:
                tokens[i] = lock.fencing_token

        threads = []
        for i, (c, v) in enumerate([(b, b"host-b pid 2"), (a, "host-a pid 3"), (b, None)]):
            threads.append(threading.Thread(target=wait, args=(i, c, v)))
            threads[-1].start()
            etcd.wait_until(lambda: len(etcd.keys(name + "/")) == i + 2, what=f"waiter {i} queued")

        state = b.inspect(name)
        assert isinstance(state, etcdlock.LockState) and isinstance(state.holder, etcdlock.QueueEntry)
        entries = [state.holder] + state.waiters
        assert [(e.fencing_token, e.lease, e.value) for e in entries] == etcdctl_queue(etcd, name + "/")
        assert [e.value for e in entries] == [b"host-a pid 1", b"host-b pid 2", b"host-a pid 3", b""]
        assert state.holder.key == holder.key and state.holder.fencing_token == holder.fencing_token
        assert all(0 < e.ttl <= 10 for e in entries)
        assert state.revision >= entries[-1].fencing_token

        holder.release()
        for t in threads:
            t.join(20)
        assert [tokens[i] for i in range(3)] == [e.fencing_token for e in state.waiters]
        assert a.inspect(name).holder is None


# covers: LOCK-INSPECT-001
def test_async_inspect(etcd, prefix):
    name = f"{prefix}/async"

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as c:
            async with c.lock(name, ttl=10, value=b"me") as lock:
                state = await c.inspect(name)
                assert state.holder.value == b"me" and state.holder.fencing_token == lock.fencing_token
                assert state.waiters == []

    asyncio.run(main())


# covers: LOCK-VALUE-001
def test_bad_value_or_name_is_refused_before_anything_is_sent(client, etcd, prefix):
    name = f"{prefix}/big"
    with pytest.raises(ValueError, match="at most 4096 bytes"):
        client.lock(name, ttl=10, value=b"x" * 4097)
    with pytest.raises(TypeError):
        client.lock(name, ttl=10, value=42)
    assert etcd.keys(name + "/") == []
    with client.lock(name, ttl=10, value=b"y" * 4096):
        assert client.inspect(name).holder.value == b"y" * 4096
    for bad in ["", "jobs/"]:
        with pytest.raises(ValueError):
            client.inspect(bad)


# covers: LOCK-INSPECT-002
def test_inspect_shows_every_holder_of_a_semaphore_a_rwlock_and_an_election(etcd, client, prefix):
    view = lambda entries: [(e.mode, e.value) for e in entries]
    with client.semaphore(f"{prefix}/slots", permits=2, value="one"), client.semaphore(f"{prefix}/slots", permits=2, value="two"):
        third = client.semaphore(f"{prefix}/slots", permits=2, value="three")
        t = threading.Thread(target=lambda: (third.acquire(timeout=10), third.release()))
        t.start()
        etcd.wait_until(lambda: len(etcd.keys(f"{prefix}/slots/")) == 3, what="the third queued")
        state = client.inspect(f"{prefix}/slots")
        assert view(state.holders) == [("permits=2", b"one"), ("permits=2", b"two")]
        assert view(state.waiters) == [("permits=2", b"three")]
        assert state.holder == state.holders[0]
    t.join(10)

    rw = client.rwlock(f"{prefix}/cfg")
    with rw.read(), rw.read():
        writer = rw.write()
        t = threading.Thread(target=lambda: (writer.acquire(timeout=10), writer.release()))
        t.start()
        etcd.wait_until(lambda: len(etcd.keys(f"{prefix}/cfg/")) == 3, what="the writer queued")
        state = client.inspect(f"{prefix}/cfg")
        assert [e.mode for e in state.holders] == ["read", "read"] and [e.mode for e in state.waiters] == ["write"]
    t.join(10)

    election = client.election(f"{prefix}/svc")
    with election.campaign("node-1", timeout=5.0):
        state = client.inspect(f"{prefix}/svc")
        assert view(state.holders) == [("", b"node-1")] and state.waiters == []
    assert client.inspect(f"{prefix}/svc").holders == []
