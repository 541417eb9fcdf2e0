"""Leader election and a read-write lock (blocking API). A semaphore's permit, a read or a
write, and a leadership are ``Lock`` handles: same ``acquire``/``release``/``with``, fencing
token, ``on_lost`` and ``if_held=`` guarded writes."""

from typing import Iterator, Optional

from . import _args, _log, _native
from ._args import BytesLike
from ._common import Leader, leader, refuse_in_event_loop
from ._errors import LockTimeout
from ._sync import Lock


class Leadership(Lock):
    """Leading an election, from ``Election.campaign`` (already held). A context manager that
    resigns on exit; raises ``LockLost`` there if leadership was lost during the block."""

    _SPANS = ("etcdlock.campaign", "etcdlock.lead")

    def is_leader(self) -> bool:
        """Cheap local check: still leading (not resigned, not known lost)."""
        return self.is_held()

    def proclaim(self, value: BytesLike) -> int:
        """Replaces the leader's value (what ``leader()``, observers and ``etcdctl elect -l``
        see), only while still leading: ``NotHeld`` and nothing written otherwise. Returns the
        write's revision."""
        revision: int = self._n.set_value(_args.to_bytes(value, "value")).wait()
        return revision

    def resign(self) -> None:
        """Steps down (the next candidate leads); ``NotHeld`` if already resigned or lost."""
        self.release()

    def __enter__(self) -> "Leadership":
        return self


class Election:
    """The election ``name`` (``client.election``): campaign, read the leader, observe it.
    Shares its keys with etcd's Go ``concurrency.Election`` and ``etcdctl elect``."""

    def __init__(self, native: "_native.Client", name: bytes, ttl: int) -> None:
        self._c, self._name, self._ttl = native, name, ttl

    @property
    def name(self) -> bytes:
        """The election's name (its key prefix in etcd)."""
        return self._name

    def campaign(self, value: BytesLike, *, timeout: Optional[float] = None) -> Leadership:
        """Waits to lead, proposing ``value``; returns the ``Leadership``. ``timeout`` (seconds,
        None: forever; 0: only if nobody leads or campaigns) raises ``LockTimeout``. Raises
        ``LockLost`` at once if this candidate's lease or key goes while it waits. On any
        failure the candidate's key is gone when this returns."""
        t = _args.acquire_timeout(True, timeout)
        if t != 0:
            refuse_in_event_loop("Election.campaign()")
        _log.refresh()
        leadership = Leadership(self._c.candidate(self._name, self._ttl, _args.to_bytes(value, "value")), timeout)
        if not leadership.acquire(timeout=t):
            raise LockTimeout(f"timed out after {timeout} s campaigning in election {self._name!r}")
        return leadership

    def leader(self) -> Optional[Leader]:
        """The current leader, or None when nobody campaigns."""
        return leader(self._c.leader(self._name, self._ttl).wait())

    def observe(self) -> "Observer":
        """An iterator of leader changes: the current leader (or None) first, then each new
        leader, proclamation, and None when the last candidate goes. Survives reconnects and
        compaction; ends when closed or the client closes."""
        return Observer(self._c.observe(self._name, self._ttl))


class Observer:
    """Leader changes of an election (``Election.observe``): ``Leader`` or None per change."""

    def __init__(self, native: "_native.Observer") -> None:
        self._n = native

    def __iter__(self) -> Iterator[Optional[Leader]]:
        return self

    def __next__(self) -> Optional[Leader]:
        refuse_in_event_loop("iterating an Observer")
        what, raw = self._n.next().wait()
        if what == "end":
            raise StopIteration
        return leader(raw)

    def close(self) -> None:
        """Ends the iteration (also from another thread)."""
        self._n.close()

    def __enter__(self) -> "Observer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RWLock:
    """The read-write lock ``name`` (``client.rwlock``): ``read()`` and ``write()`` give ``Lock``
    handles. Readers hold together, a writer alone, in arrival order (a reader waits only for
    writers that came before it, so writers do not starve)."""

    def __init__(self, native: "_native.Client", name: bytes, ttl: int) -> None:
        self._c, self._name, self._ttl = native, name, ttl

    @property
    def name(self) -> bytes:
        """The lock's name (its key prefix in etcd)."""
        return self._name

    def read(self, *, timeout: Optional[float] = None, value: Optional[BytesLike] = None) -> Lock:
        """A handle that reads: ``with rw.read(timeout=5.0):`` (``LockTimeout`` when it passes)."""
        return self._handle(False, timeout, value)

    def write(self, *, timeout: Optional[float] = None, value: Optional[BytesLike] = None) -> Lock:
        """A handle that writes: ``with rw.write(timeout=5.0):``."""
        return self._handle(True, timeout, value)

    def _handle(self, write: bool, timeout: Optional[float], value: Optional[BytesLike]) -> Lock:
        _args.acquire_timeout(True, timeout)
        v = None if value is None else _args.to_bytes(value, "value")
        return Lock(self._c.rwlock(self._name, self._ttl, write, v), timeout)
