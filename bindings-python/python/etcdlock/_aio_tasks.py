"""The task queue (asyncio API); see ``_tasks`` for the blocking one. Same names, awaited:
``task = await q.claim(timeout=5.0)`` or ``async with q.claim(timeout=5.0) as task``."""

from types import TracebackType
from typing import TYPE_CHECKING, Any, AsyncIterator, Generator, List, Mapping, Optional, Sequence, Type

from . import _args, _log, _native, _trace
from . import _tasks_common as _tc
from ._aio import _run, _run_cancellable
from ._args import BytesLike
from ._errors import LockTimeout, NotHeld
from ._ports import loop_port
from ._common import fence
from ._tasks_common import DeadTask, QueueStats

if TYPE_CHECKING:
    from .fencing import Fence


class AsyncTask(_tc.TaskView):
    """A claimed item (see ``Task``); ``await task.ack()`` / ``await task.nack()``. An async
    context manager: acks at the end of the block, nacks on an exception."""

    def __init__(self, native: "_native.Task", queue: bytes = b"") -> None:
        super().__init__(native, loop_port)
        self._ended = False
        self._queue = queue  # the queue's name, for the ack's span

    async def ack(self, *, puts: Optional[Mapping[BytesLike, BytesLike]] = None, deletes: Optional[Sequence[BytesLike]] = None) -> int:
        """Deletes the item with your own ``puts`` and ``deletes`` in the same transaction, only
        while the claim holds (see ``Task.ack``); returns the revision."""
        p, d = _tc.ack_ops(puts, deletes)
        self._ended = True
        attrs = {"etcdlock.task_id": self.id, "etcdlock.fencing_token": self.fencing_token}
        revision: int = await _trace.traced_async("etcdlock.task.ack", self._queue, False, lambda: _run(self._n.ack(p, d)), _trace.acked, attrs)
        return revision

    async def fence(self) -> "Fence":
        """The claim's ``etcdlock.fencing.Fence`` (see ``Task.fence``); ``NotHeld`` once the
        claim ended or was lost."""
        return fence(await _run(self._n.fence()))

    async def nack(self, delay: Optional[float] = None) -> None:
        """Gives the item back, claimable at once or after ``delay`` seconds (see ``Task.nack``)."""
        seconds = _tc.delay(delay)
        self._ended = True
        await _run(self._n.nack(seconds))

    async def __aenter__(self) -> "AsyncTask":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        if self._ended:
            return
        if exc_type is None:
            await self.ack()
        else:
            try:
                await self.nack()
            except NotHeld:
                pass

class _Claim:
    """``await q.claim()`` or ``async with q.claim() as task`` (acks on exit, nacks on an
    exception)."""

    def __init__(self, op: Any, queue: bytes) -> None:
        self._op = op
        self._queue = queue
        self._task: Optional[AsyncTask] = None

    async def _claim(self) -> AsyncTask:
        async def run() -> AsyncTask:
            return AsyncTask(await _run_cancellable(self._op), self._queue)

        self._task = await _trace.traced_async("etcdlock.task.claim", self._queue, True, run, _trace.claimed)
        return self._task

    def __await__(self) -> Generator[Any, None, AsyncTask]:
        return self._claim().__await__()

    async def __aenter__(self) -> AsyncTask:
        return await self._claim()

    async def __aexit__(self, *exc: Any) -> None:
        if self._task is not None:
            await self._task.__aexit__(*exc)


class AsyncTaskQueue:
    """The asyncio task queue (see ``TaskQueue``)."""

    def __init__(self, native: "_native.TaskQueue") -> None:
        self._n = native

    @property
    def name(self) -> bytes:
        """The queue's name (its key prefix in etcd)."""
        return self._n.name

    async def put(self, payload: BytesLike, *, id: Optional[str] = None, priority: int = 0, delay: Optional[float] = None) -> str:
        """Adds an item; returns its id (see ``TaskQueue.put``)."""
        p = _args.to_bytes(payload, "payload")
        args = (_tc.task_id(id), _tc.priority(priority), _tc.delay(delay))
        return str(await _run(self._n.put(p, *args)))

    def claim(self, timeout: Optional[float] = None, *, worker: Optional[BytesLike] = None) -> _Claim:
        """See ``TaskQueue.claim``. Cancelling the awaiting task leaves nothing behind."""
        t = _tc.claim_timeout(timeout)
        w = _args.to_bytes(worker, "worker") if worker is not None else None
        _log.refresh()
        return _Claim(self._n.claim(t, w), self._n.name)

    async def tasks(self, timeout: Optional[float] = None) -> AsyncIterator[AsyncTask]:
        """``async for task in q.tasks()``: claims one after another; ends when a claim times
        out (never, without a timeout)."""
        while True:
            try:
                task = await self.claim(timeout)
            except LockTimeout:
                return
            yield task

    async def stats(self) -> QueueStats:
        """The queue's items by state (pending, delayed, claimed, dead), read at one revision."""
        return _tc.stats(await _run(self._n.stats()))

    async def dead(self) -> List[DeadTask]:
        """The dead letters, in id order."""
        return _tc.dead(await _run(self._n.dead()))

    async def requeue_dead(self, id: str) -> bool:
        """Puts a dead item back, its attempts at 0; False if no dead item has that id."""
        return bool(await _run(self._n.requeue_dead(_tc.required_id(id))))

    async def delete_dead(self, id: str) -> bool:
        """Deletes a dead item; False if no dead item has that id."""
        return bool(await _run(self._n.delete_dead(_tc.required_id(id))))
