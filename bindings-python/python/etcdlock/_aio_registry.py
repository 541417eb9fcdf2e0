"""The service registry (asyncio API); see ``_registry`` for the blocking one."""

from collections import deque
from typing import Any, AsyncIterator, Deque, Generator, Optional

from . import _args, _native, _trace
from ._aio import _run, _run_cancellable
from ._common import Instances, instances
from ._ports import loop_port
from ._registry import RegistrationCallbacks, RegistrationView


class AsyncRegistration(RegistrationView):
    """An instance kept registered (see ``Registration``); callbacks run on the event loop
    (coroutine functions too)."""

    def __init__(self, native: "_native.Registration") -> None:
        self._n = native
        loop = loop_port()
        self._callbacks = RegistrationCallbacks(native, lambda: loop)

    async def update(self, value: _args.BytesLike) -> int:
        """Replaces the registered value (see ``Registration.update``); returns the write's
        revision."""
        revision: int = await _run(self._n.update(_args.to_bytes(value, "value")))
        return revision

    async def close(self) -> None:
        """Deregisters: the key deleted and the lease revoked when this returns (see
        ``Registration.close``). Idempotent."""
        await _run(self._n.close())

    async def __aenter__(self) -> "AsyncRegistration":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class _Registering:
    """``await client.register(...)``, or ``async with client.register(...) as reg``
    (deregisters on exit)."""

    def __init__(self, op: Any, key: bytes) -> None:
        self._op = op
        self._key = key  # <service>/<instance>, for the span
        self._reg: Optional[AsyncRegistration] = None

    async def _register(self) -> AsyncRegistration:
        async def run() -> AsyncRegistration:
            return AsyncRegistration(await _run_cancellable(self._op))

        self._reg = await _trace.traced_async("etcdlock.register", self._key, False, run, _trace.registered)
        return self._reg

    def __await__(self) -> Generator[Any, None, AsyncRegistration]:
        return self._register().__await__()

    async def __aenter__(self) -> AsyncRegistration:
        return await self._register()

    async def __aexit__(self, *exc: Any) -> None:
        if self._reg is not None:
            await self._reg.close()


class AsyncDiscovery:
    """``async for snapshot in client.discover("svc"):`` — an ``Instances`` per change."""

    def __init__(self, native: "_native.Discovery") -> None:
        self._n = native
        # Sets whose __anext__ was cancelled after they arrived: delivered next.
        self._kept: Deque[Any] = deque()

    def __aiter__(self) -> AsyncIterator[Instances]:
        return self

    async def __anext__(self) -> Instances:
        what, raw = self._kept.popleft() if self._kept else await _run_cancellable(self._n.next(), self._kept.append)
        if what == "end":
            raise StopAsyncIteration
        return instances(raw)

    def close(self) -> None:
        """Stops watching the service (also from another thread or task: a waiting iteration
        ends)."""
        self._n.close()

    async def aclose(self) -> None:
        """``close()``, awaitable."""
        self.close()

    async def __aenter__(self) -> "AsyncDiscovery":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()
