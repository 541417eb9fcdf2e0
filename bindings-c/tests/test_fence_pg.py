#!/usr/bin/env python3
"""The C suite's database fencing test: runs examples/fence_pg.c (built by test.sh with
pkg-config etcdlock libpq) against a throwaway PostgreSQL (tests/pg_harness.py: initdb in a temp
dir, 127.0.0.1 on a free port, stopped at exit) and the suite's etcd ($ETCDLOCK_ENDPOINTS).
Prints "ok - ..." / "FAIL - ..." lines for test.sh to count.

    python3 bindings-c/tests/test_fence_pg.py PATH/TO/fence_pg
"""

import os
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
    return fence[len("etcdlock-fence.v1."):].split(".", 3)


def main() -> int:
    binary = sys.argv[1]
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
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
