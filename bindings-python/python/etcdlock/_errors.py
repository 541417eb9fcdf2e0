"""The exception hierarchy. Every error etcdlock raises on purpose is an ``etcdlock.Error``,
except bad arguments (``TypeError``/``ValueError``) and interruptions (``KeyboardInterrupt``,
``asyncio.CancelledError``)."""

from typing import Optional


class Error(Exception):
    """Base class of etcdlock's errors."""


class LockTimeout(Error, TimeoutError):
    """The lock was not acquired before the acquire's timeout. Nothing is left behind."""


class Timeout(Error, TimeoutError):
    """A request's deadline (the client's ``timeout``) passed before etcd answered: the request
    may or may not have been applied."""


class LockLost(Error):
    """The lease or the lock key was lost: the lock is not, or no longer, held."""


class NotHeld(Error):
    """The operation needs a held lock and it is not held (never was, released, or lost)."""


class Unavailable(Error, ConnectionError):
    """etcd could not be reached (or had no leader) in time."""


class Compacted(Error):
    """A watch's start revision was compacted away; history starts at ``compact_revision``."""

    def __init__(self, message: str = "revision compacted", compact_revision: Optional[int] = None) -> None:
        super().__init__(message)
        self.compact_revision = compact_revision


class Closed(Error):
    """The client was closed."""


class AuthError(Error):
    """Authentication or permission failure."""


class WouldBlock(Error):
    """Someone else has it and this call does not wait: e.g. an instance name another
    registrant holds (``register(..., replace=True)`` takes it over). Nothing was changed."""


class WrongContextError(Error, RuntimeError):
    """Called where it cannot work: an object inherited through ``fork()`` used in the child,
    or a blocking call made inside a running event loop or a library thread."""


__all__ = [
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
]
