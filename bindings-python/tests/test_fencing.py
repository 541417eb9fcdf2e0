"""Fencing at the database (etcdlock.fencing): the mark is checked and raised inside the
writer's own transaction, on a real PostgreSQL (tests/pg_harness.py: initdb in a temp dir,
127.0.0.1, a free port) and on SQLite; fences from ``lock.fence()`` and a claimed task's
``fence()``, ``client.check_fence``, and the string form shared with the command line."""

import asyncio
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


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cli() -> str:
    """The `etcdlock` command line (built here when missing: the string form is checked
    against it, never skipped)."""
    path = os.environ.get("ETCDLOCK_CLI") or os.path.join(REPO, "target", "release", "etcdlock")
    if not os.access(path, os.X_OK):
        subprocess.run(["cargo", "build", "--release", "-p", "etcdlock-cli"], cwd=REPO, check=True, timeout=1800)
    return path


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
        first = lock.fence()
        assert first == Fence("q", name.encode(), lock.fencing_token, cluster)
        write(conn, first, "a")
        write(conn, first, "a-again")  # the same holder's repeated writes pass (>=)
    with lock:
        second = lock.fence()
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
    name = f"{prefix}/sq"
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
        old = lock.fence()
        txn(old, "a")
        txn(old, "a2")
    with lock:
        txn(lock.fence(), "b")
    with pytest.raises(StaleFence):
        txn(old, "late")
    assert [r[0] for r in conn.execute("SELECT writer FROM ledger")] == ["a", "a2", "b"]


HOLDER = textwrap.dedent("""
    import sys, etcdlock, psycopg
    from etcdlock.fencing import Fence, postgres, StaleFence
    endpoints, name, dsn = sys.argv[1], sys.argv[2], sys.argv[3]
    client = etcdlock.Client(endpoints)
    lock = client.lock(name, ttl=2)
    lock.acquire()
    conn = psycopg.connect(dsn)
    fence = lock.fence()
    print(fence, flush=True)
    sys.stdin.readline()  # frozen meanwhile
    try:
        with conn.transaction():
            postgres.check(conn, fence)
            conn.execute("INSERT INTO ledger VALUES (%s, 'paused', %s)", (name, fence.token))
        print("committed", flush=True)
    except StaleFence as e:
        print("refused", flush=True)
""")


# covers: FENCE-PAUSE-001
def test_a_holder_paused_past_its_ttl_is_refused_by_the_database(pg, etcd, client, prefix):
    conn = connect(pg)
    name = f"{prefix}/paused"
    a = subprocess.Popen([sys.executable, "-c", HOLDER, etcd.endpoints, name, pg.dsn],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        fence_a = Fence.parse(a.stdout.readline().strip())
        os.kill(a.pid, signal.SIGSTOP)
        assert client.check_fence(fence_a)
        lock = client.lock(name, ttl=10)
        assert lock.acquire(timeout=10), "the paused holder's lease did not end"
        assert not client.check_fence(fence_a), "an expired holder's fence still checks"
        b = lock.fence()
        assert b.token > fence_a.token
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


# covers: FENCE-CHECK-001
def test_check_fence_is_true_while_held_false_after_release_expiry_or_for_another_cluster(etcd, client, prefix):
    name = f"{prefix}/chk"
    lock = client.lock(name, ttl=10)
    with pytest.raises(etcdlock.NotHeld):
        lock.fence()
    with lock:
        f = lock.fence()
        assert (f.kind, f.name, f.token, f.cluster) == ("q", name.encode(), lock.fencing_token, cluster_of(etcd))
        assert client.check_fence(f) and client.check_fence(str(f))
        assert not client.check_fence(f._replace(cluster=f.cluster ^ 1)), "another cluster's fence checked"
    assert not client.check_fence(f), "a released acquisition's fence checked"
    with pytest.raises(etcdlock.NotHeld):
        lock.fence()
    # Expiry: the holder's lease revoked behind its back.
    assert lock.acquire()
    g = lock.fence()
    assert g.token > f.token and client.check_fence(g)
    etcd.ctl("lease", "revoke", format(lock.lease_id, "x"))
    assert not client.check_fence(g), "an expired acquisition's fence checked"
    with pytest.raises(ValueError):
        client.check_fence("etcdlock-fence.v1.q.1.1.6")
    with pytest.raises(TypeError):
        client.check_fence(7)  # type: ignore[arg-type]
    # A write lock's and a leader's fences: the same kind, on their names.
    rw = client.rwlock(f"{prefix}/rw")
    with rw.write() as w:
        assert client.check_fence(w.fence())
    with client.election(f"{prefix}/el").campaign("me") as leading:
        lf = leading.fence()
        assert lf.name == f"{prefix}/el".encode() and client.check_fence(lf)
    assert not client.check_fence(lf)

    async def aio() -> None:
        async with etcdlock.AsyncClient(etcd.endpoints) as ac:
            async with ac.lock(f"{prefix}/aio") as al:
                af = await al.fence()
                assert af.token == al.fencing_token and await ac.check_fence(af)
            assert not await ac.check_fence(str(af))
            with pytest.raises(etcdlock.NotHeld):
                await al.fence()

    asyncio.run(aio())


# covers: FENCE-TASK-001
def test_a_claimed_tasks_fence_checks_and_a_later_claim_refuses_the_earlier_one_at_the_database(tmp_path, etcd, client, prefix):
    conn = sqlite3.connect(tmp_path / "tasks.sqlite", isolation_level=None)
    sqlite_fence.install(conn)
    q = client.queue(f"{prefix}/q", ttl=10)
    q.put(b"job", id="job")
    first = q.claim(timeout=5)
    f1 = first.fence()
    assert f1.token == first.fencing_token and f1.name.startswith(f"{prefix}/q/claim/".encode())
    assert client.check_fence(f1)
    sqlite_fence.check(conn, f1)
    first.nack()
    with pytest.raises(etcdlock.NotHeld):
        first.fence()
    assert not client.check_fence(f1), "a nacked claim's fence checked"
    second = q.claim(timeout=5)
    f2 = second.fence()
    assert f2.name == f1.name and f2.token > f1.token
    sqlite_fence.check(conn, f2)
    with pytest.raises(StaleFence):
        sqlite_fence.check(conn, f1)  # the first delivery's late write
    second.ack()
    assert not client.check_fence(f2)

    async def aio() -> None:
        async with etcdlock.AsyncClient(etcd.endpoints) as ac:
            aq = ac.queue(f"{prefix}/aq", ttl=10)
            await aq.put(b"x")
            async with aq.claim(timeout=5) as t:
                tf = await t.fence()
                assert await ac.check_fence(tf)
            assert not await ac.check_fence(tf)

    asyncio.run(aio())


# covers: FENCE-STRING-001
def test_a_fence_made_in_python_checks_through_its_string_form_in_the_client_and_the_cli(etcd, client, prefix):
    bin_, env = cli(), dict(os.environ, ETCDLOCK_ENDPOINTS=etcd.endpoints)

    def cli_check(fence: str) -> int:
        return subprocess.run([bin_, "fence", "check", fence], env=env, capture_output=True, text=True, timeout=30).returncode

    name = f"{prefix}/str"
    lock = client.lock(name, ttl=10)
    with lock:
        made = Fence("q", name.encode(), lock.fencing_token, cluster_of(etcd))  # by hand, from its parts
        text = str(made)
        assert text == f"etcdlock-fence.v1.q.{made.cluster:x}.{made.token}.{name.encode().hex()}"
        assert Fence.parse(text) == made == lock.fence()
        assert client.check_fence(text) and client.check_fence(made)
        assert cli_check(text) == 0, "the CLI did not check a Python fence's string form"
    assert not client.check_fence(text)
    assert cli_check(text) == 1
    assert cli_check(text[:-1]) == 2  # odd hex: not a fence
    # The other way: the CLI's ETCDLOCK_FENCE, read by Python's parser and checked by its client
    # while the CLI holds.
    probe = "import os, sys, etcdlock; f = etcdlock.Fence.parse(os.environ['ETCDLOCK_FENCE']); " \
            "print(f); print(etcdlock.Client(sys.argv[1]).check_fence(f))"
    out = subprocess.run([bin_, "run", name, "--", sys.executable, "-c", probe, etcd.endpoints], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    theirs, held = out.stdout.split()
    f = Fence.parse(theirs)
    assert (f.kind, f.name, f.cluster) == ("q", name.encode(), made.cluster) and f.token > made.token
    assert held == "True" and not client.check_fence(f)
