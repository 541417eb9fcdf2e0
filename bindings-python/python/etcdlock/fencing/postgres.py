"""The fence check on a psycopg 3 connection (``pip install "psycopg[binary]"``; not needed to
import etcdlock). Run it first in the transaction that writes: under READ COMMITTED the mark's
row lock makes a concurrent check wait for this transaction and then judge the committed mark."""

from typing import Any, Optional, Union

from . import _sql
from ._fence import Fence
from ._sql import StaleFence

__all__ = ["install", "check", "StaleFence"]


def install(conn: Any) -> None:
    """Creates the fence table if it is not there (in the connection's current transaction)."""
    conn.execute(_sql.DDL)


def check(conn: Any, fence: Union[Fence, str], resource: Optional[str] = None) -> int:
    """In the caller's transaction: raises ``StaleFence`` unless ``fence`` may write
    ``resource`` (the lock's name by default), and raises the mark to its token. Returns it."""
    f, res, params = _sql.args(fence, resource)
    row = conn.execute(_sql.CHECK.format(p="%s"), params).fetchone()
    if row is None:
        raise _sql.refused(f, res, conn.execute(_sql.MARK.format(p="%s"), (res,)).fetchone())
    return int(row[0])
