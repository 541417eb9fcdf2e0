"""An acquire cancelled while its enqueue is held in the network leaves no key: the enqueue's
body reaches etcd after everything the client sent when it gave up, while another lock of the
client's keeps its lease alive, and still no ghost key blocks the lock. Both of Python's ways to
cancel an acquire: cancelling the asyncio task awaiting ``AsyncLock.acquire()``, and a signal
handler that raises during a blocking ``Lock.acquire()`` on the main thread (how Ctrl-C's
KeyboardInterrupt cancels it; SIGUSR1 here, so that pytest's own SIGINT handling stays out).
(On the core of 4692150^, which sent no deadline with its requests, the late enqueue landed and
its key stayed until the client deleted it again a request timeout later.) The proxy that holds
the enqueue's body is netfakes.HoldProxy (its docstring says why it must parse HTTP/2)."""

import asyncio
import signal
import threading
import time

import pytest

import etcdlock
from netfakes import HoldProxy

REQUEST_TIMEOUT = 5.0  # the clients' timeout (the default): bounds the wait for the enqueue


@pytest.fixture
def proxy(etcd):
    with HoldProxy(etcd.cluster.members[0].client_port) as p:
        yield p


def no_key_within(etcd, name: str, other_lease: int, timeout: float) -> None:
    """No key under ``name/`` within ``timeout`` s; else says which are left (a ghost carries
    the lease of the waiter's other lock in its name)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = etcd.keys(f"{name}/")
        if not left:
            return
        time.sleep(0.02)
    pytest.fail(f"keys left under the lock name after {timeout} s: {left} (the waiter's lease: {other_lease:x})")


class Cancelled(Exception):
    """Raised by the test's signal handler inside a blocking acquire."""


# covers: LOCK-GHOST-002
def test_async_cancel_while_enqueue_delayed_leaves_no_key(etcd, proxy, prefix):
    name = f"{prefix}/ghost-job"

    async def main():
        clients = []

        async def connect(endpoints):
            c = etcdlock.AsyncClient(endpoints, timeout=REQUEST_TIMEOUT)
            clients.append(c)
            await c.connect()
            return c

        try:
            holder = await connect(etcd.endpoints)
            held = holder.lock(name, ttl=10)
            assert await held.acquire(timeout=5)
            waiter = await connect(proxy.endpoint)
            # A wait that times out first: the waiter's client now has its lease for TTL 10, and
            # knows the queue is busy, so its next enqueue is the one request that writes its key.
            assert await waiter.lock(name, ttl=10).acquire(timeout=0.3) is False
            etcd.wait_until(lambda: len(etcd.keys(f"{name}/")) == 1, 5, "the timed-out waiter's key deleted")
            # Another lock of the waiter's on the same TTL keeps its lease in use throughout, so
            # the late enqueue would find that lease alive.
            other = waiter.lock(f"{name}-other", ttl=10)
            assert await other.acquire(timeout=5)

            # The enqueue's body is held by the proxy (etcd has its headers and waits) ...
            proxy.hold(f"{name}/".encode())
            task = asyncio.ensure_future(waiter.lock(name, ttl=10).acquire())
            deadline = time.monotonic() + 5
            while not proxy.holding and time.monotonic() < deadline and not task.done():
                await asyncio.sleep(0.01)
            assert proxy.holding, "the enqueue was not held by the proxy"
            # ... the caller gives up; the acquire ends once its enqueue's outcome is known (here
            # when the request times out) and cleans up before CancelledError propagates ...
            cancelled = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, REQUEST_TIMEOUT + 5)
            took = time.monotonic() - cancelled
            assert took < REQUEST_TIMEOUT + 2, f"the cancel took {took:.2f} s (request timeout {REQUEST_TIMEOUT} s)"
            await asyncio.sleep(0.3)
            # ... then the enqueue's body arrives, after all of that, and its cancel never does.
            assert proxy.release() > 0
            await asyncio.sleep(0.2)
            await held.release()

            # No key under the name, within a bound well under the request timeout, and the
            # lock is free at once for anyone.
            no_key_within(etcd, name, other.lease_id, 2)
            third = await connect(etcd.endpoints)
            free = third.lock(name, ttl=10)
            assert await free.acquire(blocking=False), "the lock is not free after the holder released"
            await free.release()
            # The waiter's client goes on locking, and its other lock was never disturbed.
            again = waiter.lock(name, ttl=10)
            assert await again.acquire(timeout=5)
            await again.release()
            assert other.is_held(), f"the other lock was lost: {other.lost_reason}"
            await other.release()
        finally:
            for c in clients:
                await c.close()
        assert etcd.keys(name) == []

    asyncio.run(asyncio.wait_for(main(), 60))


# covers: LOCK-GHOST-002
def test_signal_interrupting_blocking_acquire_while_enqueue_delayed_leaves_no_key(etcd, proxy, prefix):
    assert threading.current_thread() is threading.main_thread(), "signals reach the main thread only"
    name = f"{prefix}/ghost-sync"
    with etcdlock.Client(etcd.endpoints, timeout=REQUEST_TIMEOUT) as holder, etcdlock.Client(
        proxy.endpoint, timeout=REQUEST_TIMEOUT
    ) as waiter:
        held = holder.lock(name, ttl=10)
        assert held.acquire(timeout=5)
        assert waiter.lock(name, ttl=10).acquire(timeout=0.3) is False
        etcd.wait_until(lambda: len(etcd.keys(f"{name}/")) == 1, 5, "the timed-out waiter's key deleted")
        other = waiter.lock(f"{name}-other", ttl=10)
        assert other.acquire(timeout=5)

        def interrupt(signum, frame):
            raise Cancelled()

        sent = []

        def send_when_held():
            # Bounded: gives up after 5 s (the acquire then times out below instead).
            if proxy.wait_holding(5):
                sent.append(time.monotonic())
                signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)

        previous = signal.signal(signal.SIGUSR1, interrupt)
        sender = threading.Thread(target=send_when_held, daemon=True)
        try:
            proxy.hold(f"{name}/".encode())
            sender.start()
            try:
                waiting = waiter.lock(name, ttl=10)
                got = waiting.acquire(timeout=15)
                pytest.fail(f"the acquire was not interrupted (returned {got})")
            except Cancelled:
                pass
        finally:
            sender.join(10)
            signal.signal(signal.SIGUSR1, previous)
        assert sent, "the enqueue was not held by the proxy"
        took = time.monotonic() - sent[0]
        assert took < REQUEST_TIMEOUT + 2, f"the interrupt took {took:.2f} s (request timeout {REQUEST_TIMEOUT} s)"
        assert not waiting.is_held()
        time.sleep(0.3)
        assert proxy.release() > 0
        time.sleep(0.2)
        held.release()

        no_key_within(etcd, name, other.lease_id, 2)
        with etcdlock.Client(etcd.endpoints) as third:
            free = third.lock(name, ttl=10)
            assert free.acquire(blocking=False), "the lock is not free after the holder released"
            free.release()
        again = waiter.lock(name, ttl=10)
        assert again.acquire(timeout=5)
        again.release()
        assert other.is_held(), f"the other lock was lost: {other.lost_reason}"
        other.release()
    assert etcd.keys(name) == []
