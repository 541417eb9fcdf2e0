"""The service registry against a real etcd: registrations kept alive and restored, instance
sets read and followed, a killed registrant's instance gone, etcd's Go gRPC resolver calling a
server registered from Python."""

import asyncio
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

import etcdlock
from conftest import REPO


def names(snapshot: etcdlock.Instances):
    return [i.name for i in snapshot.instances]


def within(d: etcdlock.Discovery, seconds: float = 5.0) -> etcdlock.Instances:
    """The discovery's next set, or a failure after ``seconds`` (the discovery is closed)."""
    timer = threading.Timer(seconds, d.close)
    timer.start()
    try:
        s = next(d, None)
    finally:
        timer.cancel()
    assert s is not None, f"no set within {seconds} s"
    return s


def waiter():
    """A callback that queues what it is called with, and a way to wait for it."""
    q: "queue.Queue[object]" = queue.Queue()

    def get(timeout: float = 5.0):
        return q.get(timeout=timeout)

    return q.put, get


# covers: REG-BASIC-001
def test_register_update_close_and_a_taken_name(etcd, client, prefix):
    svc = f"{prefix}/api"
    leases_before = len(etcd.leases())
    reg = client.register(svc, "node-1", "v1", ttl=10)
    assert reg.is_registered() and reg.key == f"{svc}/node-1".encode()
    found = client.instances(svc)
    assert names(found) == [b"node-1"] and found.instances[0].value == b"v1"
    assert found.instances[0].lease == reg.lease_id and found.revision >= found.instances[0].mod_revision
    assert found.as_dict() == {b"node-1": b"v1"}

    rev = reg.update(b"v2")
    assert client.instances(svc).instances[0] == etcdlock.Instance(b"node-1", b"v2", reg.lease_id, rev)

    # Another registrant: refused, and nothing of its attempt is left.
    with etcdlock.Client(etcd.endpoints) as other:
        with pytest.raises(etcdlock.WouldBlock, match="registered already"):
            other.register(svc, "node-1", "theirs")
        assert len(etcd.leases()) == leases_before + 1
        lost, got_lost = waiter()
        reg.on_lost(lost)
        taker = other.register(svc, "node-1", "theirs", replace=True)
        assert got_lost() == "taken_over"
        assert not reg.is_registered() and reg.lease_id is None
        with pytest.raises(etcdlock.NotHeld):
            reg.update("v3")
        assert client.instances(svc).as_dict() == {b"node-1": b"theirs"}
        reg.close()
        assert client.instances(svc).as_dict() == {b"node-1": b"theirs"}, "closing a taken-over registration deletes nothing"
        with taker:
            pass
    assert etcd.keys(svc) == [] and len(etcd.leases()) == leases_before


# covers: REG-BASIC-001
def test_bad_arguments_are_refused_before_anything_is_sent(etcd, client, prefix):
    svc = f"{prefix}/api"
    for service, instance, kw, err in [
        ("", "n", {}, ValueError),
        (svc, "", {}, ValueError),
        (svc, "a/b", {}, ValueError),
        (svc, "n", {"ttl": 0}, ValueError),
        (svc, "n", {"value": b"x" * 4097}, ValueError),
        (svc, 7, {}, TypeError),
        (svc, "n", {"replace": 1}, TypeError),
    ]:
        with pytest.raises(err):
            client.register(service, instance, **kw)
    with pytest.raises(ValueError):
        client.instances("")
    with pytest.raises(ValueError):
        client.discover("")
    with pytest.raises(TypeError):
        etcdlock.grpc_endpoint(b"127.0.0.1:1")
    assert etcd.keys(prefix) == []
    closed = etcdlock.Client(etcd.endpoints)
    closed.close()
    with pytest.raises(etcdlock.Closed):
        closed.register(svc, "n")


# covers: REG-RECOVER-001
def test_a_revoked_lease_or_deleted_key_is_registered_again_and_reported(etcd, client, prefix):
    svc = f"{prefix}/api"
    with client.register(svc, "node-1", "v1", ttl=5) as reg:
        lost, got_lost = waiter()
        restored, got_restored = waiter()
        reg.on_lost(lost)
        reg.on_restored(restored)
        first = reg.lease_id
        etcd.ctl("lease", "revoke", f"{first:x}")
        assert got_lost() in ("revoked", "expired", "key_deleted")
        lease = got_restored()
        assert lease != first and reg.lease_id == lease
        assert client.instances(svc).instances[0][1:3] == (b"v1", lease)

        etcd.ctl("del", f"{svc}/node-1")
        assert got_lost() == "key_deleted"
        assert got_restored() != lease
        assert names(client.instances(svc)) == [b"node-1"]
    assert etcd.keys(svc) == []


# covers: DISC-BASIC-001
def test_discover_gives_the_current_set_then_each_change(etcd, client, prefix):
    svc = f"{prefix}/api"
    with client.discover(svc) as d:
        assert within(d).instances == []
        r1 = client.register(svc, "n1", "a")
        assert names(within(d)) == [b"n1"]
        r2 = client.register(svc, "n2", etcdlock.grpc_endpoint("127.0.0.1:5"))
        s = within(d)
        assert names(s) == [b"n1", b"n2"] and s.revision == max(i.mod_revision for i in s.instances)
        assert [i.grpc_addr for i in s.instances] == [None, "127.0.0.1:5"]
        client.put(f"{svc}/n1/below", "x")  # not an instance
        r1.update("a2")
        assert within(d).instances[0].value == b"a2"
        r1.close()
        assert names(within(d)) == [b"n2"]
        r2.close()
        assert within(d).instances == []
        # Closed from another thread, an iteration in progress ends.
        threading.Timer(0.2, d.close).start()
        assert list(d) == []


# covers: DISC-BASIC-001, REG-RECOVER-001
def test_async_register_discover_and_callbacks_on_the_loop(etcd, prefix):
    svc = f"{prefix}/api"

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            d = client.discover(svc)
            assert (await d.__anext__()).instances == []
            events: "asyncio.Queue[object]" = asyncio.Queue()
            loop_thread = threading.get_ident()

            async def on_lost(reason):  # a coroutine callback runs on the loop
                assert threading.get_ident() == loop_thread
                await events.put(("lost", reason))

            async with client.register(svc, "n1", "a", ttl=5) as reg:
                assert names(await d.__anext__()) == [b"n1"]
                reg.on_lost(on_lost)
                reg.on_restored(lambda lease: events.put_nowait(("restored", lease)))
                etcd.ctl("lease", "revoke", f"{reg.lease_id:x}")
                kind, reason = await asyncio.wait_for(events.get(), 5)
                assert kind == "lost" and reason in ("revoked", "expired", "key_deleted")
                kind, lease = await asyncio.wait_for(events.get(), 5)
                assert kind == "restored" and lease == reg.lease_id
                assert await reg.update("b") > 0
                # Sets that came while nobody iterated: the latest state is among the next ones.
                seen = []
                async for s in d:
                    seen.append(s.as_dict())
                    if s.as_dict() == {b"n1": b"b"}:
                        break
                    assert len(seen) < 10
            # A cancelled __anext__ loses nothing: the deregistration is the next set.
            task = asyncio.ensure_future(d.__anext__())
            done, _ = await asyncio.wait([task], timeout=5)
            assert done and (await task).instances == []
            # A cancelled wait leaves the discovery usable, and the next change is reported.
            late = asyncio.ensure_future(d.__anext__())
            await asyncio.sleep(0.2)
            late.cancel()
            with pytest.raises(asyncio.CancelledError):
                await late
            reg2 = await client.register(svc, "n2", "c")
            assert names(await asyncio.wait_for(d.__anext__(), 5)) == [b"n2"]
            await reg2.close()
            assert (await client.instances(svc)).instances == []
            await d.aclose()

    asyncio.run(main())
    assert etcd.keys(svc) == []


# covers: REG-METRICS-001
def test_registrations_and_discoveries_are_counted(etcd, prefix):
    svc = f"{prefix}/api"
    with etcdlock.Client(etcd.endpoints) as client:
        d = client.discover(svc)
        within(d)
        reg = client.register(svc, "n1", "a", ttl=5)
        within(d)
        m = client.metrics()
        assert (m["registrations_alive"], m["discovery_snapshots"]) == (1, 2)
        assert set(m["reregistrations"]) == {"expired", "revoked", "key_deleted"} and sum(m["reregistrations"].values()) == 0
        lost, got_lost = waiter()
        restored, got_restored = waiter()
        reg.on_lost(lost)
        reg.on_restored(restored)
        etcd.ctl("lease", "revoke", f"{reg.lease_id:x}")
        reason = got_lost()
        got_restored()
        m = client.metrics()
        assert m["reregistrations"][reason] == 1 and m["registrations_alive"] == 1
        reg.close()
        d.close()
        assert client.metrics()["registrations_alive"] == 0
        assert f'etcdlock_registrations_alive{{client="{client.name}"}} 0\n' in client.metrics_text()


REGISTRANT = """
import sys, time, etcdlock
client = etcdlock.Client(sys.argv[1])
reg = client.register(sys.argv[2], "doomed", "x", ttl=2)  # kept: a dropped one deregisters
print("registered", flush=True)
time.sleep(60)
"""


# covers: REG-KILLED-001
def test_a_killed_registrants_instance_leaves_discovery_within_ttl_and_a_second(etcd, client, prefix):
    svc = f"{prefix}/api"
    proc = subprocess.Popen([sys.executable, "-c", REGISTRANT, etcd.endpoints, svc], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "registered"
        with client.discover(svc) as d:
            assert names(within(d)) == [b"doomed"]
            time.sleep(1.0)  # a keepalive or two went out
            os.kill(proc.pid, signal.SIGKILL)  # no exit hook: only the TTL removes it
            killed = time.monotonic()
            proc.wait(5)
            gone = within(d, 6.0)
            assert gone.instances == [] and time.monotonic() - killed <= 3.0, time.monotonic() - killed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


GRPC_SERVER = """
import sys, time, etcdlock, grpc
from concurrent import futures
from grpc_health.v1 import health, health_pb2_grpc
server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), server)
port = server.add_insecure_port("127.0.0.1:0")
server.start()
addr = f"127.0.0.1:{port}"
with etcdlock.Client(sys.argv[1]) as client:
    with client.register(sys.argv[2], "py-B", etcdlock.grpc_endpoint(addr), ttl=10):
        print(addr, flush=True)
        sys.stdin.readline()  # until the test is done
server.stop(0)
"""


# covers: REG-GRPC-002
def test_go_grpc_resolver_calls_a_server_registered_from_python(etcd, client, prefix):
    built = subprocess.run(["bash", os.path.join(REPO, "scripts", "build-go-resolver.sh")], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    svc = f"{prefix}/api"
    server = subprocess.Popen([sys.executable, "-c", GRPC_SERVER, etcd.endpoints, svc], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    go = None
    try:
        b = server.stdout.readline().strip()
        assert b.startswith("127.0.0.1:"), "the Python gRPC server did not start"
        go = subprocess.Popen(
            [built.stdout.strip(), "-endpoints", etcd.endpoints.split(",")[0], "-target", svc, "-b", b],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        a = go.stdout.readline().strip().removeprefix("A ")
        assert go.stdout.readline().strip() == f"B {b}"
        found = client.instances(svc)
        assert {i.name: i.grpc_addr for i in found.instances} == {b"go-A": a, b"py-B": b}
        go.stdin.write("go\n")
        go.stdin.flush()
        out, _ = go.communicate(timeout=60)
        assert out.strip() == "resolved A B" and go.returncode == 0
        server.stdin.write("\n")  # the server deregisters and stops
        server.stdin.flush()
        assert server.wait(10) == 0
        # Go's A stays until its lease ends: revoked here, so that nothing is left.
        etcd.ctl("lease", "revoke", f"{found.instances[0].lease:x}")
    finally:
        for p in (go, server):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(5)
    assert etcd.keys(svc) == []


EXITING = """
import sys, etcdlock
client = etcdlock.Client(sys.argv[1])
regs = [client.register(sys.argv[2], f"n{i}", "x", ttl=30) for i in range(3)]
"""  # and exits without closing anything: the exit hook closes the client


# covers: REG-EXIT-001
def test_a_process_that_exits_with_registrations_open_leaves_nothing_at_once(etcd, prefix):
    # Ten runs: the exit used to race with the registrations' own tasks (about 1 run in 3).
    for run in range(10):
        svc = f"{prefix}/api{run}"
        r = subprocess.run([sys.executable, "-c", EXITING, etcd.endpoints, svc], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert etcd.keys(svc) == [], f"run {run}: deregistered at exit, not after the 30 s TTL"


MANY = """
import sys, etcdlock
client = etcdlock.Client(sys.argv[1])
regs = [client.register(sys.argv[2], f"p{sys.argv[3]}-{i:03}", "x", ttl=30) for i in range(250)]
print("registered", flush=True)
sys.stdin.readline()  # until the test has looked
for r in regs:
    r.close()
"""


# covers: REG-MANY-001
def test_a_thousand_instances_from_four_processes_are_in_one_set(etcd, client, prefix):
    svc = f"{prefix}/api"
    procs = [
        subprocess.Popen([sys.executable, "-c", MANY, etcd.endpoints, svc, str(p)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for p in range(4)
    ]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "registered"
        expected = sorted(f"p{p}-{i:03}".encode() for p in range(4) for i in range(250))
        assert names(client.instances(svc)) == expected
        with client.discover(svc) as d:
            assert names(within(d)) == expected
        for p in procs:
            p.stdin.write("\n")
            p.stdin.flush()
        for p in procs:
            assert p.wait(30) == 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(5)
    assert client.instances(svc).instances == [] and etcd.keys(svc) == []
