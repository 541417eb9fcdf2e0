#!/usr/bin/env python3
"""What the database's fence check costs per transaction: the same small write transaction with
and without it, on PostgreSQL and on SQLite, through the Python helpers (etcdlock.fencing).

    python3 bench/fence.py [--transactions 2000] [--rounds 3] [--block 100] [--dbs postgres,sqlite-wal,sqlite]

    plain:   BEGIN; UPDATE bench_row SET n = n + 1 WHERE id = 1; COMMIT
    fenced:  BEGIN; <the fence check: etcdlock.fencing's one upsert of the mark>; the same UPDATE; COMMIT

PostgreSQL is a throwaway server (tests/pg_harness.py: initdb in a temp dir, 127.0.0.1, a free
port; fsync and synchronous_commit off, as for the tests) reached over TCP with psycopg 3, on a
connection in autocommit mode that sends BEGIN and COMMIT itself. SQLite is a file in a temp dir
on the stdlib's sqlite3, BEGIN IMMEDIATE: `sqlite-wal` in WAL mode with synchronous=NORMAL (the
usual setting for a busy database), `sqlite` with the defaults (rollback journal, synchronous=FULL:
an fsync per commit). The fence is one holder's, the same token every time (a holder writing
again: the `>=` path, which rewrites the mark's row); no etcd is involved (the check is the
database's).

Each round runs --transactions of each kind, in blocks of --block that alternate between plain
and fenced (which goes first swaps every block), so that the machine's drift hits both alike.
Per database: transactions per second of each kind (the transactions' own time), the ratio
fenced / plain per round (the median and the range over rounds), the latency's p50 and p99 over
every round, and what the check adds at the median. Needs the etcdlock Python package installed
(bindings-python/test.sh does) and psycopg 3 (`pip install "psycopg[binary]"`).
"""
from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests"))

from etcdlock.fencing import Fence, postgres, sqlite  # noqa: E402

FENCE = Fence("q", b"bench/accounts/7", 4242, 0xC0FFEE)
SETUP = [
    "CREATE TABLE bench_row (id INTEGER PRIMARY KEY, n BIGINT NOT NULL)",
    "INSERT INTO bench_row VALUES (1, 0)",
]
UPDATE = "UPDATE bench_row SET n = n + 1 WHERE id = 1"


class Postgres:
    name = "postgres"

    def __init__(self, tmp: str):
        import psycopg
        from pg_harness import Postgres as Server

        self.server = Server().start()
        self.conn = psycopg.connect(self.server.dsn, autocommit=True)
        postgres.install(self.conn)
        for sql in SETUP:
            self.conn.execute(sql)
        self.setting = f"PostgreSQL {self.conn.info.server_version // 10000} (tests/pg_harness.py: fsync=off, synchronous_commit=off), psycopg {psycopg.__version__}, TCP 127.0.0.1"

    def plain(self) -> None:
        c = self.conn
        c.execute("BEGIN")
        c.execute(UPDATE)
        c.execute("COMMIT")

    def fenced(self) -> None:
        c = self.conn
        c.execute("BEGIN")
        postgres.check(c, FENCE)
        c.execute(UPDATE)
        c.execute("COMMIT")

    def count(self) -> int:
        return self.conn.execute("SELECT n FROM bench_row WHERE id = 1").fetchone()[0]

    def close(self) -> None:
        self.conn.close()
        self.server.stop()


class Sqlite:
    def __init__(self, tmp: str, wal: bool):
        self.name = "sqlite-wal" if wal else "sqlite"
        self.conn = sqlite3.connect(os.path.join(tmp, f"{self.name}.db"), isolation_level=None)
        if wal:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
        sqlite.install(self.conn)
        for sql in SETUP:
            self.conn.execute(sql)
        mode = "WAL, synchronous=NORMAL" if wal else "rollback journal, synchronous=FULL"
        self.setting = f"SQLite {sqlite3.sqlite_version} ({mode}), a file in {tmp}, BEGIN IMMEDIATE"

    def plain(self) -> None:
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        c.execute(UPDATE)
        c.execute("COMMIT")

    def fenced(self) -> None:
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        sqlite.check(c, FENCE)
        c.execute(UPDATE)
        c.execute("COMMIT")

    def count(self) -> int:
        return self.conn.execute("SELECT n FROM bench_row WHERE id = 1").fetchone()[0]

    def close(self) -> None:
        self.conn.close()


def pct(sorted_ns: list[int], p: float) -> float:
    """The p-th percentile (nearest rank), in microseconds."""
    i = min(len(sorted_ns) - 1, max(0, round(p / 100 * len(sorted_ns)) - 1))
    return sorted_ns[i] / 1000


def measure(db, transactions: int, rounds: int, block: int) -> dict:
    kinds = {"plain": db.plain, "fenced": db.fenced}
    for run in kinds.values():  # warm-up: connections, caches, the mark's row
        for _ in range(min(200, transactions)):
            run()
    lat = {k: [] for k in kinds}
    ratios = []
    clock = time.perf_counter_ns
    for r in range(rounds):
        spent = {k: 0 for k in kinds}
        done = 0
        b = 0
        while done < transactions:
            n = min(block, transactions - done)
            order = ("plain", "fenced") if (r + b) % 2 == 0 else ("fenced", "plain")
            for kind in order:
                run, out = kinds[kind], lat[kind]
                for _ in range(n):
                    t0 = clock()
                    run()
                    t = clock() - t0
                    out.append(t)
                    spent[kind] += t
            done += n
            b += 1
        ratios.append((transactions / spent["fenced"]) / (transactions / spent["plain"]))
    expected = (rounds * transactions + min(200, transactions)) * 2
    assert db.count() == expected, f"{db.name}: {db.count()} rows updated, not {expected}"
    out = {"ratios": ratios}
    for kind, ns in lat.items():
        ns.sort()
        out[kind] = {"tx_s": len(ns) / (sum(ns) / 1e9), "p50": pct(ns, 50), "p99": pct(ns, 99)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--transactions", type=int, default=2000, help="of each kind, per round (default 2000)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--block", type=int, default=100, help="transactions of one kind before switching (default 100)")
    ap.add_argument("--dbs", default="postgres,sqlite-wal,sqlite")
    args = ap.parse_args()
    wanted = [d.strip() for d in args.dbs.split(",") if d.strip()]
    makers = {"postgres": Postgres, "sqlite-wal": lambda t: Sqlite(t, wal=True), "sqlite": lambda t: Sqlite(t, wal=False)}
    unknown = [d for d in wanted if d not in makers]
    if unknown:
        ap.error(f"unknown database(s) {unknown}: choose from {sorted(makers)}")
    load0 = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="etcdlock-fence-bench-") as tmp:
        for name in wanted:
            db = makers[name](tmp)
            try:
                rows.append((db.name, db.setting, measure(db, args.transactions, args.rounds, args.block)))
            finally:
                db.close()
    print(f"fence cost: {args.transactions} transactions of each kind x {args.rounds} rounds, blocks of {args.block}; "
          f"load average {load0:.2f} -> {os.getloadavg()[0]:.2f}")
    print(f"{'database':<11} {'kind':<7} {'tx/s':>8} {'p50 us':>8} {'p99 us':>8}   fenced/plain tx/s: median [min-max] of rounds; +us at p50")
    for name, _, m in rows:
        r = sorted(m["ratios"])
        for kind in ("plain", "fenced"):
            k = m[kind]
            tail = ""
            if kind == "fenced":
                tail = f"   {statistics.median(r):.2f} [{r[0]:.2f}-{r[-1]:.2f}]; +{k['p50'] - m['plain']['p50']:.0f} us"
            print(f"{name:<11} {kind:<7} {k['tx_s']:>8.0f} {k['p50']:>8.0f} {k['p99']:>8.0f}{tail}")
    for name, setting, _ in rows:
        print(f"  {name}: {setting}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
