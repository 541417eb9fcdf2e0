"""No member can stall a client: endpoints [a member that never answers, a good member] connect
within a bounded time and lock at once (default timeouts, 5 s), for both ways a member can be
silent: its kernel accepts connections nobody serves, or its full accept queue drops SYNs.
Sync ``Client`` and ``AsyncClient``; the fakes are in netfakes.py."""

import asyncio
import time

import etcdlock
from netfakes import SilentListener, UnacceptingListener

MAX_CLIENTS = 16
MAX_SECONDS = 60.0
SLOW_CONNECT = 0.5  # a connect this slow started at the silent endpoint


def _good(etcd) -> str:
    return etcd.cluster.endpoints[0]


def _check_run(took: list, etcd, name: str) -> None:
    assert any(t >= SLOW_CONNECT for t in took), f"no client started at the silent endpoint: {took}"
    assert etcd.keys(f"{name}/") == []


def connect_and_lock_sync(bad: str, etcd, name: str) -> list:
    """Connects to ``[bad, good]`` and makes 5 lock cycles, one client after another, until a
    client was slow to connect (so it started at the bad endpoint: each client starts at a
    random one) and at least two are done; at most 16 clients, 60 s. Returns connect times."""
    took = []
    started = time.monotonic()
    for c in range(MAX_CLIENTS):
        if (any(t >= SLOW_CONNECT for t in took) and c >= 2) or time.monotonic() - started > MAX_SECONDS:
            break
        t0 = time.monotonic()
        try:
            client = etcdlock.Client([bad, _good(etcd)])
        except etcdlock.Error as e:
            raise AssertionError(f"client {c}: connect failed after {time.monotonic() - t0:.2f} s: {e!r}") from e
        took.append(time.monotonic() - t0)
        try:
            # Well under the 5 s connect and request timeouts: a silent member may cost one
            # connection attempt, never a whole deadline.
            assert took[-1] < 4.0, f"client {c}: connect took {took[-1]:.2f} s"
            t1 = time.monotonic()
            for i in range(5):
                lock = client.lock(name, ttl=5)
                assert lock.acquire(timeout=4), f"client {c}: lock cycle {i} timed out"
                lock.release()
            assert time.monotonic() - t1 < 4.0, f"client {c}: 5 lock cycles took {time.monotonic() - t1:.2f} s"
        finally:
            client.close()
    _check_run(took, etcd, name)
    return took


async def connect_and_lock_async(bad: str, etcd, name: str) -> list:
    """As connect_and_lock_sync, with AsyncClient (connected by ``await client.connect()``)."""
    took = []
    started = time.monotonic()
    for c in range(MAX_CLIENTS):
        if (any(t >= SLOW_CONNECT for t in took) and c >= 2) or time.monotonic() - started > MAX_SECONDS:
            break
        client = etcdlock.AsyncClient([bad, _good(etcd)])
        t0 = time.monotonic()
        try:
            try:
                await asyncio.wait_for(client.connect(), 10)
            except (etcdlock.Error, asyncio.TimeoutError) as e:
                raise AssertionError(f"client {c}: connect failed after {time.monotonic() - t0:.2f} s: {e!r}") from e
            took.append(time.monotonic() - t0)
            assert took[-1] < 4.0, f"client {c}: connect took {took[-1]:.2f} s"
            t1 = time.monotonic()
            for i in range(5):
                lock = client.lock(name, ttl=5)
                assert await lock.acquire(timeout=4), f"client {c}: lock cycle {i} timed out"
                await lock.release()
            assert time.monotonic() - t1 < 4.0, f"client {c}: 5 lock cycles took {time.monotonic() - t1:.2f} s"
        finally:
            await client.close()
    _check_run(took, etcd, name)
    return took


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, MAX_SECONDS + 30))


# covers: CONN-SILENT-001
def test_silent_accepting_first_endpoint_sync(etcd, prefix):
    with SilentListener() as silent:
        took = connect_and_lock_sync(silent.endpoint, etcd, f"{prefix}/silent-accept")
        assert silent.accepted > 0, "the silent endpoint was never tried"
    print(f"connect times (s): {[round(t, 2) for t in took]}")


# covers: CONN-SILENT-001
def test_silent_accepting_first_endpoint_async(etcd, prefix):
    with SilentListener() as silent:
        took = run(connect_and_lock_async(silent.endpoint, etcd, f"{prefix}/silent-accept-async"))
        assert silent.accepted > 0, "the silent endpoint was never tried"
    print(f"connect times (s): {[round(t, 2) for t in took]}")


# covers: CONN-SILENT-002
def test_syn_dropping_first_endpoint_sync(etcd, prefix):
    with UnacceptingListener() as unaccepting:
        took = connect_and_lock_sync(unaccepting.endpoint, etcd, f"{prefix}/silent-syn")
    print(f"connect times (s): {[round(t, 2) for t in took]}")


# covers: CONN-SILENT-002
def test_syn_dropping_first_endpoint_async(etcd, prefix):
    with UnacceptingListener() as unaccepting:
        took = run(connect_and_lock_async(unaccepting.endpoint, etcd, f"{prefix}/silent-syn-async"))
    print(f"connect times (s): {[round(t, 2) for t in took]}")
