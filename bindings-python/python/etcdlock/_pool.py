"""Pools of named slots (blocking API): ``client.pool(name, slots=[...])`` → ``Pool``;
``acquire()`` → ``PoolHolding``. What the asyncio API shares (``SlotInfo``, the argument
checks, the holding's view) is here too.

An acquire gets ``count`` slot ids that nobody else holds, a fencing token per slot and one for
the acquisition, and keeps them while this client's lease for the pool's TTL lives. Requests
are served in the order etcd committed them; a request for k slots waits at the head until k
are free (later ones wait behind it). A slot whose holder died is not handed out again before
``reuse_delay`` (timed by an etcd lease); a released one is free at once."""

from types import TracebackType
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Type

from . import _args, _log, _native, _trace
from ._common import fence, refuse_in_event_loop
from ._errors import LockLost, NotHeld
from ._ports import thread_port
from ._tasks_common import ClaimView, claim_timeout

if TYPE_CHECKING:
    from .fencing import Fence


class SlotInfo(NamedTuple):
    """One slot of a pool (``pool.slots()``, ``client.inspect_pool(name)``), read at one
    revision. What does not apply to its state is None."""

    id: str
    state: str
    """``"free"`` (can be handed out now), ``"held"``, ``"resting"`` (its holder died: not handed
    out before its reuse-delay lease ends) or ``"dead"`` (its holder died and no request has seen
    it yet: it rests the reuse delay first)."""
    token: Optional[int] = None
    """Held: the slot's fencing token (larger for every later holder of the slot)."""
    lease: Optional[int] = None
    """Held: the holder's lease; resting: the lease that times the rest."""
    ttl: Optional[int] = None
    """Seconds that lease has left (None once it is gone)."""
    owner: Optional[str] = None
    """Held: the ``owner`` the acquire gave, or None."""
    acquisition: Optional[int] = None
    """Held: the acquisition's fencing token (``holding.fencing_token``)."""


def slot_infos(raw: Sequence[Tuple[Any, ...]]) -> List[SlotInfo]:
    return [SlotInfo(*s) for s in raw]


def _ids(value: object, what: str) -> List[str]:
    """A list (or tuple) of ``str`` slot ids; their form is the core's to check."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise TypeError(f"{what} must be a list of str slot ids, not {type(value).__name__}")
    for s in value:
        if not isinstance(s, str):
            raise TypeError(f"{what} must be a list of str slot ids, not a list with {type(s).__name__}")
    return list(value)


def definition(slots: object, size: object, ttl: object, reuse_delay: object) -> Tuple[int, Optional[float], Optional[List[str]], Optional[int]]:
    """The arguments of ``client.pool`` → ``(ttl, reuse_delay, slots, size)`` for the native
    call (which checks the values as the core does). Neither slots nor size: the pool as
    defined in etcd, whose reuse delay is the stored one."""
    if slots is not None and size is not None:
        raise ValueError("give the pool's slots=[...] or size=N, not both")
    ids = None if slots is None else _ids(slots, "slots")
    n = None if size is None else _args._int64(size, "size", "an int")
    if reuse_delay is None:
        return _args.ttl(ttl), None, ids, n
    if isinstance(reuse_delay, bool) or not isinstance(reuse_delay, (int, float)):
        raise TypeError(f"reuse_delay must be a number of seconds, not {type(reuse_delay).__name__}")
    if ids is None and n is None:
        raise ValueError("reuse_delay is part of a pool's definition: give slots=[...] or size=N with it")
    return _args.ttl(ttl), float(reuse_delay), ids, n


def slot_arg(slot: object) -> str:
    """A slot id for ``holding.fence``: a ``str`` (whether the holding has it is the core's
    to check)."""
    if not isinstance(slot, str):
        raise TypeError(f"slot must be a str slot id, not {type(slot).__name__}")
    return slot


def acquire_args(count: object, owner: object, timeout: object) -> Tuple[int, Optional[str], Optional[float]]:
    c = _args._int64(count, "count", "an int")
    if owner is not None and not isinstance(owner, str):
        raise TypeError(f"owner must be a str or None, not {type(owner).__name__}")
    return c, owner, claim_timeout(timeout)


class HoldingView(ClaimView):
    """What a pool holding shows in both APIs: ``slots``, ``tokens``, ``fencing_token`` (the
    acquisition's), ``owner``, ``lease_id``, ``is_held()``, ``lost_reason``, ``on_lost(cb)``."""

    @property
    def fencing_token(self) -> int:
        """The acquisition's token (its request's create revision): larger for every later
        acquisition from this pool."""
        return self._n.fencing_token

    @property
    def slots(self) -> List[str]:
        """The slot ids held, in the pool's order."""
        return self._n.slots

    @property
    def tokens(self) -> Dict[str, int]:
        """Each slot id → its fencing token (the slot key's create revision: larger for every
        later holder of that slot)."""
        return dict(self._n.tokens)

    @property
    def owner(self) -> Optional[str]:
        return self._n.owner

    @property
    def lease_id(self) -> int:
        """The lease the slots are held on (this client's lease for the pool's TTL)."""
        return self._n.lease_id

    def __repr__(self) -> str:
        return f"{type(self).__name__}(slots={self.slots!r}, fencing_token={self.fencing_token})"

    _pool: bytes
    _hold: "Optional[_trace.Hold]" = None

    def _traced(self, wait: "Optional[_trace.Wait]") -> None:
        """Ends the acquire's span and opens the holding's hold (once: an owner's acquire may
        return a holding it already has)."""
        if wait is not None and self._hold is None:
            self._hold = _trace.holding_acquired(wait, self, {"etcdlock.slots": ",".join(self.slots)})
        elif wait is not None:
            wait.acquired(self.fencing_token, {"etcdlock.slots": ",".join(self.slots)})

    def _releasing(self) -> "_trace.Releasing":
        return _trace.releasing(self, self._pool, {"etcdlock.slots": ",".join(self.slots)})


class PoolHolding(HoldingView):
    """Slots held from a pool (see ``Pool.acquire``): fenced writes with ``client.put(key,
    value, if_held=holding)``; ``release()``. A context manager: releases at the end of the
    block (``LockLost`` there if the holding was lost meanwhile)."""

    def __init__(self, native: "_native.PoolHolding", pool: bytes = b"") -> None:
        super().__init__(native, thread_port)
        self._pool = pool

    def release(self) -> None:
        """Gives every slot back at once (each free for the next request), fenced. ``NotHeld``
        if already released or lost."""
        with self._releasing():
            self._n.release().wait()

    def fence(self, slot: str) -> "Fence":
        """The ``etcdlock.fencing.Fence`` of slot ``slot`` of this holding (kind ``"k"``: the
        slot's key ``<pool>/slot/<id>`` at the slot's token, ``tokens[slot]``), for a database
        (``etcdlock.fencing.sqlite.check``, ``postgres.check``; each slot has its own mark) or
        ``client.check_fence``. ``ValueError`` for a slot this holding does not hold. After the
        release it is still returned, and no longer checks."""
        return fence(self._n.fence(slot_arg(slot)).wait())

    def __enter__(self) -> "PoolHolding":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        try:
            self.release()
        except NotHeld as e:
            if exc_type is None:
                raise LockLost(f"the slots were lost before the end of the with block ({self.lost_reason})") from e


class PoolView:
    """What a pool handle shows in both APIs."""

    _n: "_native.Pool"

    @property
    def name(self) -> bytes:
        return self._n.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class Pool(PoolView):
    """A pool of named slots in etcd (see ``Client.pool``). Sends nothing until used."""

    def __init__(self, native: "_native.Pool") -> None:
        self._n = native

    def acquire(self, count: int = 1, *, owner: Optional[str] = None, timeout: Optional[float] = None) -> PoolHolding:
        """Waits for ``count`` slots (1 to the pool's size, at most 30) and returns the
        holding. ``timeout`` seconds (None: until they come; 0: ``WouldBlock`` at once unless
        they are free) then ``LockTimeout``; on any failure nothing is left. With ``owner``, an
        acquire while this client has a live holding acquired with the same owner returns that
        holding (a retried call gets what it already has). The first acquire stores the pool's
        definition; one that disagrees with the stored one raises ``ValueError``."""
        c, o, t = acquire_args(count, owner, timeout)
        if t != 0:
            refuse_in_event_loop("Pool.acquire()")
        _log.refresh()
        wait = _trace.Wait.begin("etcdlock.acquire", self.name)
        try:
            holding = PoolHolding(self._n.acquire(c, o, t).wait(), self.name)
        except BaseException as e:
            if wait is not None:
                wait.failed(e)
            raise
        holding._traced(wait)
        return holding

    def add_slots(self, ids: Sequence[str]) -> List[str]:
        """Adds slots (ids not in the pool yet); returns the pool's slot ids after. Waiting
        requests see them at once."""
        result: List[str] = self._n.add_slots(_ids(ids, "ids")).wait()
        return result

    def remove_slots(self, ids: Sequence[str]) -> List[str]:
        """Removes slots; returns the pool's slot ids after. A held slot goes when its holder
        releases it (it is not handed out meanwhile)."""
        result: List[str] = self._n.remove_slots(_ids(ids, "ids")).wait()
        return result

    def slots(self) -> List[SlotInfo]:
        """Every slot of the pool, in its order, read at one revision (empty before the first
        acquire stored the definition)."""
        return slot_infos(self._n.slots().wait())
