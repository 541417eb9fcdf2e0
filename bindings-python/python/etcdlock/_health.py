"""``Health``: one call's view of a hold, for health endpoints and readiness probes."""

from dataclasses import dataclass
from typing import Optional, Tuple


@dataclass(frozen=True)
class Health:
    """What ``health()`` of a lock (semaphore, read-write lock, leadership), a lock set, a
    pool holding, a task or a once-per-period slot returns: a snapshot taken by the core from
    the very state its lost signal is set from, so once ``on_lost`` fired, ``ok`` is False.
    Local reads only; nothing is sent to etcd.

    A readiness probe answers 200 while ``ok`` and 503 otherwise::

        h = lock.health()
        status = 200 if h.ok else 503   # h.state: "held", "lost", "released", "idle"
    """

    #: ``"held"`` (for a leadership: leading), ``"lost"``, ``"released"`` (ended by this
    #: process: released, resigned, acked, done) or ``"idle"`` (a lock never acquired yet).
    state: str
    #: Why it was lost (``"expired"``, ``"revoked"``, ``"key_deleted"``, ``"closed"``) when
    #: ``state`` is ``"lost"``, else None.
    lost_reason: Optional[str]
    #: The lock's name (a lock set's member names joined by ``,``; a task's claim lock
    #: ``<queue>/claim/<slot>``; a period's ``<job>/slot/<n>``).
    name: str
    #: The hold's fencing token (0 when idle).
    fencing_token: int
    #: The lease the hold lives on (0 when idle).
    lease_id: int
    #: Seconds, from when the view was taken, that no other client can hold it; None when
    #: another may hold it already (or it was released).
    exclusive_for: Optional[float]
    #: Safe to act as the holder now: held, and its exclusivity not in doubt.
    ok: bool

    @classmethod
    def _from_native(cls, t: Tuple[str, Optional[str], str, int, int, Optional[float], bool]) -> "Health":
        return cls(*t)
