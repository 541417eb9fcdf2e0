"""Pools of named slots (asyncio API); see ``_pool`` for the blocking one. Same names,
awaited: ``holding = await pool.acquire(timeout=5.0)`` or ``async with pool.acquire(timeout=5.0)
as holding``."""

from types import TracebackType
from typing import TYPE_CHECKING, Any, Generator, List, Optional, Sequence, Type

from . import _log, _native, _trace
from ._aio import _run, _run_cancellable
from ._errors import LockLost, NotHeld
from ._common import fence
from ._pool import HoldingView, PoolView, SlotInfo, _ids, acquire_args, slot_arg, slot_infos
from ._ports import loop_port

if TYPE_CHECKING:
    from .fencing import Fence


class AsyncPoolHolding(HoldingView):
    """Slots held from a pool (see ``PoolHolding``): ``await holding.release()``; an async
    context manager that releases at the end of the block. ``on_lost`` callbacks run on the
    event loop."""

    def __init__(self, native: "_native.PoolHolding", pool: bytes = b"") -> None:
        super().__init__(native, loop_port)
        self._pool = pool

    async def release(self) -> None:
        """Gives every slot back at once, fenced (see ``PoolHolding.release``)."""
        with self._releasing():
            await _run(self._n.release())

    async def fence(self, slot: str) -> "Fence":
        """Slot ``slot``'s ``etcdlock.fencing.Fence`` (see ``PoolHolding.fence``); ``ValueError``
        for a slot this holding does not hold."""
        return fence(await _run(self._n.fence(slot_arg(slot))))

    async def __aenter__(self) -> "AsyncPoolHolding":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        try:
            await self.release()
        except NotHeld as e:
            if exc_type is None:
                raise LockLost(f"the slots were lost before the end of the async with block ({self.lost_reason})") from e


class _Acquire:
    """``await pool.acquire()`` or ``async with pool.acquire() as holding`` (released on
    exit)."""

    def __init__(self, op: Any, pool: bytes) -> None:
        self._op = op
        self._pool = pool
        self._holding: Optional[AsyncPoolHolding] = None

    async def _acquire(self) -> AsyncPoolHolding:
        wait = _trace.Wait.begin("etcdlock.acquire", self._pool)
        try:
            holding = AsyncPoolHolding(await _run_cancellable(self._op), self._pool)
        except BaseException as e:
            if wait is not None:
                wait.failed(e)
            raise
        holding._traced(wait)
        self._holding = holding
        return holding

    def __await__(self) -> Generator[Any, None, AsyncPoolHolding]:
        return self._acquire().__await__()

    async def __aenter__(self) -> AsyncPoolHolding:
        return await self._acquire()

    async def __aexit__(self, *exc: Any) -> None:
        if self._holding is not None:
            await self._holding.__aexit__(*exc)


class AsyncPool(PoolView):
    """The asyncio pool (see ``Pool``)."""

    def __init__(self, native: "_native.Pool") -> None:
        self._n = native

    def acquire(self, count: int = 1, *, owner: Optional[str] = None, timeout: Optional[float] = None) -> _Acquire:
        """See ``Pool.acquire``. Cancelling the awaiting task leaves nothing: no queued
        request, no slot."""
        c, o, t = acquire_args(count, owner, timeout)
        _log.refresh()
        return _Acquire(self._n.acquire(c, o, t), self.name)

    async def add_slots(self, ids: Sequence[str]) -> List[str]:
        """Adds slots (ids not in the pool yet); returns the pool's slot ids after."""
        result: List[str] = await _run(self._n.add_slots(_ids(ids, "ids")))
        return result

    async def remove_slots(self, ids: Sequence[str]) -> List[str]:
        """Removes slots; returns the pool's slot ids after (a held slot goes when released)."""
        result: List[str] = await _run(self._n.remove_slots(_ids(ids, "ids")))
        return result

    async def slots(self) -> List[SlotInfo]:
        """Every slot of the pool, in its order, read at one revision."""
        return slot_infos(await _run(self._n.slots()))
