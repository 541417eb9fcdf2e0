"""The prefix cache (blocking API): ``Cache`` and ``CacheEvents``, and what the asyncio API
shares with it (``CacheEvent``, ``CacheSnapshot``, ``CacheView``). Every behaviour is the core's
(``etcdlock::Cache``); this converts types and calling conventions."""

from typing import Dict, Iterator, NamedTuple, Optional

from . import _args, _native
from ._common import refuse_in_event_loop

class CacheEvent(NamedTuple):
    """One change of a cache's copy (``cache.events()``)."""

    type: str
    """``"put"``, ``"delete"``, or ``"resynced"``: the copy was read again (after a compaction
    of the history it needed, or a reader that fell too far behind); the events just before say
    what changed, and ``snapshot()`` is the copy as it is now."""
    key: bytes
    """The key (empty for ``"resynced"``)."""
    value: bytes
    """The new value (empty for a delete and for ``"resynced"``)."""
    prev_value: Optional[bytes]
    """The value the copy had before, None if it did not have the key."""
    revision: int
    """The revision of the change (for ``"resynced"``, the one the copy was read at)."""


class CacheSnapshot(NamedTuple):
    """A cache's whole copy and the revision it is at, read together (``cache.snapshot()``)."""

    entries: Dict[bytes, bytes]
    """Key → value, every key under the prefix as etcd had it at ``revision``."""
    revision: int


def _revision(value: object) -> int:
    return _args._int64(value, "revision", "an int")


def _timeout(value: object) -> Optional[float]:
    return None if value is None else _args.seconds(value, "timeout")


class CacheView:
    """The local reads of a cache, shared by ``Cache`` and ``AsyncCache``: answered from memory,
    at once, not linearizable (the copy is at ``revision``, which may be behind etcd; ``wait_for``
    catches up with a write). Each raises ``Closed`` once the cache or its client is closed."""

    _n: "_native.Cache"

    @property
    def prefix(self) -> bytes:
        return self._n.prefix

    @property
    def revision(self) -> int:
        """The revision the copy is at: every change up to it is in."""
        return self._n.revision()

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._n.is_closed()

    def get(self, key: _args.BytesLike) -> Optional[bytes]:
        """The value of ``key`` in the copy, or None."""
        return self._n.get(_args.to_bytes(key, "key"))

    def snapshot(self) -> CacheSnapshot:
        """The whole copy and its revision, read together."""
        entries, revision = self._n.snapshot()
        return CacheSnapshot(entries, revision)

    def __len__(self) -> int:
        return self._n.len()

    def __contains__(self, key: object) -> bool:
        return self.get(key) is not None  # type: ignore[arg-type]


class Cache(CacheView):
    """A local copy of every key under a prefix, kept in step with etcd (``client.cache``):
    loaded at one revision, then changed a revision at a time by a watch that resumes across
    disconnects; after a compaction it reads the prefix again (``"resynced"``). A context
    manager that closes it."""

    def __init__(self, native: "_native.Cache") -> None:
        self._n = native

    def wait_for(self, revision: int, timeout: Optional[float] = None) -> None:
        """Waits until the copy is at ``revision`` or later (read-your-writes: pass the revision
        ``client.put`` returned). Raises ``Timeout`` after ``timeout`` seconds (None: no limit),
        ``Closed`` if the cache or the client is closed meanwhile. A revision of a write outside
        the prefix arrives only with etcd's progress notices (etcd >= 3.5.8)."""
        r, t = _revision(revision), _timeout(timeout)
        refuse_in_event_loop("Cache.wait_for()")
        self._n.wait_for(r, t).wait()

    def events(self) -> "CacheEvents":
        """``for ev in cache.events():`` — the copy's changes from now on, in revision order (a
        ``CacheEvent`` each). Ends when closed, or when the cache or the client is closed."""
        return CacheEvents(self._n.events(), self)

    def close(self) -> None:
        """Stops following etcd (idempotent): reads raise ``Closed``, event iterations end."""
        self._n.close()

    def __enter__(self) -> "Cache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CacheEvents:
    """An iterator of ``CacheEvent``; ``close()`` (also from another thread) ends it."""

    def __init__(self, native: "_native.CacheEvents", cache: CacheView) -> None:
        self._n = native
        self._cache = cache  # kept alive while iterated: dropping the last handle stops it

    def __iter__(self) -> Iterator[CacheEvent]:
        return self

    def __next__(self) -> CacheEvent:
        refuse_in_event_loop("iterating a cache's events")
        t = self._n.next().wait()
        if t is None:
            raise StopIteration
        return CacheEvent(*t)

    def close(self) -> None:
        """Ends the iteration (also from another thread)."""
        self._n.close()

    def __enter__(self) -> "CacheEvents":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
