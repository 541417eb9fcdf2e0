"""Pieces shared by the sync and async APIs."""

import asyncio
import os
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Sequence, Union

from . import _args, _log, _native
from ._errors import WrongContextError
from ._health import Health

if TYPE_CHECKING:
    from .fencing import Fence


class WatchEvent(NamedTuple):
    """One change seen by a watch."""

    type: str
    """``"put"`` or ``"delete"``."""
    key: bytes
    value: bytes
    """The new value (empty for a delete)."""
    revision: int
    """The change's revision (the key's mod revision)."""


def refuse_in_event_loop(what: str) -> None:
    """A blocking wait on an event loop's thread stalls the loop, and deadlocks when what it
    waits for needs that loop (a lock held by one of its tasks): refuse it clearly."""
    if asyncio._get_running_loop() is not None:
        raise WrongContextError(
            f"{what} blocks, and was called from a running asyncio event loop's thread, where it "
            "could deadlock: use etcdlock.AsyncClient, or run it in a thread (asyncio.to_thread)"
        )


DEFAULT_TTL = 10
DEFAULT_TIMEOUT = 5.0


PathArg = Union[str, "os.PathLike[str]"]


def native_client(
    endpoints: Union[str, Sequence[str]],
    timeout: float,
    user: Optional[str],
    password: Optional[str],
    ca_file: Optional[PathArg] = None,
    cert_file: Optional[PathArg] = None,
    key_file: Optional[PathArg] = None,
    server_name: Optional[str] = None,
    client_name: Optional[str] = None,
) -> "_native.Client":
    """The native client for the checked arguments of ``Client`` / ``AsyncClient``."""
    _log.refresh()
    eps = _args.endpoints(endpoints)
    t = _args.seconds(timeout, "timeout")
    user, password = _args.credentials(user, password)
    ca = _args.path(ca_file, "ca_file")
    cert = _args.path(cert_file, "cert_file")
    key = _args.path(key_file, "key_file")
    name = _args.server_name(server_name)
    return _native.Client(eps, t, user, password, ca, cert, key, name, _args.client_name(client_name))


class QueueEntry(NamedTuple):
    """One acquisition in a lock's queue (``client.inspect(name)``)."""

    key: bytes
    """The queue key, ``<name>/<lease hex>[-n]``."""
    fencing_token: int
    """The key's create revision: the token it has, or will have once it holds."""
    lease: int
    """The lease the key is bound to."""
    ttl: Optional[int]
    """Seconds the lease has left on the server (None: it is gone, and the key with it)."""
    value: bytes
    """What the acquire attached (``client.lock(name, value=...)``); empty for none, and for
    ``etcdctl lock`` or Go's ``concurrency.Mutex``."""
    mode: str = ""
    """``"read"`` or ``"write"`` for a read-write lock's key, ``"permits=N"`` for a semaphore's of
    N (``"permits=N,count=k"`` for one that takes k > 1 permits), ``""`` for a lock's or an
    election's (the value comes without it)."""


class LockState(NamedTuple):
    """A lock's queue as etcd has it at one revision (``client.inspect(name)``)."""

    holder: Optional[QueueEntry]
    """The holder (the oldest key), None when the lock is free; for a semaphore or readers, the
    first of ``holders``."""
    waiters: List[QueueEntry]
    """The keys that do not hold, in queue order."""
    revision: int
    """The etcd revision the queue was read at."""
    holders: List[QueueEntry] = []
    """Every key that holds, oldest first: the holder alone for a lock, an election or a writer;
    up to N for a semaphore of N; the readers older than every writer."""


class Leader(NamedTuple):
    """An election's leader (``election.leader()``, ``election.observe()``): the candidate with
    the lowest create revision."""

    value: bytes
    """The proposal: what ``campaign`` proposed, or the last ``proclaim``."""
    key: bytes
    """The leader's key, ``<name>/<lease hex>``."""
    revision: int
    """The key's create revision: the leader's fencing token, bigger in every later term."""
    lease: int
    """The lease the key is bound to."""


class Instance(NamedTuple):
    """One registered instance of a service (``client.instances()``, ``client.discover()``)."""

    name: bytes
    """The instance's name: its key after ``<service>/``."""
    value: bytes
    """What it registered (for etcd's Go gRPC resolver: ``etcdlock.grpc_endpoint(addr)``)."""
    lease: int
    """The lease its key is bound to (0 for a key put without one)."""
    mod_revision: int
    """The revision of its latest put."""

    @property
    def grpc_addr(self) -> Optional[str]:
        """The address, if the value is a gRPC endpoint (``grpc_endpoint`` or etcd's Go
        endpoints manager wrote it), else None."""
        addr: Optional[str] = _native.grpc_endpoint_addr(self.value)
        return addr


class Instances(NamedTuple):
    """A service's instances at one revision, ordered by name."""

    instances: List[Instance]
    revision: int
    """The etcd revision this set is the state at."""

    def as_dict(self) -> Dict[bytes, bytes]:
        """Instance name → value."""
        return {i.name: i.value for i in self.instances}


def instances(raw: Any) -> Instances:
    revision, found = raw
    return Instances([Instance(*i) for i in found], revision)


def leader(raw: Any) -> Optional[Leader]:
    return None if raw is None else Leader(*raw)


def lock_state(raw: Any) -> LockState:
    holders, waiters, revision = raw
    held = [QueueEntry(*h) for h in holders]
    return LockState(held[0] if held else None, [QueueEntry(*w) for w in waiters], revision, held)


def fence(raw: Any) -> "Fence":
    """The ``etcdlock.fencing.Fence`` of a native ``(kind, name, token, cluster)``."""
    from .fencing import Fence

    return Fence(*raw)


def fence_arg(value: object) -> str:
    """A fence argument (a ``Fence`` or its string form) as its canonical string form;
    ``TypeError`` / ``ValueError`` before anything is sent."""
    from .fencing import Fence

    return str(Fence.parse(value))  # type: ignore[arg-type]


class LockView:
    """The local, non-blocking view of a lock, shared by ``Lock`` and ``AsyncLock``."""

    _n: "_native.Lock"

    def is_held(self) -> bool:
        """Cheap local check: held, and neither released nor known lost (the lease's
        conservative local deadline has not passed)."""
        return self._n.is_held()

    @property
    def fencing_token(self) -> Optional[int]:
        """The create revision of the lock key while held (increases with every holder), else
        None. Pass it to resources that must reject stale holders."""
        return self._n.fencing_token()

    @property
    def key(self) -> Optional[bytes]:
        """The queue key of the latest acquisition (None before the first)."""
        return self._n.key()

    @property
    def lease_id(self) -> Optional[int]:
        """The ID of the latest acquisition's lease (None before the first). The client's
        locks with one TTL share one lease, kept alive while any of them is in use."""
        return self._n.lease_id()

    @property
    def name(self) -> bytes:
        return self._n.name

    @property
    def lost_reason(self) -> Optional[str]:
        """Why the latest acquisition was lost ("expired", "revoked", "key_deleted",
        "closed"), or None."""
        return self._n.lost_reason()

    def health(self) -> Health:
        """The latest acquisition's :class:`~etcdlock.Health` (``ok`` while held and not in
        doubt; ``"idle"`` before the first acquisition): what a readiness probe answers."""
        return Health._from_native(self._n.health())


class LeaseView:
    """The local, non-blocking view of a lease, shared by ``Lease`` and ``AsyncLease``."""

    _n: "_native.Lease"

    @property
    def id(self) -> int:
        return self._n.id

    @property
    def ttl(self) -> int:
        """The TTL the server granted, in seconds."""
        return self._n.ttl

    def is_alive(self) -> bool:
        """Cheap local check: not lost, and the conservative local deadline has not passed."""
        return self._n.is_alive()

    def remaining(self) -> float:
        """Seconds before the local deadline (0 once lost)."""
        return self._n.remaining()

    @property
    def lost_reason(self) -> Optional[str]:
        return self._n.lost_reason()
