"""etcdlock: leases with keepalive, resilient watches, and fair, fenced locks on etcd: a mutex,
leader election, a semaphore and a read-write lock; lock sets (several names at once, one
token); pools of named slots; a service registry; and a local copy of a prefix kept in step
with etcd (``client.cache``).

Sync::

    import etcdlock
    with etcdlock.Client("http://127.0.0.1:2379") as client:
        with client.lock("orders", ttl=10, timeout=5.0) as lock:
            client.put("state/orders/last", "42", if_held=lock)  # never under "orders/"

Async: the same with ``etcdlock.AsyncClient``, ``async with`` and ``await``.

Importing starts no thread; the first client starts the library's one background runtime,
shared by every client. At interpreter exit, every client is closed (its leases revoked, so
its locks are released) within a bounded time.
"""

import atexit as _atexit
from typing import Optional as _Optional

from . import _native, _ports
from ._aio import AsyncClient, AsyncLease, AsyncLock, AsyncWatch
from ._aio_recipes import AsyncElection, AsyncLeadership, AsyncObserver, AsyncRWLock
from ._aio_registry import AsyncDiscovery, AsyncRegistration
from ._aio_cache import AsyncCache, AsyncCacheEvents
from ._cache import Cache, CacheEvent, CacheEvents, CacheSnapshot
from ._args import MAX_PERMITS
from ._common import Instance, Instances, Leader, LockState, QueueEntry, WatchEvent
from ._health import Health
from ._errors import AuthError, Closed, Compacted, Error, LockLost, LockTimeout, NotHeld, Timeout, Unavailable, WouldBlock, WrongContextError
from ._recipes import Election, Leadership, Observer, RWLock
from ._registry import Discovery, Registration
from ._sync import Client, Lease, Lock, Watch
from ._tasks import Task, TaskQueue
from ._aio_tasks import AsyncTask, AsyncTaskQueue
from ._tasks_common import DeadTask, QueueStats
from ._once import AsyncOnce, Once, OnceSlot
from ._pool import Pool, PoolHolding, SlotInfo
from ._aio_pool import AsyncPool, AsyncPoolHolding
from ._lockset import MAX_LOCK_SET, LockSet, SetMember, permit, read, write
from ._aio_lockset import AsyncLockSet
from .fencing import Fence, StaleFence

__version__: str = _native.__version__


def grpc_endpoint(addr: str) -> bytes:
    """The value that makes a registered instance resolvable by etcd's Go gRPC resolver
    (``go.etcd.io/etcd/client/v3/naming/resolver``, target ``etcd:///<service>``)::

        client.register("svc/api", "node-1", etcdlock.grpc_endpoint("10.0.0.7:50051"))
    """
    if not isinstance(addr, str):
        raise TypeError(f"addr must be a str, not {type(addr).__name__}")
    return _native.grpc_endpoint(addr)


def grpc_endpoint_addr(value: bytes) -> _Optional[str]:
    """The address in a ``grpc_endpoint`` value (or one etcd's Go endpoints manager wrote),
    else None (also ``Instance.grpc_addr``)."""
    addr: _Optional[str] = _native.grpc_endpoint_addr(bytes(value))
    return addr

#: Seconds the exit hook may spend closing clients (revoking leases) and stopping the runtime.
EXIT_TIMEOUT = 2.0


def _runtime_started() -> bool:
    """Whether this process's background runtime runs (tests: import must not start it)."""
    return _native._runtime_started()


def set_caller_spin(seconds: float) -> None:
    """How long a thread waiting for the library's reply may keep its CPU before it sleeps, for
    every later call in this process: off (0) by default; ``ETCDLOCK_SPIN_US`` sets it in
    microseconds. Spinning saves the wake-up of a sleeping thread when a local etcd answers
    quickly, for CPU: worth it on a host with idle cores, not on a busy one. It happens only
    around the time a reply is due, only while recent replies came within it, and by at most
    half the CPUs' worth of threads. ``ValueError`` (and no change) below 0 or above 0.01::

        import etcdlock
        etcdlock.set_caller_spin(0.001)    # up to 1 ms per call
        assert etcdlock.caller_spin() == 0.001
    """
    _native._set_caller_spin(float(seconds))


def caller_spin() -> float:
    """The caller spin in effect, in seconds (see :func:`set_caller_spin`)."""
    return _native._caller_spin()


@_atexit.register
def _at_exit() -> None:
    # While the interpreter is still whole: stop the callback thread, then close every client
    # and stop the runtime, so no runtime thread outlives Python or touches it at shutdown.
    _ports.stop_thread_port(1.0)
    _native._shutdown(EXIT_TIMEOUT)


__all__ = [
    "set_caller_spin",
    "caller_spin",
    "Client",
    "Lock",
    "Lease",
    "Watch",
    "AsyncClient",
    "AsyncLock",
    "AsyncLease",
    "AsyncWatch",
    "Cache",
    "CacheEvents",
    "CacheEvent",
    "CacheSnapshot",
    "AsyncCache",
    "AsyncCacheEvents",
    "Election",
    "Leadership",
    "Observer",
    "RWLock",
    "AsyncElection",
    "AsyncLeadership",
    "AsyncObserver",
    "AsyncRWLock",
    "Registration",
    "Discovery",
    "AsyncRegistration",
    "AsyncDiscovery",
    "Instance",
    "Instances",
    "grpc_endpoint",
    "grpc_endpoint_addr",
    "Leader",
    "Health",
    "MAX_PERMITS",
    "WatchEvent",
    "LockState",
    "QueueEntry",
    "Error",
    "LockTimeout",
    "Timeout",
    "LockLost",
    "NotHeld",
    "Unavailable",
    "Compacted",
    "Closed",
    "AuthError",
    "WrongContextError",
    "WouldBlock",
    "TaskQueue",
    "Task",
    "AsyncTaskQueue",
    "AsyncTask",
    "QueueStats",
    "DeadTask",
    "Once",
    "AsyncOnce",
    "OnceSlot",
    "Pool",
    "PoolHolding",
    "AsyncPool",
    "AsyncPoolHolding",
    "SlotInfo",
    "LockSet",
    "AsyncLockSet",
    "SetMember",
    "read",
    "write",
    "permit",
    "MAX_LOCK_SET",
    "Fence",
    "StaleFence",
]
