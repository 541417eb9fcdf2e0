"""The library's events on the standard logger ``logging.getLogger("etcdlock")``.

The core emits an event (a lock lost, a lease expired, a stream reopened, each acquisition and
release at DEBUG); a native sink queues it, and the process's callback thread (``_ports``)
passes it to ``logger.handle`` here. The runtime's threads never take the GIL for it. A
``NullHandler`` on the logger means nothing is printed unless the application configures
logging. Each record's message is the event's text (its fixed message, then ``name=value`` for
each field); its attributes add ``area`` (``"lock"``, ``"lease"``, ``"watch"`` or
``"connection"``), ``event`` (the fixed message), ``fields`` (a dict) and each field by name
(``lock``, ``token``, ``reason``, ``held_ms``, ``lease``, ``key``, ``member``...).

Levels: the native side only queues events the logger is enabled for and that reach a handler
(other than the NullHandler), as read when a client is created and at each ``lock()`` /
``lease()`` call: after ``logger.setLevel`` or ``logging.basicConfig`` the next such call picks
the change up. Until logging is configured, no thread is started for it and nothing is sent.
"""

import logging
import os
from typing import Any, Dict, Optional

from . import _native

logger = logging.getLogger("etcdlock")
logger.addHandler(logging.NullHandler())

TRACE = 5
# Core level numbers (1 = error ... 5 = trace) and the logging levels they map to.
_LEVELS = ((5, TRACE), (4, logging.DEBUG), (3, logging.INFO), (2, logging.WARNING), (1, logging.ERROR))
# LogRecord attributes that a field must not overwrite (it stays in ``fields``).
_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "area", "event", "fields"}

_started_pid: Optional[int] = None
_level: int = -1


def _handled() -> bool:
    """Whether a record of this logger reaches a handler other than our NullHandler."""
    c: Optional[logging.Logger] = logger
    while c is not None:
        if any(not isinstance(h, logging.NullHandler) for h in c.handlers):
            return True
        if not c.propagate:
            return False
        c = c.parent
    return False


def _wanted() -> int:
    if not _handled():
        return 0
    for core, py in _LEVELS:
        if logger.isEnabledFor(py):
            return core
    return 0


def refresh() -> None:
    """Starts the bridge in this process on first use, then tells it the logger's level."""
    global _started_pid, _level
    if _started_pid != os.getpid():
        level = _wanted()
        if level == 0:
            return  # logging is not configured: no thread, nothing sent from the core
        from ._ports import thread_port  # the callback thread delivers the records

        _native._log_start(thread_port().native, level)
        _started_pid, _level = os.getpid(), level
        return
    level = _wanted()
    if level != _level:
        _level = level
        _native._log_level(level)


def emit(value: Any) -> None:
    """One record from the native sink: ``(level, area, message, text, fields)``."""
    level, area, message, text, fields = value
    if not logger.isEnabledFor(level):
        return
    extra: Dict[str, Any] = {k: v for k, v in fields.items() if k not in _RESERVED}
    extra.update(area=area, event=message, fields=fields)
    record = logger.makeRecord(logger.name, level, "(etcdlock)", 0, "%s", (text,), None, extra=extra)
    logger.handle(record)
