"""Lock sets (blocking API): ``client.lock_set(members, ttl=10, timeout=None)`` → ``LockSet``,
a handle used like ``Lock``. What the asyncio API shares (the members and their checks, the
set's view) is here too.

A set takes several names together, all or none, with one fencing token: one transaction puts
a key in every member's queue (so the keys share one create revision, the token), then each key
waits by its own queue's rule. Every wait is for an older key, so callers listing the names in
any order never deadlock. The rules are the core's (``core/src/sync/lockset/``)."""

from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple, Type, Union

from . import _args, _native, _trace
from ._args import BytesLike
from ._common import fence, refuse_in_event_loop
from ._errors import LockLost, LockTimeout, NotHeld
from ._health import Health
from ._lost import LostCallbacks
from ._ports import thread_port

if TYPE_CHECKING:
    from .fencing import Fence

#: The most names a lock set may have (the core's ``MAX_LOCK_SET``).
MAX_LOCK_SET: int = _native.MAX_LOCK_SET

_MODES = ("exclusive", "read", "write", "permit")


@dataclass(frozen=True)
class SetMember:
    """One name of a lock set and how the set holds it: ``"exclusive"`` (as ``client.lock``;
    what a plain name in the list means), ``"read"`` or ``"write"`` (as a read-write lock's
    reader or writer), or ``"permit"``: one of the ``permits`` of a semaphore. Made by
    :func:`read`, :func:`write` and :func:`permit`; ``name`` is kept as ``bytes``."""

    name: bytes
    mode: str = "exclusive"
    permits: Optional[int] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", _args.to_bytes(self.name, "name"))
        if not isinstance(self.mode, str):
            raise TypeError(f"mode must be a str, not {type(self.mode).__name__}")
        if self.mode not in _MODES:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, not {self.mode!r}")
        if self.mode == "permit":
            object.__setattr__(self, "permits", _args.permits(self.permits))
        elif self.permits is not None:
            raise ValueError(f"permits is for a permit member, not a {self.mode} one")

    def _native(self) -> Tuple[bytes, str, int]:
        return self.name, self.mode, self.permits or 0


def read(name: BytesLike) -> SetMember:
    """The set reads the read-write lock ``name`` (beside other readers; after older writers)."""
    return SetMember(name, "read")


def write(name: BytesLike) -> SetMember:
    """The set writes the read-write lock ``name`` (alone)."""
    return SetMember(name, "write")


def permit(name: BytesLike, permits: int) -> SetMember:
    """The set takes one of the ``permits`` (1 to 1024) of the semaphore ``name``; every
    participant of the name must give the same ``permits``."""
    return SetMember(name, "permit", permits)


MemberArg = Union[BytesLike, SetMember]


def members_arg(members: object) -> List[SetMember]:
    """A list of members from any iterable of names (exclusive) and ``SetMember`` s. How many,
    none twice and none under another's queue are the core's to check."""
    if isinstance(members, (str, bytes, bytearray, memoryview, dict)) or not hasattr(members, "__iter__"):
        raise TypeError(f"members must be a list of names or etcdlock.SetMember, not {type(members).__name__}")
    out = []
    for m in members:  # type: ignore[attr-defined]
        if isinstance(m, SetMember):
            out.append(m)
        elif isinstance(m, (str, bytes, bytearray, memoryview)):
            out.append(SetMember(m))
        else:
            raise TypeError(f"a lock set member must be a name (str or bytes) or etcdlock.SetMember, not {type(m).__name__}")
    return out


def native_lock_set(client: "_native.Client", members: object, ttl: object, timeout: object, value: object) -> Tuple[Any, List[SetMember]]:
    """The checked arguments of ``lock_set`` → the native handle and the members."""
    ms = members_arg(members)
    t = _args.ttl(ttl)
    _args.acquire_timeout(True, timeout)
    v = None if value is None else _args.to_bytes(value, "value")
    return client.lock_set([m._native() for m in ms], t, v), ms


class LockSetView:
    """The local, non-blocking view of a lock set, shared by ``LockSet`` and ``AsyncLockSet``."""

    _n: "_native.LockSet"
    _members: List[SetMember]

    @property
    def names(self) -> List[bytes]:
        """The members' names, in the order given."""
        return [m.name for m in self._members]

    @property
    def members(self) -> List[SetMember]:
        """The members, in the order given (a plain name as an ``"exclusive"`` one)."""
        return list(self._members)

    def is_held(self) -> bool:
        """Cheap local check: every member held, not released, none known lost."""
        return self._n.is_held()

    @property
    def fencing_token(self) -> Optional[int]:
        """While held, the set's token: the create revision every member's key shares, larger
        than every earlier holder's token of each name. None when not held."""
        return self._n.fencing_token()

    @property
    def keys(self) -> Optional[List[bytes]]:
        """The latest acquisition's queue keys, one per member in order (None before the first)."""
        return self._n.keys()

    @property
    def lease_id(self) -> Optional[int]:
        """The lease of the latest acquisition's keys (the client's lease for the set's TTL)."""
        return self._n.lease_id()

    @property
    def lost_reason(self) -> Optional[str]:
        """Why the latest acquisition was lost (its first member lost: "expired", "revoked",
        "key_deleted", "closed"), or None."""
        return self._n.lost_reason()

    def health(self) -> Health:
        """The latest acquisition's :class:`~etcdlock.Health` (held while every member is;
        ``name`` is the member names joined by ``,``; ``"idle"`` before the first)."""
        return Health._from_native(self._n.health())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(names={self.names!r}, fencing_token={self.fencing_token})"

    _lost: LostCallbacks
    _hold: "Optional[_trace.Hold]" = None

    def _releasing(self) -> "_trace.Releasing":
        return _trace.releasing(self, _trace.set_name(self.names))


class LockSet(LockSetView):
    """Several lock names taken together, all or none, used like ``Lock``: ``acquire()`` /
    ``release()`` from any thread, or a context manager. Fenced writes:
    ``client.put(key, value, if_held=locks)`` commits only while every member is held."""

    def __init__(self, native: "_native.LockSet", members: List[SetMember], timeout: Optional[float]) -> None:
        self._n = native
        self._members = members
        self._timeout = timeout
        self._lost = LostCallbacks()

    def acquire(self, blocking: bool = True, timeout: Optional[float] = None) -> bool:
        """Waits for every member; True once the set holds them all. ``blocking=False`` tries
        once (False if a member is held or has waiters); ``timeout`` (seconds; None or -1 =
        forever) returns False when it passes. Whatever the outcome, no member is held alone
        and a failed acquire leaves no key in any queue."""
        t = _args.acquire_timeout(blocking, timeout)
        if t != 0:
            refuse_in_event_loop("LockSet.acquire()")
        wait = _trace.Wait.begin("etcdlock.acquire", _trace.set_name(self.names))
        try:
            ok: bool = self._n.acquire(t).wait()
        except BaseException as e:
            if wait is not None:
                wait.failed(e)
            raise
        if ok:
            self._lost.new_epoch()
            self._lost.arm(thread_port, self._n.watch_lost)
        if wait is not None:
            _trace.lock_acquired(self, wait, ok, t, thread_port)
        return ok

    def release(self) -> None:
        """Releases every member in one transaction (each key deleted only if still this
        set's). ``NotHeld`` if not held, or if a member was lost (the other keys go anyway)."""
        with self._releasing():
            self._n.release().wait()

    def fence(self, name: BytesLike) -> "Fence":
        """Member ``name``'s ``etcdlock.fencing.Fence`` at the set's token (its queue key's
        create revision, ``fencing_token``), for a database (``etcdlock.fencing``; each member
        has its own mark) or ``client.check_fence``. ``NotHeld`` if not held (as
        ``Lock.fence``); ``ValueError`` if ``name`` is not a member. A read or permit member
        has one too, but is not exclusive: its fence does not exclude other holders."""
        return fence(self._n.fence(_args.to_bytes(name, "name")).wait())

    def on_lost(self, callback: Callable[[str], object]) -> None:
        """Calls ``callback(reason)`` once when the held set loses a member (not when released),
        on etcdlock's callback thread. Stays registered for later acquisitions."""
        self._lost.add(callback, thread_port, self._n.watch_lost)

    def __enter__(self) -> "LockSet":
        if not self.acquire(timeout=self._timeout):
            raise LockTimeout(f"timed out after {self._timeout} s waiting for lock set {self.names!r}")
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        try:
            self.release()
        except NotHeld as e:
            if exc_type is None:
                raise LockLost(f"the lock set was lost before the end of the with block ({self.lost_reason})") from e

