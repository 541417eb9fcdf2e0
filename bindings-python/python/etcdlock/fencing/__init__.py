"""Fencing at the database: a high-water mark per resource, checked and raised by one statement
inside the caller's own transaction, before its writes, so that the writes commit only if no
newer holder of the lock has written. ``etcdlock.fencing.postgres`` (psycopg 3) and
``etcdlock.fencing.sqlite`` (the standard library) run it on your connection::

    from etcdlock.fencing import postgres
    postgres.install(conn)                       # once: CREATE TABLE IF NOT EXISTS etcdlock_fence
    with client.lock("accounts/7") as lock:
        with conn.transaction():
            postgres.check(conn, lock.fence())   # StaleFence if a newer holder has written
            conn.execute("UPDATE accounts SET balance = balance - 5 WHERE id = 7")

The mark is ``>=``: the same holder's repeated writes pass. A fence of another etcd cluster is
refused with a message saying an operator must reset the mark (a restored etcd's revisions are
not comparable). See docs/design.md, "Fencing at the database"."""

from ._fence import Fence
from ._sql import StaleFence

__all__ = ["Fence", "StaleFence"]
