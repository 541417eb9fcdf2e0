"""The fence table and statement, shared by the PostgreSQL and SQLite helpers (both speak
``INSERT .. ON CONFLICT .. DO UPDATE .. WHERE .. RETURNING``)."""

from typing import Any, Optional, Tuple, Union

from .._errors import NotHeld
from ._fence import Fence

TABLE = "etcdlock_fence"

DDL = f"""CREATE TABLE IF NOT EXISTS {TABLE} (
    resource TEXT PRIMARY KEY,
    cluster  TEXT NOT NULL,
    token    BIGINT NOT NULL
)"""

# Inserts the mark, or raises it to the fence's token if the fence is of the same cluster and
# not older: one row back when the fence may write, none when it is stale (or of another
# cluster). In PostgreSQL the conflicting row is locked until the caller's transaction ends, so
# a concurrent check waits and then judges the committed mark (READ COMMITTED suffices).
CHECK = f"""INSERT INTO {TABLE} (resource, cluster, token) VALUES ({{p}}, {{p}}, {{p}})
ON CONFLICT (resource) DO UPDATE SET token = excluded.token
WHERE {TABLE}.cluster = excluded.cluster AND {TABLE}.token <= excluded.token
RETURNING token"""

MARK = f"SELECT cluster, token FROM {TABLE} WHERE resource = {{p}}"


class StaleFence(NotHeld):
    """The database refused the fence: a newer holder of the lock has written (or the fence is
    of another etcd cluster). Nothing the transaction writes may commit: roll it back."""


def args(fence: Union[Fence, str], resource: Optional[str]) -> Tuple[Fence, str, Tuple[Any, ...]]:
    f = Fence.parse(fence)
    res = f.resource if resource is None else resource
    if not isinstance(res, str) or not res:
        raise ValueError("resource must be a non-empty str")
    return f, res, (res, format(f.cluster, "x"), f.token)


def refused(f: Fence, resource: str, mark: Optional[Tuple[str, int]]) -> StaleFence:
    if mark is not None and mark[0] != format(f.cluster, "x"):
        return StaleFence(
            f"the fence for {resource!r} is of etcd cluster {f.cluster:x}, but the mark was set by cluster {mark[0]}: "
            f"tokens of two clusters are not comparable (was etcd restored or replaced?); an operator must reset the mark: "
            f"DELETE FROM {TABLE} WHERE resource = '{resource}'"
        )
    return StaleFence(f"stale fence for {resource!r}: token {f.token}, but a newer holder wrote with token {mark[1] if mark else '?'}")
