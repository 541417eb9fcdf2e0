"""S7: a member cut off from its peers, so that it is a minority of one, while clients still
reach it (tests/history/peernet.py: the members' peer links run through proxies; ``isolate``
silences every link to and from one follower). Each run is judged by the history checker.

- FAULT-PARTITION-001: a waiter whose client knows the minority member and one other, with
  every connection (KV, keepalive, the watch on its predecessor) on the minority member, is
  queued behind a holder on the majority; the member is cut off and the holder releases. The
  waiter must fail over and acquire within ``FAILOVER_S`` of the release: etcd ends the streams
  of a member without a leader only for clients that send ``hasleader`` (the core always
  does). **Negative control:** the same waiter with ``ETCDLOCK_TEST_NO_REQUIRE_LEADER=1`` (a
  test-only switch of the core, transport/paths.rs) has a watch that stays open and silent on
  the minority member (it even answers progress requests) and does not acquire within the
  bound: the check must catch it.
- FAULT-PARTITION-002: clients that know only the minority member: a holder must report its
  loss within TTL + 1 s of the cut, and no later than etcd deleted its key (the checker's P6);
  a waiter's acquire must end with an error within TTL + 3 s, never hang; a majority client
  takes the lock over.

Bounds: every wait is bounded in time; workers are waited for with a timeout, then SIGKILLed by
PID. The cluster is healed after each case, and the minority member must catch up.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # tests/, for etcd_harness

import etcdlock  # noqa: E402
from faultnet import CutProxy  # noqa: E402
from history import Recorder  # noqa: E402
from peernet import PeerProxiedCluster  # noqa: E402
from test_scenarios import TTL, assert_nothing_left, make_run, oks, wait_history_ok  # noqa: E402,F401
from test_watch_faults import Holder, in_thread, wait_queue  # noqa: E402

FAILOVER_S = 10.0  # etcd ends hasleader streams after 3 election timeouts without a leader (3 s)
SETTLE_S = 4.0  # the waiter's streams leave the silent second endpoint (its attempt bound) first
WAITER_TTL = 10  # the failover waiter's lease outlives its keepalive's move to another member


@pytest.fixture(scope="module")
def cluster():
    with PeerProxiedCluster(3) as c:
        yield c


def pick_minority(c):
    """A follower to cut off, and one member of the majority."""
    leader = c.leader_index()
    assert leader is not None, "no leader"
    m = next(i for i in range(3) if i != leader)
    return m, leader


def heal(c, m: int) -> None:
    """Ends the isolation and restarts the member on its data dir, then waits (bounded) until a
    write through it succeeds. Why the restart: after a second isolation of the same member in
    one cluster, its raft stream readers were seen never to reconnect once the proxies reset
    their connections (etcd 3.6.16), and the next scenario would find it without a leader."""
    c.heal()
    c.restart(m)
    deadline = time.monotonic() + 30
    while True:
        try:
            c.etcdctl("del", "s7-heal-probe", endpoints=[c.members[m].client_url], timeout=5)
            return
        except Exception:  # noqa: BLE001 - retried until the deadline
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.2)


def failover(cluster, make_run):
    """The lock waiter of FAULT-PARTITION-001; returns the seconds from the release to the
    waiter's acquisition, or None if not within FAILOVER_S."""
    m, other = pick_minority(cluster)
    run = make_run("s7-failover", c=cluster,
                   watch_endpoints=[cluster.members[i].client_url for i in range(3) if i != m])
    hrec = Recorder(os.path.join(run.dir, "holder.jsonl"), "holder")
    majority = etcdlock.Client([cluster.members[i].client_url for i in range(3) if i != m], timeout=5)
    try:
        holder = Holder(majority, hrec, run, TTL)
        assert holder.acquire(10)
        # The second endpoint is silent while the waiter connects, so everything it opens ends
        # on the minority member; it answers again before the cut, as a failover target.
        with CutProxy(cluster.members[other].client_port) as proxy:
            proxy.cut()
            waiter = run.workload("waiter", endpoints=[cluster.members[m].client_url, proxy.endpoint],
                                  count=1, duration=60, ttl=WAITER_TTL, timeout=2,
                                  acquire_timeout=FAILOVER_S + SETTLE_S + 20)
            assert len(wait_queue(run, 2, 20)) == 2, "the waiter did not queue"
            time.sleep(SETTLE_S)
            proxy.restore()
            cluster.isolate(m)
            run.nemesis.event("isolate", target=cluster.members[m].name)
            time.sleep(1.0)
            t_release = time.monotonic_ns()
            holder.write_and_release()
            got = wait_history_ok(os.path.join(run.dir, "waiter.jsonl"), "acquire", FAILOVER_S)
            took = (got["t"] - t_release) / 1e9 if got else None
            heal(cluster, m)
            run.nemesis.event("heal", target=cluster.members[m].name)
            stats = run.wait([waiter], FAILOVER_S + SETTLE_S + 40)
    finally:
        majority.close()
        hrec.close()
    run.finish()
    print(f"FAULT-PARTITION-001 (lock waiter): "
          f"waiter acquired {'%.2f s' % took if took is not None else 'not within %.0f s' % FAILOVER_S} "
          f"after the release; {stats}")
    run.check()
    assert_nothing_left(run.hist)
    return took


WATCHER = r"""
import sys, time, etcdlock
client = etcdlock.Client(sys.argv[1].split(","), timeout=10)  # time to leave the silent endpoint
watch = client.watch(sys.argv[2])
print("watching", flush=True)
for event in watch:
    print("event", time.monotonic_ns(), flush=True)
    break
"""


def watch_failover(cluster, require_leader: bool):
    """A plain resilient watch whose stream is on the minority member (its other endpoint was
    silent when the watch was made, so only the minority member could confirm it): after the
    cut, a put on the majority must reach it within FAILOVER_S. Returns the seconds, or None."""
    m, other = pick_minority(cluster)
    key = f"s7-watch-{time.monotonic_ns()}"
    env = {**os.environ, **({} if require_leader else {"ETCDLOCK_TEST_NO_REQUIRE_LEADER": "1"})}
    with CutProxy(cluster.members[other].client_port) as proxy:
        proxy.cut()
        p = subprocess.Popen([sys.executable, "-c", WATCHER, f"{cluster.members[m].client_url},{proxy.endpoint}", key],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            lines = []
            reader = threading.Thread(target=lambda: lines.extend(p.stdout), daemon=True)
            reader.start()
            deadline = time.monotonic() + 20
            while "watching\n" not in lines and time.monotonic() < deadline and p.poll() is None:
                time.sleep(0.05)
            assert "watching\n" in lines, f"the watch was not made: {p.stderr.read() if p.poll() is not None else ''}"
            proxy.restore()
            cluster.isolate(m)
            time.sleep(1.0)
            t_put = time.monotonic_ns()
            cluster.etcdctl("put", key, "1", endpoints=[cluster.members[i].client_url for i in range(3) if i != m])
            while time.monotonic_ns() - t_put < FAILOVER_S * 1e9 and not any(l.startswith("event") for l in lines):
                time.sleep(0.05)
            got = [int(l.split()[1]) for l in lines if l.startswith("event")]
            took = (got[0] - t_put) / 1e9 if got else None
        finally:
            heal(cluster, m)
            p.kill()
            p.communicate(timeout=10)
            cluster.etcdctl("del", key)
    print(f"FAULT-PARTITION-001 watch ({'hasleader' if require_leader else 'control: no hasleader'}): the put "
          f"reached the watch {'%.2f s' % took if took is not None else 'not within %.0f s' % FAILOVER_S} after it")
    return took


# covers: FAULT-PARTITION-001
def test_watch_on_minority_member_fails_over(cluster):
    took = watch_failover(cluster, require_leader=True)
    assert took is not None, f"the watch on the minority member got nothing within {FAILOVER_S} s: a hang"


# covers: FAULT-PARTITION-001 (negative control)
def test_control_watch_without_hasleader_hangs_and_is_caught(cluster):
    took = watch_failover(cluster, require_leader=False)
    assert took is None, (f"without hasleader the watch still got the put ({took:.2f} s): the scenario cannot tell "
                          "a client that hangs on a minority member")


# covers: FAULT-PARTITION-001
def test_waiter_on_minority_member_fails_over(cluster, make_run):
    took = failover(cluster, make_run)
    assert took is not None, f"the waiter on the minority member did not acquire within {FAILOVER_S} s: a hang"


# covers: FAULT-PARTITION-002
def test_clients_of_only_the_minority_member_report_loss(cluster, make_run):
    m, _ = pick_minority(cluster)
    run = make_run("s7-loss", c=cluster, watch_endpoints=[cluster.members[i].client_url for i in range(3) if i != m])
    hrec = Recorder(os.path.join(run.dir, "holder.jsonl"), "holder")
    wrec = Recorder(os.path.join(run.dir, "waiter.jsonl"), "waiter")
    only_m = etcdlock.Client([cluster.members[m].client_url], timeout=2)
    try:
        holder = Holder(only_m, hrec, run, TTL)
        assert holder.acquire(10)
        waiter = only_m.lock(run.name, ttl=TTL)
        op = wrec.invoke("acquire", name=run.name)
        box = {}

        def wait():
            try:
                box["got"] = waiter.acquire(timeout=30)
            except etcdlock.Error as e:
                box["error"] = e
            box["t"] = time.monotonic_ns()

        t = threading.Thread(target=wait, daemon=True)
        t.start()
        assert len(wait_queue(run, 2, 10)) == 2, "the waiter did not queue"
        taker = run.workload("taker", endpoints=[cluster.members[i].client_url for i in range(3) if i != m],
                             count=1, duration=40, acquire_timeout=30)
        assert len(wait_queue(run, 3, 10)) == 3, "the majority client did not queue"
        t_cut = time.monotonic_ns()
        cluster.isolate(m)
        run.nemesis.event("isolate", target=cluster.members[m].name)
        t.join(TTL + 3)
        assert not t.is_alive(), f"the minority waiter's acquire did not end within {TTL + 3} s of the cut: a hang"
        if "error" in box:
            kind = "unknown" if isinstance(box["error"], (etcdlock.Timeout, etcdlock.Unavailable)) else "fail"
            getattr(wrec, kind)(op, f"{type(box['error']).__name__}: {box['error']}", name=run.name)
        else:
            assert box["got"] is not True, "the minority waiter acquired while cut off"
            wrec.fail(op, "timeout", name=run.name)
        got = wait_history_ok(os.path.join(run.dir, "taker.jsonl"), "acquire", TTL + 10)
        assert got is not None, "the majority client did not take over"
        heal(cluster, m)
        run.nemesis.event("heal", target=cluster.members[m].name)
        stats = run.wait([taker], 40)
    finally:
        only_m.close()
        hrec.close()
        wrec.close()
    run.finish()
    recs = run.records()
    lost = [r for r in recs if r["process"] == "holder" and r["op"] == "lost"]
    assert lost, "the holder on the minority member never reported its loss"
    lost_s = (lost[0]["t"] - t_cut) / 1e9
    waiter_s = (box["t"] - t_cut) / 1e9
    takeover_s = (got["t"] - t_cut) / 1e9
    print(f"FAULT-PARTITION-002: holder lost after {lost_s:.2f} s ({lost[0].get('reason')}), waiter ended after "
          f"{waiter_s:.2f} s ({box.get('error') or box.get('got')!r}), majority took over after {takeover_s:.2f} s; "
          f"{stats}")
    assert lost_s <= TTL + 1, f"the holder reported its loss {lost_s:.2f} s after the cut (bound TTL + 1 s)"
    assert len(oks(recs, "acquire", "taker")) == 1
    run.check()
    assert_nothing_left(run.hist)
