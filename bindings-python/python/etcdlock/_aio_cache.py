"""The prefix cache (asyncio API); see ``_cache`` for the blocking one and the shared types."""

from collections import deque
from typing import Any, AsyncIterator, Deque, Generator, Optional

from . import _native
from ._aio import _run_cancellable
from ._cache import CacheEvent, CacheView, _revision, _timeout


class AsyncCache(CacheView):
    """A local copy of a prefix kept in step with etcd (see ``Cache``): the same reads (no I/O,
    not awaited), ``await wait_for(...)``, ``async for ev in cache.events()``; ``async with``
    closes it."""

    def __init__(self, native: "_native.Cache") -> None:
        self._n = native

    async def wait_for(self, revision: int, timeout: Optional[float] = None) -> None:
        """Like ``Cache.wait_for``. Cancelling the awaiting task stops the wait."""
        r, t = _revision(revision), _timeout(timeout)
        await _run_cancellable(self._n.wait_for(r, t))

    def events(self) -> "AsyncCacheEvents":
        """``async for ev in cache.events():`` — the copy's changes from now on (see
        ``Cache.events``)."""
        return AsyncCacheEvents(self._n.events(), self)

    def close(self) -> None:
        """Stops following etcd (idempotent): reads raise ``Closed``, event iterations end."""
        self._n.close()

    async def aclose(self) -> None:
        """``close()``, awaitable."""
        self.close()

    async def __aenter__(self) -> "AsyncCache":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class AsyncCacheEvents:
    """An async iterator of ``CacheEvent``; ``close()`` (or ``await aclose()``) ends it."""

    def __init__(self, native: "_native.CacheEvents", cache: CacheView) -> None:
        self._n = native
        self._cache = cache  # kept alive while iterated
        # Events whose __anext__ was cancelled after the event arrived: delivered next.
        self._kept: Deque[Any] = deque()

    def __aiter__(self) -> AsyncIterator[CacheEvent]:
        return self

    async def __anext__(self) -> CacheEvent:
        t = self._kept.popleft() if self._kept else await _run_cancellable(self._n.next(), self._keep)
        if t is None:
            raise StopAsyncIteration
        return CacheEvent(*t)

    def _keep(self, t: Any) -> None:
        if t is not None:
            self._kept.append(t)

    def close(self) -> None:
        """Ends the iteration (also from another thread or task)."""
        self._n.close()

    async def aclose(self) -> None:
        """``close()``, awaitable."""
        self.close()

    async def __aenter__(self) -> "AsyncCacheEvents":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class _Loading:
    """``cache = await client.cache(prefix)``, or ``async with client.cache(prefix) as cache``
    (closed on exit)."""

    def __init__(self, op: Any) -> None:
        self._op = op
        self._cache: Optional[AsyncCache] = None

    async def _load(self) -> AsyncCache:
        op, self._op = self._op, None
        if op is None:
            raise RuntimeError("client.cache(...) can be awaited once")
        self._cache = AsyncCache(await _run_cancellable(op))
        return self._cache

    def __await__(self) -> Generator[Any, None, AsyncCache]:
        return self._load().__await__()

    async def __aenter__(self) -> AsyncCache:
        return await self._load()

    async def __aexit__(self, *exc: object) -> None:
        if self._cache is not None:
            self._cache.close()
