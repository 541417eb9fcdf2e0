"""The demo's counter in PostgreSQL: a throwaway server (tests/pg_harness.py), the table the
Python workers increment in a transaction that first checks the lock's fence against the
database's mark (etcdlock.fencing.postgres), and the checks of what the database committed.

Each Python worker, holding the lock, runs after its work:
    BEGIN; <fence check>; UPDATE demo_counter SET n = n + 1; INSERT INTO demo_writes ...; COMMIT
and reports ``db_wrote`` or ``db_refused`` (StaleFence). The frozen holder (a Python worker when
there is one) resumes after newer holders wrote: the database refuses its write."""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

from pg_harness import Postgres  # noqa: E402

SCHEMA = [
    "CREATE TABLE demo_counter (id int PRIMARY KEY, n bigint NOT NULL)",
    "INSERT INTO demo_counter VALUES (1, 0)",
    "CREATE TABLE demo_writes (seq bigserial PRIMARY KEY, worker text NOT NULL, token bigint NOT NULL)",
]


class Database:
    """``with Database() as db:`` a PostgreSQL with the demo's tables; ``db.dsn`` for workers."""

    def __enter__(self) -> "Database":
        import psycopg
        from etcdlock.fencing import postgres
        self.pg = Postgres().start()
        with psycopg.connect(self.pg.dsn, autocommit=True) as conn:
            postgres.install(conn)
            for sql in SCHEMA:
                conn.execute(sql)
        return self

    @property
    def dsn(self) -> str:
        return self.pg.dsn

    def read(self) -> tuple[int, list[tuple[int, str, int]]]:
        """The counter, and every committed write (seq, worker, token) in commit order."""
        import psycopg
        with psycopg.connect(self.pg.dsn) as conn:
            n = conn.execute("SELECT n FROM demo_counter WHERE id = 1").fetchone()[0]
            rows = conn.execute("SELECT seq, worker, token FROM demo_writes ORDER BY seq").fetchall()
        return n, [tuple(r) for r in rows]

    def __exit__(self, *exc) -> None:
        self.pg.stop()


def checks(db: Database, events: list[dict], done: dict) -> list[tuple[bool, str]]:
    n, rows = db.read()
    wrote = [e for e in events if e["ev"] == "db_wrote"]
    tokens = [r[2] for r in rows]
    results = [
        (n == len(wrote) == len(rows) and n > 0,
         f"PostgreSQL: counter = {n} equals the {len(wrote)} fenced increments the workers saw commit"),
        (all(a <= b for a, b in zip(tokens, tokens[1:])),
         "PostgreSQL: the committed writes' fencing tokens never go down (no write after a newer holder's)"),
    ]
    f = done.get("freeze")
    if f and f["label"].startswith("python"):
        mine = [e for e in events if e["label"] == f["label"] and e.get("token") == f["token"]]
        refused = [e for e in mine if e["ev"] == "db_refused"]
        # Only the Python workers write to PostgreSQL: a newer holder may not have written there
        # while it was frozen, and then its late write is rightly accepted (nothing newer to be
        # refused for; the order of tokens is checked above either way).
        newer = [e for e in events if e["ev"] == "db_wrote" and e.get("token", 0) > f["token"] and e["t"] < f["t_cont"]]
        if newer:
            results.append((bool(refused) and not any(e["ev"] == "db_wrote" for e in mine),
                            f"PostgreSQL refused the frozen holder {f['label']}'s late write (token {f['token']}) after "
                            f"{newer[0]['label']} wrote with token {newer[0]['token']}: "
                            + (refused[0].get("error", "") if refused else "it was not refused")))
        else:
            results.append((True, f"no newer holder reported a write to PostgreSQL while {f['label']} was frozen: its late "
                                         f"write (token {f['token']}) had nothing newer to be refused for, and was "
                                         + ("refused" if refused else "accepted")))
    return results
