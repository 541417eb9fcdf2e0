"""One real etcd per test session (tests/etcd_harness.py at the repo root); tests are isolated
by key prefix. No mocks: every test talks to that etcd over 127.0.0.1."""

import json
import os
import sys
import time
import uuid
from typing import Callable, List

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests"))

from etcd_harness import Cluster  # noqa: E402

import etcdlock  # noqa: E402


class Etcd:
    """The session's etcd, with etcdctl-based observers independent of the library."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.endpoints = cluster.endpoints_str

    def ctl(self, *args: str) -> str:
        return self.cluster.etcdctl(*args)

    def keys(self, prefix: str) -> List[bytes]:
        out = self.ctl("get", "--prefix", prefix, "-w", "json")
        kvs = json.loads(out).get("kvs") or []
        import base64

        return sorted(base64.b64decode(kv["key"]) for kv in kvs)

    def revision(self) -> int:
        return int(json.loads(self.ctl("get", "x", "-w", "json"))["header"]["revision"])

    def leases(self) -> List[int]:
        out = json.loads(self.ctl("lease", "list", "-w", "json"))
        return sorted(l["id"] for l in out.get("leases") or [])

    def wait_until(self, cond: Callable[[], bool], timeout: float = 5.0, what: str = "condition") -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if cond():
                return
            time.sleep(0.02)
        raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@pytest.fixture(scope="session")
def etcd():
    with Cluster(1) as cluster:
        yield Etcd(cluster)


@pytest.fixture(autouse=True)
def etcd_alive(request):
    """etcd 3.5.1 (what scripts/install-deps.sh can get) panics when a client cancels a
    read-only Txn in flight (etcd-io/etcd#14110, fixed in 3.5.5). Should a test trip it, fail
    that test clearly and restart the member so that the rest of the session still runs."""
    yield
    if "etcd" not in request.fixturenames:
        return
    cluster = request.getfixturevalue("etcd").cluster
    dead = [i for i, m in enumerate(cluster.members) if not m.running()]
    for i in dead:
        cluster.restart(i)
    if dead:
        pytest.fail("the test etcd crashed (see etcd-io/etcd#14110) and was restarted")


@pytest.fixture
def prefix() -> str:
    """A key prefix unique to the test."""
    return f"pytest/{uuid.uuid4().hex[:10]}"


@pytest.fixture
def client(etcd):
    with etcdlock.Client(etcd.endpoints) as c:
        yield c


def run_script(code: str, env_extra=None, timeout: float = 30.0, **kw):
    """Runs ``code`` in a fresh interpreter; returns the CompletedProcess."""
    import subprocess

    env = dict(os.environ, PYTHONUNBUFFERED="1", **(env_extra or {}))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env, **kw)
