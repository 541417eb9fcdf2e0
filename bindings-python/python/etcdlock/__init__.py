"""etcdlock: leases with keepalive, resilient watches and a fair, fenced mutex on etcd.

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

from . import _native, _ports
from ._aio import AsyncClient, AsyncLease, AsyncLock, AsyncWatch
from ._common import LockState, QueueEntry, WatchEvent
from ._errors import AuthError, Closed, Compacted, Error, LockLost, LockTimeout, NotHeld, Timeout, Unavailable, WrongContextError
from ._sync import Client, Lease, Lock, Watch

__version__: str = _native.__version__

#: Seconds the exit hook may spend closing clients (revoking leases) and stopping the runtime.
EXIT_TIMEOUT = 2.0


def _runtime_started() -> bool:
    """Whether this process's background runtime runs (tests: import must not start it)."""
    return _native._runtime_started()


@_atexit.register
def _at_exit() -> None:
    # While the interpreter is still whole: stop the callback thread, then close every client
    # and stop the runtime, so no runtime thread outlives Python or touches it at shutdown.
    _ports.stop_thread_port(1.0)
    _native._shutdown(EXIT_TIMEOUT)


__all__ = [
    "Client",
    "Lock",
    "Lease",
    "Watch",
    "AsyncClient",
    "AsyncLock",
    "AsyncLease",
    "AsyncWatch",
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
]
