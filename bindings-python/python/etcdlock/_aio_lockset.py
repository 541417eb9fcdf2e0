"""Lock sets (asyncio API); see ``_lockset`` for the blocking one. Same names, awaited:
``async with client.lock_set(["a", "b"], timeout=5.0) as locks:`` or ``await
locks.acquire()``."""

from types import TracebackType
from typing import TYPE_CHECKING, Callable, List, Optional, Type

from . import _args, _native, _trace
from ._aio import _run, _run_cancellable
from ._args import BytesLike
from ._common import fence
from ._errors import LockLost, LockTimeout, NotHeld
from ._lockset import LockSetView, SetMember
from ._lost import LostCallbacks
from ._ports import LoopPort, loop_port

if TYPE_CHECKING:
    from .fencing import Fence


class AsyncLockSet(LockSetView):
    """The asyncio lock set: ``await acquire()``, ``await release()``, ``async with``.
    ``on_lost`` callbacks run on the event loop that acquired it."""

    def __init__(self, native: "_native.LockSet", members: List[SetMember], timeout: Optional[float]) -> None:
        self._n = native
        self._members = members
        self._timeout = timeout
        self._lost = LostCallbacks()
        self._port: Optional[LoopPort] = None

    async def acquire(self, blocking: bool = True, timeout: Optional[float] = None) -> bool:
        """Like ``LockSet.acquire``. Cancelling the awaiting task leaves no key in any queue."""
        t = _args.acquire_timeout(blocking, timeout)
        wait = _trace.Wait.begin("etcdlock.acquire", _trace.set_name(self.names))
        try:
            ok: bool = await _run_cancellable(self._n.acquire(t))
        except BaseException as e:
            if wait is not None:
                wait.failed(e)
            raise
        if ok:
            self._port = loop_port()
            self._lost.new_epoch()
            self._lost.arm(self._loop_port, self._n.watch_lost)
        if wait is not None:
            _trace.lock_acquired(self, wait, ok, t, self._loop_port)
        return ok

    async def release(self) -> None:
        """Releases every member in one transaction; ``NotHeld`` if not held or a member was lost."""
        with self._releasing():
            await _run(self._n.release())

    async def fence(self, name: BytesLike) -> "Fence":
        """Member ``name``'s ``etcdlock.fencing.Fence`` at the set's token (see
        ``LockSet.fence``); ``NotHeld`` if not held, ``ValueError`` if ``name`` is not a member."""
        return fence(await _run(self._n.fence(_args.to_bytes(name, "name"))))

    def on_lost(self, callback: Callable[[str], object]) -> None:
        """Calls ``callback(reason)`` once when the held set loses a member, on the event loop
        that acquired it (a coroutine function's result is scheduled as a task)."""
        self._lost.add(callback, self._loop_port, self._n.watch_lost)

    def _loop_port(self) -> LoopPort:
        try:
            return loop_port()
        except RuntimeError:
            if self._port is None:
                raise RuntimeError("on_lost needs a running event loop (or a lock set acquired on one)") from None
            return self._port

    async def __aenter__(self) -> "AsyncLockSet":
        if not await self.acquire(timeout=self._timeout):
            raise LockTimeout(f"timed out after {self._timeout} s waiting for lock set {self.names!r}")
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        try:
            await self.release()
        except NotHeld as e:
            if exc_type is None:
                raise LockLost(f"the lock set was lost before the end of the async with block ({self.lost_reason})") from e
