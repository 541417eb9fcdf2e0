"""Pieces shared by the sync and async APIs."""

import asyncio
from typing import NamedTuple

from ._errors import WrongContextError


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
