"""The fence check on a ``sqlite3`` connection. SQLite runs one writer at a time: begin the
transaction with ``BEGIN IMMEDIATE`` (or let the check's INSERT take the write lock), check,
write, commit."""

import sqlite3
from typing import Optional, Union

from . import _sql
from ._fence import Fence
from ._sql import StaleFence

__all__ = ["install", "check", "StaleFence"]


def install(conn: sqlite3.Connection) -> None:
    """Creates the fence table if it is not there."""
    conn.execute(_sql.DDL)


def check(conn: sqlite3.Connection, fence: Union[Fence, str], resource: Optional[str] = None) -> int:
    """In the caller's transaction: raises ``StaleFence`` unless ``fence`` may write
    ``resource`` (the lock's name by default), and raises the mark to its token. Returns it."""
    f, res, params = _sql.args(fence, resource)
    row = conn.execute(_sql.CHECK.format(p="?"), params).fetchone()
    if row is None:
        raise _sql.refused(f, res, conn.execute(_sql.MARK.format(p="?"), (res,)).fetchone())
    return int(row[0])
