#!/usr/bin/env python3
"""The C suite's database fencing tests, against a throwaway PostgreSQL (tests/pg_harness.py:
initdb in a temp dir, 127.0.0.1 on a free port, stopped at exit) and the suite's etcd
($ETCDLOCK_ENDPOINTS), with programs test.sh built with pkg-config etcdlock libpq:
examples/fence_pg.c (FENCE-DB-001), tests/fence_pg_holder.c (a holder SIGSTOPped past its TTL:
FENCE-PAUSE-001) and tests/test_fence_db.c (run here with the DSN: FENCE-TASK-001's database
side, FENCE-CONCURRENT-001). Prints "ok - ..." / "FAIL - ..." lines for test.sh to count.

    python3 bindings-c/tests/test_fence_pg.py PATH/TO/fence_pg PATH/TO/fence_pg_holder PATH/TO/test_fence_db
"""

import os
import select
import signal
import subprocess
import sys
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pg_harness import Postgres  # noqa: E402

failed = 0


def check(cond: bool, what: str, detail: str = "") -> None:
    global failed
    if cond:
        print(f"ok - {what}")
    else:
        failed += 1
        print(f"FAIL - {what}" + (f": {detail}" if detail else ""))


def run(binary: str, dsn: str, name: str, fence: str = "") -> tuple:
    """One run of the example: (exit status, stdout + stderr, the fence it printed)."""
    env = dict(os.environ)
    env.pop("ETCDLOCK_FENCE", None)
    if fence:
        env["ETCDLOCK_FENCE"] = fence
    p = subprocess.run([binary, dsn, name], env=env, capture_output=True, text=True, timeout=60)
    out = p.stdout + p.stderr
    printed = next((line.split(" ", 1)[1] for line in p.stdout.splitlines() if line.startswith("fence ")), "")
    return p.returncode, out, printed


def parts(fence: str) -> list:
    """kind, cluster hex, token, name hex (the string form's last four fields)."""
    return (fence[len("etcdlock-fence.v1."):].split(".", 3) + ["", "", "", ""])[:4]


def token_of(fence: str) -> int:
    """A fence's token, or -1."""
    t = parts(fence)[2]
    return int(t) if t.isdigit() else -1


def readline(proc: subprocess.Popen, secs: float) -> str:
    """The next line `proc` prints, waiting at most `secs` ("" if none came)."""
    ready, _, _ = select.select([proc.stdout], [], [], secs)
    return proc.stdout.readline().strip() if ready else ""


def paused_holder(holder: str, pg, name: str) -> None:
    """FENCE-PAUSE-001: A holds (TTL 2) with its transaction open and is SIGSTOPped; B takes the
    lock once A's lease has ended and commits through its fence; A resumes and writes through its
    own fence: the database refuses it."""
    # covers: FENCE-PAUSE-001
    a = subprocess.Popen([holder, pg.dsn, name, "paused"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        line_a = readline(a, 30)
        check(line_a.startswith("fence etcdlock-fence.v1.q."), "pause: the C holder holds, its transaction open", line_a)
        fence_a = line_a.split(" ", 1)[-1]
        os.kill(a.pid, signal.SIGSTOP)
        # B waits (up to 10 s) for A's lease to end: A cannot keep it alive while stopped.
        b = subprocess.run([holder, pg.dsn, name, "next"], input="go\n", capture_output=True, text=True, timeout=60)
        fence_b = next((ln.split(" ", 1)[1] for ln in b.stdout.splitlines() if ln.startswith("fence ")), "")
        check(b.returncode == 0 and b.stdout.rstrip().endswith("committed") and fence_b
              and parts(fence_b)[3] == parts(fence_a)[3] and token_of(fence_b) > token_of(fence_a) > 0,
              "pause: the next holder takes the lock past the paused one's TTL and commits (a larger token)",
              b.stdout + b.stderr)
    finally:
        os.kill(a.pid, signal.SIGCONT)
    out, err = a.communicate("go\n", timeout=60)
    check(a.returncode == 0 and out.rstrip().endswith("refused"),
          "pause: the resumed holder's write through its fence is refused by the database", out + err)
    writers = pg.psql(f"SELECT string_agg(writer, ',' ORDER BY seq) FROM ledger WHERE resource = '{name}'").strip()
    check(writers == "next", "pause: the table has only the next holder's write", writers)


def db_program(program: str, pg) -> None:
    """tests/test_fence_db.c with the DSN: its ok/FAIL lines are passed on (the example's
    "refused: ..." lines of the concurrent writers only when something failed)."""
    p = subprocess.run([program, pg.dsn], capture_output=True, text=True, timeout=120)
    lines = p.stdout.splitlines()
    results = [ln for ln in lines if ln.startswith(("ok - ", "FAIL - ", "# "))]
    print("\n".join(results))
    global failed
    failed += sum(ln.startswith("FAIL - ") for ln in results)
    if p.returncode != 0 or not any(ln.startswith("ok - ") for ln in results) or failed:
        print("\n".join("  " + ln for ln in (p.stdout + p.stderr).splitlines()))  # not counted by test.sh
        if not any(ln.startswith("FAIL - ") for ln in results):
            check(False, f"test_fence_db exited with status {p.returncode}")


def main() -> int:
    binary, holder, db_test = sys.argv[1:4]
    name = f"c-test/fence-pg-{uuid.uuid4().hex[:8]}"
    with Postgres() as pg:
        def rows(sql: str) -> str:
            return pg.psql(sql).strip()

        # covers: FENCE-DB-001
        # Two holders in turn (each run takes the lock, checks its fence, updates, commits).
        rc_a, out_a, fence_a = run(binary, pg.dsn, name)
        check(rc_a == 0 and out_a.rstrip().endswith("done") and fence_a.startswith("etcdlock-fence.v1.q."),
              "fence_pg: the first holder's transaction commits through its fence", out_a)
        rc_b, out_b, fence_b = run(binary, pg.dsn, name)
        check(rc_b == 0 and fence_b and int(parts(fence_b)[2]) > int(parts(fence_a)[2] or 0),
              "fence_pg: the next holder commits with a larger token", out_b)
        check(bytes.fromhex(parts(fence_b)[3]).decode() == name, "fence_pg: the fence names the lock", fence_b)
        # The same holder's fence again (from elsewhere, ETCDLOCK_FENCE): >= passes.
        rc, out, _ = run(binary, pg.dsn, name, fence_b)
        check(rc == 0, "fence_pg: the same holder's repeated write passes (>=)", out)
        # The first holder, late: refused by the database, nothing written.
        rc, out, _ = run(binary, pg.dsn, name, fence_a)
        check(rc == 3 and "stale fence" in out and f"newer holder wrote with token {parts(fence_b)[2]}" in out,
              "fence_pg: the first holder's late write is refused (exit 3, stale fence)", out)
        state = rows(f"SELECT writes, last_token FROM fence_example WHERE resource = '{name}'")
        mark = rows(f"SELECT token FROM etcdlock_fence WHERE resource = '{name}'")
        check(state == f"3|{parts(fence_b)[2]}" and mark == parts(fence_b)[2],
              "fence_pg: the table has only the committed writes, the mark is the newer token", f"{state} / mark {mark}")
        # Another resource keeps its own mark: the old token writes there.
        other = f"{name}-other"
        k, cluster, token, _ = parts(fence_a)
        rc, out, _ = run(binary, pg.dsn, other, f"etcdlock-fence.v1.{k}.{cluster}.{token}.{other.encode().hex()}")
        check(rc == 0 and rows(f"SELECT writes FROM fence_example WHERE resource = '{other}'") == "1",
              "fence_pg: two resources keep independent marks", out)
        # Another etcd cluster's fence, however new, is refused naming the reset.
        alien = f"etcdlock-fence.v1.q.{int(parts(fence_b)[1], 16) ^ 1:x}.{int(parts(fence_b)[2]) + 1000}.{parts(fence_b)[3]}"
        rc, out, _ = run(binary, pg.dsn, name, alien)
        check(rc == 3 and "an operator must reset the mark" in out and f"DELETE FROM etcdlock_fence WHERE resource = '{name}'" in out,
              "fence_pg: another cluster's fence is refused with the reset", out)
        check(rows(f"SELECT writes FROM fence_example WHERE resource = '{name}'") == "3",
              "fence_pg: the refused transactions wrote nothing")
        # A malformed fence: exit 2, nothing sent.
        for bad in ("etcdlock-fence.v1.q.1.01.61", "etcdlock-fence.v1.q.1.1.6", "etcdlock-fence.v1.x.1.1.61", "nonsense"):
            rc, out, _ = run(binary, pg.dsn, name, bad)
            check(rc == 2 and "not an etcdlock fence" in out, f"fence_pg: a malformed fence is refused ({bad})", out)

        paused_holder(holder, pg, f"{name}-paused")
        db_program(db_test, pg)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
