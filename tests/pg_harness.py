#!/usr/bin/env python3
"""A throwaway PostgreSQL for tests (stdlib only): initdb in a temp dir, one server on
127.0.0.1 on a free port, run as an unprivileged user, stopped by PID and removed on exit.

    from pg_harness import Postgres
    with Postgres() as pg:
        pg.dsn        # "host=127.0.0.1 port=N user=etcdlock dbname=postgres"
        pg.psql("SELECT 1")

As a CLI, for another language's tests (the server outlives the CLI; the state file remembers
it, and `stop` stops it by that PID, checking first that the PID is still that server)::

    python3 tests/pg_harness.py start --state FILE   # prints the DSN (libpq key=value form)
    python3 tests/pg_harness.py url   --state FILE   # postgresql://etcdlock@127.0.0.1:N/postgres
    python3 tests/pg_harness.py stop  --state FILE

The server binaries come from PATH or Debian's /usr/lib/postgresql/<version>/bin
(scripts/install-deps.sh installs Debian's postgresql when missing). As root, the data directory
belongs to the `postgres` user and the server runs as it (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import argparse
import atexit
import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


def find_bin(name: str) -> str:
    """`name` from PATH, else from the newest /usr/lib/postgresql/*/bin."""
    found = shutil.which(name)
    if found:
        return found
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]) if d.split("/")[-2].isdigit() else 0)
    for d in reversed(dirs):
        if os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    raise FileNotFoundError(f"{name} not found: run scripts/install-deps.sh (it installs Debian's postgresql)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    def __init__(self, user: str = "etcdlock"):
        self.user = user
        self.proc: subprocess.Popen | None = None
        self.dir = ""
        self.port = 0

    @property
    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres"

    def _as_owner(self):
        """preexec_fn dropping root to the postgres user (None when not root)."""
        if os.geteuid() != 0:
            return None
        pw = pwd.getpwnam("postgres")

        def drop():
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)
        return drop

    @property
    def url(self) -> str:
        """The DSN as a URL (node-postgres and JDBC-style clients take this form)."""
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/postgres"

    def start(self, timeout: float = 60.0, detached: bool = False) -> "Postgres":
        """Starts the server. ``detached``: in a session of its own and not stopped at this
        process's exit (the CLI: ``stop`` stops it by the state file)."""
        self.dir = tempfile.mkdtemp(prefix="etcdlock-pg-")
        data = os.path.join(self.dir, "data")
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        subprocess.run([find_bin("initdb"), "-D", data, "-U", self.user, "--auth=trust", "-E", "UTF8", "--no-sync"],
                       check=True, capture_output=True, timeout=timeout, env=env, preexec_fn=self._as_owner(), cwd="/")
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [find_bin("postgres"), "-D", data, "-h", "127.0.0.1", "-p", str(self.port), "-k", self.dir,
             "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=50"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "server.log"), "w"), env=env,
            preexec_fn=self._as_owner(), cwd="/", start_new_session=detached)
        if not detached:
            atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited: {open(os.path.join(self.dir, 'server.log')).read()[-2000:]}")
            r = subprocess.run([find_bin("pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)], capture_output=True)
            if r.returncode == 0:
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("postgres did not become ready in time")

    def psql(self, sql: str) -> str:
        return subprocess.run([find_bin("psql"), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", self.dsn, "-c", sql],
                              check=True, capture_output=True, text=True, timeout=30).stdout

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = ""

    def __enter__(self) -> "Postgres":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# The CLI: a server that outlives this process, found again through a state file.

def _is_our_server(pid: int, data_dir: str) -> bool:
    """Whether `pid` is a live postgres serving `data_dir` (not a recycled PID)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().split(b"\0")
    except OSError:
        return False
    return any(a.endswith(b"postgres") for a in args[:1]) and data_dir.encode() in args


def _ours(path: str) -> bool:
    """A directory this harness made (so a corrupt state file cannot remove anything else)."""
    return os.path.basename(path.rstrip("/")).startswith("etcdlock-pg-") and os.path.dirname(path.rstrip("/")) == tempfile.gettempdir()


def _cmd_start(args: argparse.Namespace) -> int:
    if os.path.exists(args.state):
        print(f"pg_harness: {args.state} exists: stop that server first", file=sys.stderr)
        return 1
    pg = Postgres().start(detached=True)
    assert pg.proc is not None
    state = {"pid": pg.proc.pid, "dir": pg.dir, "data": os.path.join(pg.dir, "data"), "port": pg.port, "user": pg.user,
             "dsn": pg.dsn, "url": pg.url}
    tmp = args.state + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=2)
    os.replace(tmp, args.state)
    print(pg.dsn, flush=True)
    return 0


def _read(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def _cmd_url(args: argparse.Namespace) -> int:
    print(_read(args.state)["url"])
    return 0


def _cmd_stop(args: argparse.Namespace) -> int:
    if not os.path.exists(args.state):
        print(f"pg_harness: no state file {args.state}; nothing to stop", file=sys.stderr)
        return 0
    state = _read(args.state)
    pid, data = int(state["pid"]), state["data"]
    if _is_our_server(pid, data):
        os.kill(pid, signal.SIGINT)  # fast shutdown
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and _is_our_server(pid, data):
            time.sleep(0.05)
        if _is_our_server(pid, data):
            os.kill(pid, signal.SIGKILL)
    if _ours(state["dir"]):
        shutil.rmtree(state["dir"], ignore_errors=True)
    os.unlink(args.state)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Start/stop a throwaway PostgreSQL on 127.0.0.1.")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("start", "url", "stop"):
        sub.add_parser(name).add_argument("--state", required=True, help="state file")
    args = p.parse_args(argv)
    return {"start": _cmd_start, "url": _cmd_url, "stop": _cmd_stop}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
