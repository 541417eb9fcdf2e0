"""Watch faults on a 3-member etcd cluster, judged by the history checker (tests/history/check.py)
like tests/history/test_scenarios.py (whose Run, fixtures and helpers this reuses):

- FAULT-COMPACT-001 (S13): a waiter's only path to etcd (a CutProxy to member 0) goes silent
  while it waits; meanwhile every key ahead of it is released, 300 more revisions are written
  and the history is compacted to the head; then the path comes back. The waiter acquires (it
  is the head: FIFO, before every worker that queued after it), writes fenced, releases; a plain
  watch of the same client, whose next revision was compacted meanwhile, raises ``Compacted``
  (with the compact revision) instead of skipping the lost events; the checker passes.
- FAULT-SLOWWATCH-001 (S17): a watch whose reader sleeps while 3000 puts arrive (more than the
  core's 256-response buffer per subscriber): every put is delivered, in revision order, with no
  gap and no duplicate; meanwhile lock cycles on the same client, contended by a worker of
  another process, go on (each acquire within a bound); the checker passes.

``SCENARIO_BREAK=stale`` (every workload worker writes after its release) must make both fail.
Bounds: every wait here has a timeout; workers are bounded and killed by PID at the end.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # tests/, for etcd_harness

import etcdlock  # noqa: E402
import etcd_history  # noqa: E402
from etcd_harness import Cluster  # noqa: E402
from faultnet import CutProxy  # noqa: E402
from history import Recorder  # noqa: E402
from test_scenarios import TTL, assert_nothing_left, cluster, make_run, oks  # noqa: E402,F401
from workload import decode_n, encode  # noqa: E402


def finish_compacted(run, settle_s: float = TTL + 3) -> dict:
    """Run.finish() for a run whose history was compacted: the live watch (synced, so never
    cancelled by the compaction) is complete up to its sentinel, but a post-run read from
    revision 1 is impossible, so there is no cross-check."""
    etcd_history.leftovers(",".join(run.watcher_endpoints), [run.lock_prefix], settle_s)
    run.cluster.etcdctl("del", "--prefix", run.data_prefix)
    run.hist = run.watcher.finish(settle_s=0.5, cross_check=False)
    etcd_history.save(run.hist, os.path.join(run.dir, "etcd-history.json"))
    return run.hist


def queue(run) -> list:
    out = run.cluster.etcdctl("get", "--prefix", run.lock_prefix, "--keys-only")
    return [k for k in out.split() if not etcd_history.is_sentinel(k)]


def wait_queue(run, n: int, timeout: float) -> list:
    deadline = time.monotonic() + timeout
    while True:
        q = queue(run)
        if len(q) >= n or time.monotonic() >= deadline:
            return q
        time.sleep(0.05)


def in_thread(fn, timeout: float):
    """fn() in a daemon thread: ("ok", value) / ("error", exc) / ("hung", None) after timeout."""
    box = {}

    def body():
        try:
            box["r"] = ("ok", fn())
        except BaseException as e:  # noqa: BLE001 - handed back
            box["r"] = ("error", e)

    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(timeout)
    return box.get("r", ("hung", None))


class Holder:
    """One recorded lock cycle on a blocking client: acquire, fenced write, release."""

    def __init__(self, client, rec: Recorder, run, ttl: int):
        self.client, self.rec, self.run, self.ttl = client, rec, run, ttl
        self.lock = client.lock(run.name, ttl=ttl)
        self.t_acquired = None
        self.token = None

    def acquire(self, timeout: float) -> bool:
        op = self.rec.invoke("acquire", name=self.run.name)
        try:
            got = self.lock.acquire(timeout=timeout)
        except (etcdlock.Timeout, etcdlock.Unavailable) as e:
            self.rec.unknown(op, f"{type(e).__name__}: {e}", name=self.run.name)
            raise
        except etcdlock.Error as e:
            self.rec.fail(op, f"{type(e).__name__}: {e}", name=self.run.name)
            raise
        if not got:
            self.rec.fail(op, "timeout", name=self.run.name)
            return False
        self.t_acquired = time.monotonic_ns()
        key, self.token = self.lock.key.decode(), self.lock.fencing_token
        self.rec.ok(op, name=self.run.name, key=key, token=self.token, lease=f"{self.lock.lease_id:x}")
        self.lock.on_lost(lambda reason, key=key, token=self.token: self.rec.event("lost", key=key, token=token, reason=reason))
        return True

    def write_and_release(self) -> str:
        key, token, data_key = self.lock.key.decode(), self.token, self.run.counter
        value = encode(decode_n(self.client.get(data_key)) + 1, token, self.rec.process)
        op = self.rec.invoke("write", data_key=data_key, value=value, token=token)
        try:
            self.client.put(data_key, value, if_held=self.lock)
            self.rec.ok(op, data_key=data_key, value=value, token=token)
            outcome = "ok"
        except etcdlock.NotHeld as e:
            self.rec.fail(op, f"NotHeld: {e}", data_key=data_key, value=value, token=token)
            outcome = "refused"
        except etcdlock.Error as e:
            self.rec.unknown(op, f"{type(e).__name__}: {e}", data_key=data_key, value=value, token=token)
            outcome = "unknown"
        op = self.rec.invoke("release", key=key, token=token)
        try:
            self.lock.release()
            self.rec.ok(op, key=key, token=token)
        except etcdlock.NotHeld as e:
            self.rec.fail(op, f"NotHeld: {e}", key=key, token=token)
        except etcdlock.Error as e:
            self.rec.unknown(op, f"{type(e).__name__}: {e}", key=key, token=token)
        return outcome


# ------------------------------------------------------------------ S13 ---

CUT_S = 6.0  # the waiter's path is silent this long (> the core's 2 + 2 s silent-stream detection)
WAITER_TTL = 15  # its lease outlives the cut


# covers: FAULT-COMPACT-001
def test_compaction_while_the_waiters_watch_is_cut(make_run):
    # A cluster of its own: the compaction is cluster-wide, and every later scenario's history
    # is read from revision 1.
    with Cluster(3) as cluster:
        compaction_while_cut(cluster, make_run)


def compaction_while_cut(cluster, make_run):
    run = make_run("s13", c=cluster)
    noise = run.name.rsplit("/", 1)[0] + "/noise"  # under neither prefix the checker reads
    with CutProxy(cluster.members[0].client_port) as proxy:
        hrec = Recorder(os.path.join(run.dir, "holder.jsonl"), "holder")
        wrec = Recorder(os.path.join(run.dir, "waiter.jsonl"), "waiter")
        direct = etcdlock.Client(cluster.endpoints, timeout=5)
        cut_client = etcdlock.Client(proxy.endpoint, timeout=2)
        try:
            holder = Holder(direct, hrec, run, TTL)
            assert holder.acquire(10)
            # Five waiters of another process queue behind the holder, then ours, then two more
            # workers: the waiter's predecessor changes and goes while its watch is down.
            mid = run.workload("mid", herd=5, count=1, hold_ms=50, duration=40, acquire_timeout=40)
            assert len(wait_queue(run, 6, 15)) == 6, queue(run)
            # A plain watch on the cut client, made current.
            watch = cut_client.watch(noise)
            it = iter(watch)
            r1 = direct.put(noise, "before")
            status, ev = in_thread(lambda: next(it), 10)
            assert status == "ok" and ev.revision == r1, (status, ev)

            waiter = Holder(cut_client, wrec, run, WAITER_TTL)
            box = {}

            def wait_then_cycle():
                try:
                    box["got"] = waiter.acquire(40)
                    if box["got"]:
                        box["write"] = waiter.write_and_release()
                except etcdlock.Error as e:
                    box["error"] = e
                box["t_end"] = time.monotonic_ns()

            wt = threading.Thread(target=wait_then_cycle, daemon=True)
            wt.start()
            assert len(wait_queue(run, 7, 10)) == 7, queue(run)
            behind = [run.workload(f"b{i}", count=5, hold_ms=20, duration=45, acquire_timeout=35) for i in range(2)]
            assert len(wait_queue(run, 9, 15)) == 9, queue(run)
            time.sleep(0.3)  # the waiter's watch on its predecessor is in place

            proxy.cut()
            t_cut = time.monotonic_ns()
            run.nemesis.event("cut", target="waiter")
            assert holder.write_and_release() == "ok"
            run.wait([mid], 20)  # every key ahead of the waiter is gone: it is the head now
            head = 0
            for i in range(300):
                head = direct.put(noise, f"n{i}")
            cluster.etcdctl("compact", str(head))
            run.nemesis.event("compact", revision=head)
            assert queue(run)[0].startswith(run.lock_prefix)
            assert "got" not in box, "the waiter acquired through a cut path"
            time.sleep(max(0.0, CUT_S - (time.monotonic_ns() - t_cut) / 1e9))
            assert "got" not in box and "error" not in box, box
            reset = proxy.restore()
            t_restore = time.monotonic_ns()
            run.nemesis.event("restore", target="waiter", reset=reset)

            wt.join(20)
            assert not wt.is_alive(), "the waiter still waits 20 s after its path came back: a hang"
            status, res = in_thread(lambda: next(it), 15)
            if status == "hung":
                watch.close()
            stats = run.wait(behind, 60)
        finally:
            cut_client.close()
            direct.close()
            hrec.close()
            wrec.close()
    finish_compacted(run)
    recs = run.records()
    took = (box.get("t_end", 0) - t_restore) / 1e9
    acq = sorted(oks(recs, "acquire"), key=lambda r: r["t"])
    order = [r["process"] for r in acq]
    print(f"FAULT-COMPACT-001: cut {(t_restore - t_cut) / 1e9:.2f} s ({proxy.dropped} bytes dropped, {reset} "
          f"connections reset), compacted at {head}; waiter: {box}, its cycle ended {took:.2f} s after the "
          f"restore; plain watch after the restore: {status} {res!r}; order {order}; {stats}")
    assert "error" not in box, f"the waiter failed: {box['error']!r}"
    assert box.get("got") is True and box.get("write") == "ok", box
    assert took < 8, f"the waiter needed {took:.2f} s after its path came back"
    # FIFO: the waiter queued after the holder and the five 'mid' tasks, before b0 and b1.
    first = order.index("waiter")
    assert sorted(order[:first]) == sorted(["holder"] + ["mid/%d" % i for i in range(5)]), order
    assert all(p.startswith("b") for p in order[first + 1:]), order
    assert [s["acquired"] for s in stats] == [5, 5], stats
    # The plain watch: its next revision (r1 + 1) is gone; it must say so.
    assert status == "error" and isinstance(res, etcdlock.Compacted), \
        f"a watch whose history was compacted while it was down returned {status} {res!r}"
    assert res.compact_revision == head, (res.compact_revision, head)
    run.check()
    assert_nothing_left(run.hist)


# ------------------------------------------------------------------ S17 ---

FLOOD = 3000  # puts while the watch's reader sleeps: far more than the 256 responses buffered

FLOODER = r"""
import asyncio, json, sys
import etcdlock
async def main(endpoints, prefix, n):
    async with etcdlock.AsyncClient(endpoints.split(","), timeout=10) as c:
        await c.connect()
        sem = asyncio.Semaphore(32)
        async def one(i):
            async with sem:
                return await c.put(f"{prefix}{i:05d}", f"v{i}")
        revs = await asyncio.gather(*(one(i) for i in range(n)))
    print(json.dumps(revs))
asyncio.run(asyncio.wait_for(main(sys.argv[1], sys.argv[2], int(sys.argv[3])), 90))
"""


# covers: FAULT-SLOWWATCH-001
def test_slow_watch_consumer_gets_every_event_and_does_not_starve_locks(cluster, make_run):
    run = make_run("s17")
    flood_prefix = run.name.rsplit("/", 1)[0] + "/flood/"  # under neither prefix the checker reads
    rec = Recorder(os.path.join(run.dir, "same-client.jsonl"), "same-client")
    client = etcdlock.Client(cluster.endpoints, timeout=5)
    stop = threading.Event()
    cycles, errors = [], []
    try:
        r0 = client.put(flood_prefix.rstrip("/"), "start")  # not under the watched prefix
        watch = client.watch(flood_prefix, prefix=True, start_revision=r0 + 1)
        it = iter(watch)
        rival = run.workload("rival", count=100000, hold_ms=20, duration=12, acquire_timeout=10)

        def lock_cycles():
            """Lock cycles on the watch's client, contended by the rival, until stop (bounded)."""
            deadline = time.monotonic() + 60
            while not stop.is_set() and time.monotonic() < deadline:
                h = Holder(client, rec, run, TTL)
                t0 = time.monotonic()
                try:
                    if not h.acquire(5):
                        errors.append("acquire timed out (5 s)")
                        continue
                    cycles.append((time.monotonic_ns(), time.monotonic() - t0))
                    h.write_and_release()
                except etcdlock.Error as e:
                    errors.append(repr(e))
                time.sleep(0.02)

        locker = threading.Thread(target=lock_cycles, daemon=True)
        locker.start()
        time.sleep(1.0)
        # The flood, from another process, while nobody reads the watch.
        t_flood = time.monotonic_ns()
        fl = subprocess.run([sys.executable, "-c", FLOODER, ",".join(cluster.endpoints), flood_prefix, str(FLOOD)],
                            capture_output=True, text=True, timeout=120)
        assert fl.returncode == 0, fl.stderr[-2000:]
        revs = json.loads(fl.stdout.strip().splitlines()[-1])
        flood_s = (time.monotonic_ns() - t_flood) / 1e9
        time.sleep(2.0)  # the reader keeps sleeping a while after the last put
        t_read = time.monotonic_ns()
        during = [lat for t, lat in cycles if t_flood <= t <= t_read]

        got = []

        def read_all():
            while len(got) < FLOOD:
                got.append(next(it))

        status, res = in_thread(read_all, 60)
        if status == "hung":
            watch.close()
        read_s = (time.monotonic_ns() - t_read) / 1e9
        stop.set()
        locker.join(15)
        stats = run.wait([rival], 60)
    finally:
        stop.set()
        client.close()
        rec.close()
    run.finish()
    expect = sorted(zip(revs, (f"{flood_prefix}{i:05d}" for i in range(FLOOD))))
    seen = [(e.revision, e.key.decode()) for e in got]
    print(f"FAULT-SLOWWATCH-001: {FLOOD} puts in {flood_s:.2f} s (revisions {min(revs)}..{max(revs)}) while the "
          f"reader slept; read {len(got)} events in {read_s:.2f} s ({status} {res!r}); "
          f"lock cycles on the same client while the reader slept: {len(during)}, slowest acquire "
          f"{max(during, default=0):.3f} s; all cycles {len(cycles)}, errors {errors[:3]}; rival {stats}")
    assert status == "ok", f"reading the slow watch ended with {status} {res!r} after {len(got)} events"
    assert seen == expect, (f"the slow watch's events differ from the puts: first difference at "
                            f"{next(i for i, (a, b) in enumerate(zip(seen + [None] * FLOOD, expect)) if a != b)}")
    assert len(set(seen)) == FLOOD
    assert not errors, errors[:5]
    assert len(during) >= 5, f"only {len(during)} lock cycles on the watch's client during the flood"
    assert max(during) < 2.0, f"an acquire on the watch's client took {max(during):.2f} s during the flood"
    assert stats[0]["acquired"] >= 20, stats
    run.check()
    assert_nothing_left(run.hist)
