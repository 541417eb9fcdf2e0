"""A watch whose stream is reset after the call and before etcd confirmed it (WATCH-CREATED-001).

The client goes through netfakes.HoldProxy, which holds back the body of the request carrying
the key (the WatchCreateRequest on the Watch stream: its headers went through, etcd has the
stream open but never learns of the watch, so no Created answer can come), then resets that
stream: RST_STREAM to the client and to etcd. ``watch()`` must return only once etcd confirmed
the watch (on a new stream), so that a change made right after it returned is delivered.
(On the core of ae7f918^, watch() returned as soon as the stream broke, unconfirmed, and the
watch resumed from "now" on the first read: the puts made in between were missed; seen with the
Node twin, test/watch-created.test.js, built from that tree.)
The bindings do not expose the watch's start revision; the events' revisions are checked."""

import asyncio
import threading
import time

import pytest

import etcdlock
from netfakes import HoldProxy

N = 3  # puts made right after watch() returned


@pytest.fixture
def proxy(etcd):
    with HoldProxy(etcd.cluster.members[0].client_port) as p:
        yield p


def _put_all(direct: etcdlock.Client, key: str) -> list:
    """Puts ``key``0..N-1 (on a client that does not go through the proxy); what a watch of
    ``key`` should deliver, in order."""
    return [("put", f"{key}{i}".encode(), str(i).encode(), direct.put(f"{key}{i}", str(i))) for i in range(N)]


def _next(w: etcdlock.Watch, seconds: float = 5) -> tuple:
    """The next event of ``w`` as a tuple; the watch is closed (and this fails) after ``seconds``."""
    timer = threading.Timer(seconds, w.close)
    timer.start()
    try:
        return tuple(next(w))
    except StopIteration:
        pytest.fail(f"no event within {seconds} s (missed)")
    finally:
        timer.cancel()


# covers: WATCH-CREATED-001
def test_a_watch_whose_stream_is_reset_before_etcd_confirms_it_misses_nothing(etcd, proxy, prefix):
    key = f"{prefix}/created/"
    with etcdlock.Client(proxy.endpoint, timeout=5) as c, etcdlock.Client(etcd.endpoints, timeout=5) as direct:
        proxy.hold(key.encode())
        result: list = []

        def watch() -> None:
            try:
                result.append(c.watch(key, prefix=True))
            except BaseException as e:  # reported below
                result.append(e)

        t = threading.Thread(target=watch, name="watch-call", daemon=True)
        t.start()
        assert proxy.wait_holding(5), "the watch's create request was not held by the proxy"
        assert result == [], f"watch() returned before etcd confirmed the watch: {result}"
        assert proxy.reset_held() != 0
        t.join(15)  # bounded: the client's timeout is 5 s
        assert not t.is_alive(), "watch() did not return after the stream was reset"
        w = result[0]
        assert isinstance(w, etcdlock.Watch), f"watch() failed: {w!r}"
        try:
            expected = _put_all(direct, key)
            assert [_next(w) for _ in range(N)] == expected
        finally:
            w.close()


# covers: WATCH-CREATED-001
def test_async_a_watch_whose_stream_is_reset_before_etcd_confirms_it_misses_nothing(etcd, proxy, prefix):
    key = f"{prefix}/created-async/"

    async def main() -> None:
        async with etcdlock.AsyncClient(proxy.endpoint, timeout=5) as c, etcdlock.AsyncClient(
            etcd.endpoints, timeout=5
        ) as direct:
            w = c.watch(key, prefix=True)
            proxy.hold(key.encode())
            starting = asyncio.ensure_future(w.start())
            deadline = time.monotonic() + 5
            while not proxy.holding and not starting.done() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            assert proxy.holding, "the watch's create request was not held by the proxy"
            assert not starting.done(), "start() returned before etcd confirmed the watch"
            assert proxy.reset_held() != 0
            await asyncio.wait_for(starting, 15)  # bounded: the client's timeout is 5 s
            try:
                expected = []
                for i in range(N):
                    expected.append(("put", f"{key}{i}".encode(), str(i).encode(), await direct.put(f"{key}{i}", str(i))))
                got = [tuple(await asyncio.wait_for(w.__anext__(), 5)) for _ in range(N)]
                assert got == expected
            finally:
                w.close()

    asyncio.run(main())
