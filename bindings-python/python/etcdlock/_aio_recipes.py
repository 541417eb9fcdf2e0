"""Leader election and a read-write lock (asyncio API); see ``_recipes`` for the blocking one.
A semaphore's permit, a read or a write, and a leadership are ``AsyncLock`` handles."""

from collections import deque
from typing import Any, AsyncIterator, Deque, Generator, Optional

from . import _args, _log, _native
from ._aio import AsyncLock, _run, _run_cancellable
from ._args import BytesLike
from ._common import Leader, leader
from ._errors import LockTimeout


class AsyncLeadership(AsyncLock):
    """Leading an election (see ``Leadership``): ``proclaim``, ``resign``, ``is_leader()``, the
    fencing token, ``on_lost`` and ``if_held=`` writes."""

    _SPANS = ("etcdlock.campaign", "etcdlock.lead")

    def is_leader(self) -> bool:
        """Cheap local check: still leading (not resigned, not known lost)."""
        return self.is_held()

    async def proclaim(self, value: BytesLike) -> int:
        """Replaces the leader's value while still leading; ``NotHeld`` and nothing written
        otherwise. Returns the write's revision."""
        revision: int = await _run(self._n.set_value(_args.to_bytes(value, "value")))
        return revision

    async def resign(self) -> None:
        """Steps down (the next candidate leads); ``NotHeld`` if already resigned or lost."""
        await self.release()

    async def __aenter__(self) -> "AsyncLeadership":
        return self


class _Campaign:
    """``await election.campaign(value)`` or ``async with election.campaign(value) as l``
    (resigns on exit)."""

    def __init__(self, leadership: AsyncLeadership, name: bytes, timeout: Optional[float]) -> None:
        self._l, self._name, self._timeout = leadership, name, timeout

    async def _campaign(self) -> AsyncLeadership:
        if not await self._l.acquire(timeout=self._timeout):
            raise LockTimeout(f"timed out after {self._timeout} s campaigning in election {self._name!r}")
        return self._l

    def __await__(self) -> Generator[Any, None, AsyncLeadership]:
        return self._campaign().__await__()

    async def __aenter__(self) -> AsyncLeadership:
        return await self._campaign()

    async def __aexit__(self, *exc: Any) -> None:
        await self._l.__aexit__(*exc)


class AsyncElection:
    """The asyncio election (see ``Election``)."""

    def __init__(self, native: "_native.Client", name: bytes, ttl: int) -> None:
        self._c, self._name, self._ttl = native, name, ttl

    @property
    def name(self) -> bytes:
        """The election's name (its key prefix in etcd)."""
        return self._name

    def campaign(self, value: BytesLike, *, timeout: Optional[float] = None) -> _Campaign:
        """Waits to lead (see ``Election.campaign``): ``leadership = await
        election.campaign("node-1", timeout=5.0)``, or ``async with`` it. Cancelling the
        awaiting task leaves the queue."""
        _args.acquire_timeout(True, timeout)
        _log.refresh()
        native = self._c.candidate(self._name, self._ttl, _args.to_bytes(value, "value"))
        return _Campaign(AsyncLeadership(native, timeout), self._name, timeout)

    async def leader(self) -> Optional[Leader]:
        """The current leader, or None."""
        return leader(await _run(self._c.leader(self._name, self._ttl)))

    def observe(self) -> "AsyncObserver":
        """An async iterator of leader changes (see ``Election.observe``)."""
        return AsyncObserver(self._c.observe(self._name, self._ttl))


class AsyncObserver:
    """``async for leader in election.observe():`` — ``Leader`` or None per change."""

    def __init__(self, native: "_native.Observer") -> None:
        self._n = native
        # Changes whose __anext__ was cancelled after they arrived: delivered next.
        self._kept: Deque[Any] = deque()

    def __aiter__(self) -> AsyncIterator[Optional[Leader]]:
        return self

    async def __anext__(self) -> Optional[Leader]:
        what, raw = self._kept.popleft() if self._kept else await _run_cancellable(self._n.next(), self._kept.append)
        if what == "end":
            raise StopAsyncIteration
        return leader(raw)

    def close(self) -> None:
        """Ends the iteration (also from another thread or task)."""
        self._n.close()

    async def aclose(self) -> None:
        """``close()``, awaitable."""
        self.close()

    async def __aenter__(self) -> "AsyncObserver":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class AsyncRWLock:
    """The asyncio read-write lock (see ``RWLock``): ``async with rw.read(timeout=5.0):``."""

    def __init__(self, native: "_native.Client", name: bytes, ttl: int) -> None:
        self._c, self._name, self._ttl = native, name, ttl

    @property
    def name(self) -> bytes:
        """The lock's name (its key prefix in etcd)."""
        return self._name

    def read(self, *, timeout: Optional[float] = None, value: Optional[BytesLike] = None) -> AsyncLock:
        """A handle that reads: ``async with rw.read(timeout=5.0):`` (``LockTimeout`` when it
        passes)."""
        return self._handle(False, timeout, value)

    def write(self, *, timeout: Optional[float] = None, value: Optional[BytesLike] = None) -> AsyncLock:
        """A handle that writes: ``async with rw.write(timeout=5.0):``."""
        return self._handle(True, timeout, value)

    def _handle(self, write: bool, timeout: Optional[float], value: Optional[BytesLike]) -> AsyncLock:
        _args.acquire_timeout(True, timeout)
        v = None if value is None else _args.to_bytes(value, "value")
        return AsyncLock(self._c.rwlock(self._name, self._ttl, write, v), timeout)
