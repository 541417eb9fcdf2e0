"""The task queue (blocking API): ``client.queue(name)`` → ``TaskQueue``; ``claim()`` → ``Task``.

A claim lives on this client's lease (kept alive while held): a worker that dies or is cut off
loses it when etcd ends its lease, and the item is claimable again. ``with q.claim() as task``
acks when the block ends and nacks when it raises."""

from types import TracebackType
from typing import TYPE_CHECKING, Iterator, List, Mapping, Optional, Sequence, Type

from . import _args, _log, _native, _trace
from ._args import BytesLike
from ._common import fence, refuse_in_event_loop
from ._errors import LockTimeout, NotHeld
from ._ports import thread_port
from . import _tasks_common as _tc
from ._tasks_common import DeadTask, QueueStats

if TYPE_CHECKING:
    from .fencing import Fence


class Task(_tc.TaskView):
    """A claimed item: ``id``, ``payload``, ``priority``, ``attempts`` (deliveries so far, this
    one included), ``fencing_token``; fenced writes with ``client.put(key, value,
    if_held=task)``; ``ack()`` / ``nack(delay=None)``. A context manager: acks at the end of the
    block, nacks (and re-raises) on an exception."""

    def __init__(self, native: "_native.Task", queue: bytes = b"") -> None:
        super().__init__(native, thread_port)
        self._ended = False
        self._queue = queue  # the queue's name, for the ack's span

    def ack(self, *, puts: Optional[Mapping[BytesLike, BytesLike]] = None, deletes: Optional[Sequence[BytesLike]] = None) -> int:
        """Deletes the item, with ``puts`` and ``deletes`` of your own in the same transaction,
        only while the claim holds (``NotHeld``, nothing written, otherwise). Returns the
        revision."""
        p, d = _tc.ack_ops(puts, deletes)
        self._ended = True
        attrs = {"etcdlock.task_id": self.id, "etcdlock.fencing_token": self.fencing_token}
        revision: int = _trace.traced("etcdlock.task.ack", self._queue, False, lambda: self._n.ack(p, d).wait(), _trace.acked, attrs)
        return revision

    def fence(self) -> "Fence":
        """The claim's ``etcdlock.fencing.Fence``: a fence on the claim's lock (its name is
        ``<queue>/claim/<item's slot>``, the default resource of a database's mark, so each item
        has its own; every later claim of the item has a larger token). ``NotHeld`` once the
        claim ended or was lost."""
        return fence(self._n.fence().wait())

    def nack(self, delay: Optional[float] = None) -> None:
        """Gives the item back, claimable at once or after ``delay`` seconds (timed by an etcd
        lease, rounded up to whole seconds); after its last attempt it goes to the dead
        letters. ``NotHeld`` if the claim was lost or already ended."""
        seconds = _tc.delay(delay)
        self._ended = True
        self._n.nack(seconds).wait()

    def __enter__(self) -> "Task":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        if self._ended:
            return
        if exc_type is None:
            self.ack()
        else:
            try:
                self.nack()
            except NotHeld:
                pass  # lost meanwhile: the item is claimable again anyway

class TaskQueue:
    """A work queue in etcd (see ``Client.queue``)."""

    def __init__(self, native: "_native.TaskQueue") -> None:
        self._n = native

    @property
    def name(self) -> bytes:
        """The queue's name (its key prefix in etcd)."""
        return self._n.name

    def put(self, payload: BytesLike, *, id: Optional[str] = None, priority: int = 0, delay: Optional[float] = None) -> str:
        """Adds an item; returns its id. With ``id``, a put of an item that exists (pending,
        claimed, delayed or dead) changes nothing. Higher ``priority`` first; ``delay``
        seconds before it can be claimed."""
        p = _args.to_bytes(payload, "payload")
        args = (_tc.task_id(id), _tc.priority(priority), _tc.delay(delay))
        return str(self._n.put(p, *args).wait())

    def claim(self, timeout: Optional[float] = None, *, worker: Optional[BytesLike] = None) -> Task:
        """The oldest available item of the highest priority, claimed. Waits up to ``timeout``
        seconds (None: until one comes; 0: ``WouldBlock`` at once) and raises ``LockTimeout``
        when it passes. Workers are served in the order they began waiting."""
        t = _tc.claim_timeout(timeout)
        if t != 0:
            refuse_in_event_loop("TaskQueue.claim()")
        w = _args.to_bytes(worker, "worker") if worker is not None else None
        _log.refresh()
        name = self._n.name
        return _trace.traced("etcdlock.task.claim", name, True, lambda: Task(self._n.claim(t, w).wait(), name), _trace.claimed)

    def tasks(self, timeout: Optional[float] = None) -> Iterator[Task]:
        """Claims one task after another; ends when a claim times out (never, without a
        timeout). Ack or nack each (or use it as a context manager)."""
        while True:
            try:
                yield self.claim(timeout)
            except LockTimeout:
                return

    def stats(self) -> QueueStats:
        """The queue's items by state (pending, delayed, claimed, dead), read at one revision."""
        return _tc.stats(self._n.stats().wait())

    def dead(self) -> List[DeadTask]:
        """The dead letters, in id order."""
        return _tc.dead(self._n.dead().wait())

    def requeue_dead(self, id: str) -> bool:
        """Puts a dead item back, its attempts at 0; False if no dead item has that id."""
        return bool(self._n.requeue_dead(_tc.required_id(id)).wait())

    def delete_dead(self, id: str) -> bool:
        """Deletes a dead item; False if no dead item has that id."""
        return bool(self._n.delete_dead(_tc.required_id(id)).wait())
