"""The prefix cache (``client.cache``) against a real etcd: its copy is etcd's state at its
revision, ``wait_for`` reads a write back, its events are etcd's history in order; cut off while
the history it needs is compacted, it reads the prefix again and says so; closed (or its client
closed), every call says so. Sync and asyncio."""

import asyncio
import base64
import json
import threading
import time
from typing import Dict, List
from urllib.parse import urlparse

import pytest

import etcdlock
from cutproxy import CutProxy


def etcd_at(etcd, prefix: str, rev: int) -> Dict[bytes, bytes]:
    """etcd's own ``get --prefix --rev=R`` (etcdctl, not the library under test)."""
    out = json.loads(etcd.ctl("get", "--prefix", prefix, "--rev", str(rev), "-w", "json"))
    return {base64.b64decode(kv["key"]): base64.b64decode(kv.get("value", "")) for kv in out.get("kvs") or []}


def take(events: etcdlock.CacheEvents, n: int, seconds: float = 10.0) -> List[etcdlock.CacheEvent]:
    """The next ``n`` events, failing after ``seconds`` (the iterator is closed then)."""
    timer = threading.Timer(seconds, events.close)
    timer.start()
    try:
        got = [ev for _, ev in zip(range(n), events)]
    finally:
        timer.cancel()
    assert len(got) == n, f"{len(got)} of {n} events within {seconds} s: {got}"
    return got


# covers: CACHE-READ-001
def test_a_cache_is_etcds_state_and_reads_its_writes_back_in_order(client, etcd, prefix):
    p = f"{prefix}/cfg/"
    for i in range(30):
        client.put(f"{p}k{i:02}", f"v{i}")
    client.put(f"{prefix}/cfg-outside", "x")
    with client.cache(p) as cache:
        snap = cache.snapshot()
        assert isinstance(snap, etcdlock.CacheSnapshot) and len(snap.entries) == 30 == len(cache)
        assert snap.entries == etcd_at(etcd, p, snap.revision), "the copy is not etcd's state at its revision"
        assert cache.revision == snap.revision and cache.prefix == p.encode()
        assert cache.get(f"{p}k03") == b"v3" and cache.get(f"{p}k03".encode()) == b"v3"
        assert cache.get(f"{p}none") is None and f"{p}k04" in cache
        events = cache.events()
        # Read-your-writes: each write is in the copy once wait_for its revision returns.
        r1 = client.put(f"{p}k01", "new")
        cache.wait_for(r1, timeout=5.0)
        assert cache.get(f"{p}k01") == b"new"
        client.put(f"{prefix}/cfg-outside", "y")  # outside the prefix: no event
        client.delete(f"{p}k02")
        r2 = etcd.revision()
        cache.wait_for(r2, timeout=5.0)
        assert cache.get(f"{p}k02") is None
        r3 = client.put(f"{p}k99", "fresh")
        cache.wait_for(r3)  # no timeout: waits as long as it takes
        assert cache.get(f"{p}k99") == b"fresh"
        got = take(events, 3)
        assert got == [
            etcdlock.CacheEvent("put", f"{p}k01".encode(), b"new", b"v1", r1),
            etcdlock.CacheEvent("delete", f"{p}k02".encode(), b"", b"v2", r2),
            etcdlock.CacheEvent("put", f"{p}k99".encode(), b"fresh", None, r3),
        ]
        cache.wait_for(r1, timeout=0.5)  # already there: at once
        t0 = time.monotonic()
        with pytest.raises(etcdlock.Timeout):
            cache.wait_for(r3 + 1000, timeout=0.3)
        assert time.monotonic() - t0 < 3
        snap = cache.snapshot()
        assert snap.entries == etcd_at(etcd, p, snap.revision) and len(snap.entries) == 30
    assert cache.closed


# covers: CACHE-READ-001
def test_the_asyncio_cache_reads_its_writes_back_and_iterates_its_events(etcd, prefix):
    p = f"{prefix}/acfg/"

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            await client.put(f"{p}a", "1")
            async with client.cache(p) as cache:
                assert isinstance(cache, etcdlock.AsyncCache)
                assert cache.snapshot().entries == {f"{p}a".encode(): b"1"}
                events = cache.events()
                r1 = await client.put(f"{p}a", "2")
                await cache.wait_for(r1, timeout=5.0)
                assert cache.get(f"{p}a") == b"2"
                await client.delete(f"{p}a")
                seen = []
                async for ev in events:
                    seen.append((ev.type, ev.key, ev.value, ev.prev_value))
                    if len(seen) == 2:
                        break
                assert seen == [("put", f"{p}a".encode(), b"2", b"1"), ("delete", f"{p}a".encode(), b"", b"2")]
                # A cancelled wait stops waiting, and the cache goes on.
                waiting = asyncio.ensure_future(cache.wait_for(cache.revision + 1000))
                await asyncio.sleep(0.1)
                waiting.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await waiting
                assert cache.get(f"{p}a") is None
            assert cache.closed
            with pytest.raises(etcdlock.Closed):
                cache.get(f"{p}a")
            other = await client.cache(p)  # awaited instead of `async with`
            assert len(other) == 0
            async with other:
                pass
            assert other.closed

    asyncio.run(asyncio.wait_for(main(), 30))


# covers: CACHE-RESYNC-001
def test_cut_off_while_compacted_a_cache_reads_again_and_delivers_the_differences(client, etcd, prefix):
    p = f"{prefix}/rs/"
    for k in "abc":
        client.put(f"{p}{k}", "1")
    with CutProxy(urlparse(etcd.endpoints.split(",")[0]).port) as proxy, etcdlock.Client(proxy.endpoint) as cut:
        cache = cut.cache(p)
        events = cache.events()
        assert len(cache) == 3
        # Cut off: the cache hears nothing while `a` is deleted and created again, `b` changed,
        # `c` deleted, `d` created, and the history compacted.
        proxy.cut()
        client.delete(f"{p}a")
        client.put(f"{p}a", "2")
        client.put(f"{p}b", "2")
        client.delete(f"{p}c")
        head = client.put(f"{p}d", "1")
        etcd.ctl("compact", str(head))
        proxy.restore()
        cache.wait_for(head, timeout=30.0)
        got = take(events, 6)
        assert [(e.type, e.key.decode()) for e in got] == [
            ("delete", f"{p}a"), ("put", f"{p}a"), ("put", f"{p}b"), ("delete", f"{p}c"), ("put", f"{p}d"), ("resynced", ""),
        ]
        assert got[0].prev_value == b"1" and got[1].prev_value is None and got[2] == etcdlock.CacheEvent("put", f"{p}b".encode(), b"2", b"1", head)
        snap = cache.snapshot()
        assert snap.revision >= head and snap.entries == etcd_at(etcd, p, snap.revision)
        # And it follows on from there.
        rev = client.put(f"{p}e", "1")
        cache.wait_for(rev, timeout=10.0)
        assert take(events, 1)[0] == etcdlock.CacheEvent("put", f"{p}e".encode(), b"1", None, rev)


# covers: CACHE-CLOSE-001
def test_a_closed_cache_or_client_refuses_every_call_and_ends_its_waits(etcd, prefix):
    p = f"{prefix}/cl/"
    c = etcdlock.Client(etcd.endpoints)
    cache = c.cache(p)
    # Closing the cache: reads and waits raise Closed, an iteration in progress ends.
    ended = []
    events = cache.events()
    reader = threading.Thread(target=lambda: ended.append(list(events)))
    reader.start()
    time.sleep(0.2)
    cache.close()
    cache.close()  # idempotent
    reader.join(5)
    assert ended == [[]]
    for call in (lambda: cache.get(f"{p}a"), cache.snapshot, lambda: cache.revision, lambda: len(cache), cache.events,
                 lambda: cache.wait_for(1, timeout=1.0)):
        with pytest.raises(etcdlock.Closed):
            call()
    # Closing the client: a wait in progress raises Closed, an iteration ends, and then every call fails.
    cache = c.cache(p)
    events = cache.events()
    outcome: list = []

    def wait():
        try:
            cache.wait_for(cache.revision + 1000)
        except BaseException as e:  # noqa: BLE001 -- the outcome is what is checked
            outcome.append(e)

    waiter, reader = threading.Thread(target=wait), threading.Thread(target=lambda: ended.append(list(events)))
    waiter.start()
    reader.start()
    time.sleep(0.2)
    c.close()
    waiter.join(5)
    reader.join(5)
    assert [type(e) for e in outcome] == [etcdlock.Closed] and ended == [[], []]
    for call in (lambda: cache.get(f"{p}a"), cache.snapshot, cache.events, lambda: cache.wait_for(1, timeout=1.0), lambda: c.cache(p)):
        with pytest.raises(etcdlock.Closed):
            call()


# covers: CACHE-CLOSE-001
def test_a_cache_checks_its_arguments_before_anything_is_sent(client, prefix):
    for bad in (None, 5, ["x"]):
        with pytest.raises(TypeError, match="prefix must be str or bytes"):
            client.cache(bad)
    with client.cache(f"{prefix}/args/") as cache:
        with pytest.raises(TypeError, match="key must be str or bytes"):
            cache.get(5)
        with pytest.raises(TypeError, match="revision must be an int"):
            cache.wait_for("1")
        with pytest.raises(TypeError, match="revision must be an int"):
            cache.wait_for(True)
        for bad_timeout in (0, -1.0, float("nan"), float("inf")):
            with pytest.raises(ValueError, match="timeout must be a positive"):
                cache.wait_for(1, timeout=bad_timeout)
        with pytest.raises(TypeError, match="timeout must be a number"):
            cache.wait_for(1, timeout="5")

        async def in_a_loop():
            with pytest.raises(etcdlock.WrongContextError):
                cache.wait_for(1, timeout=1.0)
            with pytest.raises(etcdlock.WrongContextError):
                next(cache.events())

        asyncio.run(in_a_loop())
