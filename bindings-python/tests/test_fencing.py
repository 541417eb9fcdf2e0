"""Fencing at the database (etcdlock.fencing): the mark is checked and raised inside the
writer's own transaction, on a real PostgreSQL (tests/pg_harness.py: initdb in a temp dir,
127.0.0.1, a free port) and on SQLite."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import etcdlock
from etcdlock.fencing import Fence, StaleFence, postgres
from etcdlock.fencing import sqlite as sqlite_fence

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is installed by bindings-python/test.sh")
from pg_harness import Postgres  # noqa: E402  (tests/, on the path from conftest)


@pytest.fixture(scope="module")
def pg():
    with Postgres() as server:
        yield server


def cluster_of(etcd) -> int:
    return int(json.loads(etcd.ctl("get", "x", "-w", "json"))["header"]["cluster_id"])


def fence_of(lock, name: str, cluster: int) -> Fence:
    return Fence("q", name.encode(), lock.fencing_token, cluster)


def connect(pg):
    conn = psycopg.connect(pg.dsn, autocommit=True)
    postgres.install(conn)
    conn.execute("CREATE TABLE IF NOT EXISTS ledger (resource TEXT, writer TEXT, token BIGINT)")
    return conn


def write(conn, fence, writer: str, resource=None) -> None:
    """One transaction: the check, then the write."""
    fence = Fence.parse(fence)
    with conn.transaction():
        postgres.check(conn, fence, resource)
        conn.execute("INSERT INTO ledger VALUES (%s, %s, %s)", (resource or fence.resource, writer, fence.token))


# covers: FENCE-DB-001
def test_holders_in_turn_commit_and_an_older_token_is_refused(pg, etcd, client, prefix):
    conn, cluster = connect(pg), cluster_of(etcd)
    name = f"{prefix}/acct"
    lock = client.lock(name, ttl=10)
    with lock:
        first = fence_of(lock, name, cluster)
        write(conn, first, "a")
        write(conn, first, "a-again")  # the same holder's repeated writes pass (>=)
    with lock:
        second = fence_of(lock, name, cluster)
        write(conn, str(second), "b")  # the string form, as another process would get it
    with pytest.raises(StaleFence, match="newer holder"):
        write(conn, first, "late")
    rows = conn.execute("SELECT writer FROM ledger WHERE resource = %s ORDER BY token, writer", (name,)).fetchall()
    assert [r[0] for r in rows] == ["a", "a-again", "b"], "the refused transaction committed"
    # Two resources keep independent marks; another cluster's fence is refused, naming the reset.
    write(conn, first, "other", resource=f"{name}-other")
    alien = first._replace(cluster=cluster ^ 1, token=second.token + 1000)
    with pytest.raises(StaleFence, match="reset the mark"):
        write(conn, alien, "alien")
    assert issubclass(StaleFence, etcdlock.NotHeld)
    with pytest.raises(ValueError):
        Fence.parse("etcdlock-fence.v1.q.1.0.61")


# covers: FENCE-DB-001
def test_sqlite_refuses_an_older_token_too(tmp_path, etcd, client, prefix):
    conn = sqlite3.connect(tmp_path / "db.sqlite", isolation_level=None)
    sqlite_fence.install(conn)
    conn.execute("CREATE TABLE ledger (writer TEXT)")
    name, cluster = f"{prefix}/sq", cluster_of(etcd)
    lock = client.lock(name, ttl=10)

    def txn(fence, writer):
        conn.execute("BEGIN IMMEDIATE")
        try:
            sqlite_fence.check(conn, fence)
            conn.execute("INSERT INTO ledger VALUES (?)", (writer,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    with lock:
        old = fence_of(lock, name, cluster)
        txn(old, "a")
        txn(old, "a2")
    with lock:
        txn(fence_of(lock, name, cluster), "b")
    with pytest.raises(StaleFence):
        txn(old, "late")
    assert [r[0] for r in conn.execute("SELECT writer FROM ledger")] == ["a", "a2", "b"]


HOLDER = textwrap.dedent("""
    import sys, etcdlock, psycopg
    from etcdlock.fencing import Fence, postgres, StaleFence
    endpoints, name, dsn, cluster = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    client = etcdlock.Client(endpoints)
    lock = client.lock(name, ttl=2)
    lock.acquire()
    conn = psycopg.connect(dsn)
    token = lock.fencing_token
    print(token, flush=True)
    sys.stdin.readline()  # frozen meanwhile
    try:
        with conn.transaction():
            postgres.check(conn, Fence("q", name.encode(), token, cluster))
            conn.execute("INSERT INTO ledger VALUES (%s, 'paused', %s)", (name, token))
        print("committed", flush=True)
    except StaleFence as e:
        print("refused", flush=True)
""")


# covers: FENCE-PAUSE-001
def test_a_holder_paused_past_its_ttl_is_refused_by_the_database(pg, etcd, client, prefix):
    conn, cluster = connect(pg), cluster_of(etcd)
    name = f"{prefix}/paused"
    a = subprocess.Popen([sys.executable, "-c", HOLDER, etcd.endpoints, name, pg.dsn, str(cluster)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        token_a = int(a.stdout.readline())
        os.kill(a.pid, signal.SIGSTOP)
        lock = client.lock(name, ttl=10)
        assert lock.acquire(timeout=10), "the paused holder's lease did not end"
        b = fence_of(lock, name, cluster)
        assert b.token > token_a
        write(conn, b, "next")
        lock.release()
    finally:
        os.kill(a.pid, signal.SIGCONT)
    out, _ = a.communicate("go\n", timeout=30)
    assert out.strip() == "refused"
    rows = conn.execute("SELECT writer FROM ledger WHERE resource = %s", (name,)).fetchall()
    assert [r[0] for r in rows] == ["next"]


# covers: FENCE-CONCURRENT-001
def test_eight_writers_under_read_committed_never_commit_a_stale_token(pg, etcd, prefix):
    name, cluster = f"{prefix}/busy", cluster_of(etcd)
    conn = connect(pg)
    committed, refused = [], []
    tokens = list(range(100, 140))
    lock = threading.Lock()

    def writer(i: int) -> None:
        c = psycopg.connect(pg.dsn)  # READ COMMITTED, PostgreSQL's default
        for token in tokens[i::8]:
            f = Fence("q", name.encode(), token, cluster)
            try:
                with c.transaction():
                    postgres.check(c, f)
                    c.execute("INSERT INTO ledger VALUES (%s, %s, %s)", (name, f"w{i}", token))
                with lock:
                    committed.append(token)
            except StaleFence:
                with lock:
                    refused.append(token)
        c.close()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    rows = conn.execute("SELECT token FROM ledger WHERE resource = %s", (name,)).fetchall()
    seen = [r[0] for r in rows]
    assert sorted(seen) == sorted(committed) and len(committed) + len(refused) == len(tokens)
    # In commit order (the ledger's physical order under one writer at a time), tokens never go back.
    in_order = [r[0] for r in conn.execute("SELECT token FROM ledger WHERE resource = %s ORDER BY ctid", (name,)).fetchall()]
    assert in_order == sorted(in_order), f"a stale token committed after a newer one: {in_order}"
