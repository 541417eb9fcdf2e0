"""Bad arguments raise TypeError / ValueError before anything is sent: no key written, no
lease granted."""

import asyncio

import pytest

import etcdlock


@pytest.fixture
def nothing_sent(etcd, prefix):
    """Asserts that the test changed nothing in etcd: no key under its prefix, no new lease."""
    leases = set(etcd.leases())
    yield
    assert etcd.keys(prefix) == []
    assert set(etcd.leases()) - leases == set()


def _sync_cases(client, prefix):
    lock = client.lock(f"{prefix}/ok", ttl=5)
    k = f"{prefix}/k"
    return [
        # (callable, exception)
        (lambda: client.lock("", ttl=5), ValueError),
        (lambda: client.lock(b"", ttl=5), ValueError),
        (lambda: client.lock(f"{prefix}/trailing/", ttl=5), ValueError),
        (lambda: client.lock(f"{prefix}/nul\0name", ttl=5), ValueError),
        (lambda: client.lock(f"{prefix}/nul\0name".encode(), ttl=5), ValueError),
        (lambda: client.lock(f"{prefix}/n", ttl=0), ValueError),
        (lambda: client.lock(f"{prefix}/n", ttl=-3), ValueError),
        (lambda: client.lock(f"{prefix}/n", ttl=True), TypeError),
        (lambda: client.lock(f"{prefix}/n", ttl=1.5), TypeError),
        (lambda: client.lock(f"{prefix}/n", ttl="10"), TypeError),
        (lambda: client.lock(f"{prefix}/n", ttl=10**12), ValueError),
        (lambda: client.lock(123, ttl=5), TypeError),
        (lambda: client.lock(None, ttl=5), TypeError),
        (lambda: client.lock(f"{prefix}/n", ttl=5, timeout=-2), ValueError),
        (lambda: lock.acquire(timeout=-0.5), ValueError),
        (lambda: lock.acquire(timeout=float("nan")), ValueError),
        (lambda: lock.acquire(timeout="1"), TypeError),
        (lambda: lock.acquire(blocking=False, timeout=1.0), ValueError),
        (lambda: lock.acquire(blocking=1), TypeError),
        (lambda: lock.on_lost("not callable"), TypeError),
        (lambda: client.lease(0), ValueError),
        (lambda: client.lease(-1), ValueError),
        (lambda: client.lease(False), TypeError),
        (lambda: client.lease(2.5), TypeError),
        (lambda: client.put("", "v"), ValueError),
        (lambda: client.put(k, 5), TypeError),
        (lambda: client.put(5, "v"), TypeError),
        (lambda: client.put(k, "v", lease="lease"), TypeError),
        (lambda: client.put(k, "v", if_held="lock"), TypeError),
        (lambda: client.get(""), ValueError),
        (lambda: client.get(None), TypeError),
        (lambda: client.delete(b""), ValueError),
        (lambda: client.watch(""), ValueError),
        (lambda: client.watch(k, start_revision=0), ValueError),
        (lambda: client.watch(k, start_revision=-5), ValueError),
        (lambda: client.watch(k, start_revision=1.0), TypeError),
        (lambda: client.watch(k, prefix="yes"), TypeError),
    ]


# covers: ERR-BADNAME-001, ERR-BADTTL-001, ERR-BADKEY-001, ERR-TYPE-001
def test_sync_bad_inputs(client, prefix, nothing_sent):
    for i, (call, exc) in enumerate(_sync_cases(client, prefix)):
        with pytest.raises(exc):
            call()
            pytest.fail(f"case {i} did not raise")


@pytest.mark.parametrize(
    "args, kwargs, exc",
    [
        (("",), {}, ValueError),
        ((",, ",), {}, ValueError),
        (([],), {}, ValueError),
        ((42,), {}, TypeError),
        (([b"http://127.0.0.1:2379"],), {}, TypeError),
        (("ftp://127.0.0.1:2379",), {}, ValueError),
        (("not a url",), {}, ValueError),
        (("http://",), {}, ValueError),
        (("http://[::1",), {}, ValueError),
        (("http://127.0.0.1:2379/path",), {}, ValueError),
        (("http://127.0.0.1:0",), {}, ValueError),
        (("http://127.0.0.1:2379",), {"timeout": 0}, ValueError),
        (("http://127.0.0.1:2379",), {"timeout": -1}, ValueError),
        (("http://127.0.0.1:2379",), {"timeout": True}, TypeError),
        (("http://127.0.0.1:2379",), {"timeout": "5"}, TypeError),
        (("http://127.0.0.1:2379",), {"user": "u"}, ValueError),
        (("http://127.0.0.1:2379",), {"user": 1, "password": "p"}, TypeError),
    ],
)
# covers: CONN-BADURL-001
def test_client_bad_arguments(args, kwargs, exc):
    with pytest.raises(exc):
        etcdlock.Client(*args, **kwargs)
    with pytest.raises(exc):

        async def make():
            c = etcdlock.AsyncClient(*args, **kwargs)
            await c.connect()

        asyncio.run(make())


def test_async_bad_inputs(etcd, prefix, nothing_sent):
    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            lock = client.lock(f"{prefix}/ok", ttl=5)
            for call, exc in [
                (lambda: client.lock("", ttl=5), ValueError),
                (lambda: client.lock(f"{prefix}/n", ttl=0), ValueError),
                (lambda: client.lock(f"{prefix}/n", ttl=True), TypeError),
                (lambda: client.lock(f"{prefix}/n", ttl=2.0), TypeError),
                (lambda: client.lease(0), ValueError),
                (lambda: client.watch("", prefix=False), ValueError),
                (lambda: lock.on_lost(None), TypeError),
            ]:
                with pytest.raises(exc):
                    call()
            for make, exc in [
                (lambda: lock.acquire(timeout=-1.5), ValueError),
                (lambda: lock.acquire(blocking=False, timeout=2), ValueError),
                (lambda: client.put(f"{prefix}/k", 1), TypeError),
                (lambda: client.put("", "v"), ValueError),
                (lambda: client.get(3), TypeError),
                (lambda: client.put(f"{prefix}/k", "v", if_held=object()), TypeError),
            ]:
                with pytest.raises(exc):
                    await make()

    asyncio.run(main())


# covers: CONN-CLOSED-001
def test_closed_client_changes_nothing(etcd, prefix, nothing_sent):
    client = etcdlock.Client(etcd.endpoints)
    lock = client.lock(f"{prefix}/l", ttl=5)
    client.close()
    for call in (
        lambda: client.put(f"{prefix}/k", "v"),
        lambda: client.get(f"{prefix}/k"),
        lambda: client.delete(f"{prefix}/k"),
        lambda: client.lease(5),
        lambda: client.lock(f"{prefix}/l2", ttl=5),
        lambda: client.watch(f"{prefix}/k"),
        lambda: lock.acquire(),
        lambda: lock.acquire(blocking=False),
    ):
        with pytest.raises(etcdlock.Closed):
            call()
    with pytest.raises(etcdlock.NotHeld):
        lock.release()
    client.close()  # a second close is a no-op
    assert client.closed
    with pytest.raises(etcdlock.Closed):
        client.get(f"{prefix}/k")
