"""What the blocking and the asyncio task queues share: argument checks and result types."""

import math
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from . import _args
from ._args import BytesLike
from ._health import Health
from ._lost import LostCallbacks


class ClaimView:
    """What a claim (a task's, a period's slot, a pool's holding) shows in both APIs: its fencing
    token, the local held check, the loss and ``on_lost`` (callbacks on ``port``: the callback
    thread, or the loop)."""

    def __init__(self, native: Any, port: Callable[[], Any]) -> None:
        self._n = native
        self._port = port
        self._lost = LostCallbacks()
        self._lost.new_epoch()

    @property
    def fencing_token(self) -> int:
        """The claim key's create revision: larger for every later claim."""
        return self._n.fencing_token

    def is_held(self) -> bool:
        """A local check: neither ended nor known lost."""
        return self._n.is_held()

    @property
    def lost_reason(self) -> Optional[str]:
        return self._n.lost_reason()

    def health(self) -> Health:
        """The claim's :class:`~etcdlock.Health` (``"released"`` once it ended: acked,
        nacked, done, released)."""
        return Health._from_native(self._n.health())

    def on_lost(self, callback: Callable[[str], object]) -> None:
        """Calls ``callback(reason)`` once if the claim is lost (not when it ends otherwise)."""
        self._lost.add(callback, self._port, lambda bridge, i: self._n.watch_lost(bridge, i))


class TaskView(ClaimView):
    """A claimed task's data, in both APIs."""

    @property
    def id(self) -> str:
        return self._n.id

    @property
    def payload(self) -> bytes:
        return self._n.payload

    @property
    def priority(self) -> int:
        return self._n.priority

    @property
    def attempts(self) -> int:
        """Deliveries so far, this one included."""
        return self._n.attempts

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, attempts={self.attempts}, fencing_token={self.fencing_token})"


class QueueStats(NamedTuple):
    """A queue's items by state, read at one revision."""

    pending: int
    """Claimable now."""
    delayed: int
    """Put or given back with a delay that has not passed."""
    claimed: int
    """Held by a worker."""
    dead: int
    """In the dead letters."""
    pending_by_priority: Dict[int, int]
    revision: int


class DeadTask(NamedTuple):
    """An item in the dead letters."""

    id: str
    payload: bytes
    attempts: int
    priority: int


def stats(raw: Mapping[str, Any]) -> QueueStats:
    return QueueStats(
        pending=raw["pending"],
        delayed=raw["delayed"],
        claimed=raw["claimed"],
        dead=raw["dead"],
        pending_by_priority=dict(raw["pending_by_priority"]),
        revision=raw["revision"],
    )


def dead(raw: Sequence[Tuple[str, bytes, int, int]]) -> List[DeadTask]:
    return [DeadTask(*d) for d in raw]


def max_attempts(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"max_attempts must be an int, not {type(value).__name__}")
    if not 1 <= value <= 2**32 - 1:
        raise ValueError(f"max_attempts must be at least 1, got {value}")
    return value


def task_id(value: object) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"id must be a str, not {type(value).__name__}")
    return value


def required_id(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"id must be a str, not {type(value).__name__}")
    return value


def priority(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"priority must be an int, not {type(value).__name__}")
    if not -(2**31) <= value < 2**31:
        raise ValueError(f"priority must fit in 32 bits, got {value}")
    return value


def delay(value: object) -> Optional[float]:
    """None, 0 (no delay) or a positive number of seconds."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"delay must be a number of seconds or None, not {type(value).__name__}")
    if value == 0:
        return None
    return _args.seconds(value, "delay")


def claim_timeout(value: object) -> Optional[float]:
    """None waits, 0 tries once, otherwise seconds."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, not {type(value).__name__}")
    t = float(value)
    if math.isnan(t) or t < 0:
        raise ValueError(f"timeout must be a non-negative number of seconds or None, got {value!r}")
    return None if math.isinf(t) else t


def ack_ops(puts: Optional[Mapping[BytesLike, BytesLike]], deletes: Optional[Sequence[BytesLike]]) -> Tuple[list, list]:
    p = [(_args.to_bytes(k, "key"), _args.to_bytes(v, "value")) for k, v in (puts or {}).items()]
    d = [_args.to_bytes(k, "key") for k in (deletes or [])]
    return p, d
