"""The blocking API against a real etcd."""

import asyncio
import json
import threading
import time

import pytest

import etcdlock


# covers: KV-BASIC-001
def test_kv_str_and_bytes(client, prefix):
    assert isinstance(client.put(f"{prefix}/s", "héllo"), int)
    assert client.get(f"{prefix}/s") == "héllo".encode()
    client.put(f"{prefix}/b".encode(), b"\x00\xff")
    assert client.get(bytearray(f"{prefix}/b".encode())) == b"\x00\xff"
    client.put(f"{prefix}/empty", "")
    assert client.get(f"{prefix}/empty") == b""
    assert client.get(f"{prefix}/missing") is None
    assert client.delete(f"{prefix}/s") is True
    assert client.delete(f"{prefix}/s") is False


# covers: LOCK-BASIC-001, LOCK-RELEASE-001
def test_lock_acquire_release(client, etcd, prefix):
    lock = client.lock(f"{prefix}/l", ttl=5)
    assert lock.fencing_token is None and lock.key is None and not lock.is_held()
    assert lock.acquire() is True
    assert lock.is_held()
    assert isinstance(lock.fencing_token, int)
    assert lock.key.startswith(f"{prefix}/l/".encode())
    assert etcd.keys(f"{prefix}/l/") == [lock.key]
    # <name>/<lease hex>: the suffix names the (live) lease the key is attached to.
    (kv,) = json.loads(etcd.ctl("get", lock.key.decode(), "-w", "json"))["kvs"]
    assert kv["lease"] in etcd.leases()
    assert lock.key.decode()[len(f"{prefix}/l/"):].startswith(format(kv["lease"], "x"))
    assert lock.fencing_token == kv["create_revision"]
    lock.release()
    assert not lock.is_held() and lock.fencing_token is None
    assert etcd.keys(f"{prefix}/l/") == []
    rev = etcd.revision()
    with pytest.raises(etcdlock.NotHeld):
        lock.release()
    assert etcd.revision() == rev  # the second release changed nothing


# covers: LOCK-SESSION-001
def test_locks_of_one_ttl_share_the_clients_lease(etcd, prefix):
    with etcdlock.Client(etcd.endpoints) as c:
        a, b, other = c.lock(f"{prefix}/a", ttl=7), c.lock(f"{prefix}/b", ttl=7), c.lock(f"{prefix}/c", ttl=9)
        assert a.lease_id is None
        with a, b, other:
            assert a.lease_id == b.lease_id != other.lease_id
        shared = a.lease_id
        # A new Lock object per cycle, as `with client.lock(name):` makes: no grant, no revoke.
        for _ in range(3):
            with c.lock(f"{prefix}/a", ttl=7) as held:
                assert held.lease_id == shared
        assert shared in etcd.leases()
    assert shared not in etcd.leases()  # close() revoked it


# covers: LOCK-TOKEN-001
def test_tokens_increase_and_context_manager(client, prefix):
    tokens = []
    for _ in range(3):
        with client.lock(f"{prefix}/cm", ttl=5, timeout=5.0) as held:
            assert held.is_held()
            tokens.append(held.fencing_token)
        assert not held.is_held()
    assert tokens == sorted(set(tokens))


# covers: LOCK-TRY-001, LOCK-TIMEOUT-001
def test_try_once_and_timeout(client, etcd, prefix):
    a, b = client.lock(f"{prefix}/t", ttl=5), client.lock(f"{prefix}/t", ttl=5)
    assert a.acquire()
    leases = etcd.leases()
    t0 = time.monotonic()
    assert b.acquire(blocking=False) is False
    assert time.monotonic() - t0 < 0.5  # at once: no waiting in the queue
    assert etcd.keys(f"{prefix}/t/") == [a.key] and etcd.leases() == leases
    t0 = time.monotonic()
    assert b.acquire(timeout=0.3) is False
    assert 0.25 < time.monotonic() - t0 < 2.0
    # Failed attempts left nothing behind: no queue key, no lease.
    assert etcd.keys(f"{prefix}/t/") == [a.key] and etcd.leases() == leases
    with pytest.raises(etcdlock.LockTimeout) as ei:
        with client.lock(f"{prefix}/t", ttl=5, timeout=0.2):
            pytest.fail("body ran without the lock")
    assert isinstance(ei.value, TimeoutError)
    a.release()
    assert b.acquire(blocking=False) is True
    b.release()


def test_threads_share_one_lock_object(client, prefix):
    """threading.Lock style: acquisitions from several threads exclude each other."""
    lock = client.lock(f"{prefix}/shared", ttl=5)
    inside, overlaps, done = [0], [0], []

    def worker():
        for _ in range(3):
            assert lock.acquire(timeout=10)
            inside[0] += 1
            overlaps[0] += inside[0] > 1
            time.sleep(0.01)
            inside[0] -= 1
            lock.release()
        done.append(1)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(done) == 3 and overlaps[0] == 0


# covers: LOCK-EXCL-001
def test_many_threads_guarded_counter(etcd, prefix):
    """Contenders on separate clients and lock objects, each doing a guarded
    read-increment-write of a counter kept in etcd."""
    n_threads, rounds = 6, 5
    clients = [etcdlock.Client(etcd.endpoints) for _ in range(n_threads)]
    counter = f"{prefix}/counter"
    inside, overlaps, acquisitions, errors = [0], [0], [0], []
    mu = threading.Lock()

    def worker(c):
        try:
            lock = c.lock(f"{prefix}/excl", ttl=10)
            for _ in range(rounds):
                assert lock.acquire(timeout=30)
                with mu:
                    inside[0] += 1
                    overlaps[0] += inside[0] > 1
                    acquisitions[0] += 1
                value = int(c.get(counter) or b"0")
                time.sleep(0.002)
                c.put(counter, str(value + 1), if_held=lock)
                with mu:
                    inside[0] -= 1
                lock.release()
        except BaseException as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(c,)) for c in clients]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        assert overlaps[0] == 0, "two holders at once"
        assert acquisitions[0] == n_threads * rounds
        assert clients[0].get(counter) == str(acquisitions[0]).encode()
        assert etcd.keys(f"{prefix}/excl/") == []
    finally:
        for c in clients:
            c.close()


def test_blocking_acquire_releases_the_gil(client, prefix):
    holder = client.lock(f"{prefix}/gil", ttl=5)
    assert holder.acquire()
    waiter = client.lock(f"{prefix}/gil", ttl=5)
    result = []
    t = threading.Thread(target=lambda: result.append(waiter.acquire(timeout=10)))
    t.start()
    # This thread keeps running Python code while the other one waits in acquire().
    count, deadline = 0, time.monotonic() + 0.5
    while time.monotonic() < deadline:
        count += 1
    assert count > 100_000
    holder.release()
    t.join(10)
    assert result == [True]
    waiter.release()


# covers: LOCK-GUARD-001
def test_put_if_held(client, etcd, prefix):
    lock = client.lock(f"{prefix}/f", ttl=5)
    with pytest.raises(etcdlock.NotHeld):
        client.put(f"{prefix}/data", "x", if_held=lock)  # never acquired
    assert lock.acquire()
    rev = client.put(f"{prefix}/data", "v1", if_held=lock)
    assert client.get(f"{prefix}/data") == b"v1" and rev > 0
    with client.lease(5) as lease:
        client.put(f"{prefix}/leased", "v", lease=lease, if_held=lock)
        assert client.get(f"{prefix}/leased") == b"v"
    assert client.get(f"{prefix}/leased") is None  # went with the lease
    etcd.ctl("del", lock.key.decode())  # an operator breaks the lock
    with pytest.raises(etcdlock.NotHeld):
        client.put(f"{prefix}/data", "v2", if_held=lock)
    assert client.get(f"{prefix}/data") == b"v1"  # nothing written
    lock.release() if lock.is_held() else None


# covers: LOCK-FENCED-001
def test_stale_holder_is_fenced(etcd, prefix):
    name = f"{prefix}/stale"
    with etcdlock.Client(etcd.endpoints) as c1, etcdlock.Client(etcd.endpoints) as c2:
        stale = c1.lock(name, ttl=10)
        assert stale.acquire()
        assert c1.put(f"{prefix}/data", "v1", if_held=stale) > 0
        etcd.ctl("del", stale.key.decode())  # an operator breaks the lock...
        new = c2.lock(name, ttl=10)
        assert new.acquire(timeout=5)  # ...and a new holder gets in
        assert etcd.keys(name + "/") == [new.key]
        rev = etcd.revision()
        with pytest.raises(etcdlock.NotHeld):
            c1.put(f"{prefix}/data", "stale", if_held=stale)
        with pytest.raises(etcdlock.NotHeld):
            stale.release()
        assert etcd.revision() == rev  # nothing written, nothing deleted
        assert c2.get(f"{prefix}/data") == b"v1"
        assert etcd.keys(name + "/") == [new.key] and new.is_held()
        c2.put(f"{prefix}/data", "v2", if_held=new)
        new.release()
        assert etcd.keys(name + "/") == []


# covers: LOCK-LOST-001, LOCK-RELEASE-001
def test_on_lost_key_deleted(client, etcd, prefix):
    lock = client.lock(f"{prefix}/lost", ttl=5)
    got = []
    lock.on_lost(got.append)
    assert lock.acquire()
    etcd.ctl("del", lock.key.decode())
    etcd.wait_until(lambda: got, what="on_lost")
    time.sleep(0.2)
    assert got == ["key_deleted"]
    assert lock.lost_reason == "key_deleted" and not lock.is_held()
    late = []
    lock.on_lost(late.append)  # already lost: still told, once
    etcd.wait_until(lambda: late, what="late on_lost")
    assert late == ["key_deleted"] and got == ["key_deleted"]
    rev = etcd.revision()
    with pytest.raises(etcdlock.NotHeld):
        lock.release()
    assert etcd.revision() == rev  # release after loss changed nothing


def test_on_lost_not_called_on_release(client, prefix):
    lock = client.lock(f"{prefix}/rel", ttl=5)
    got = []
    lock.on_lost(got.append)
    for _ in range(3):
        assert lock.acquire()
        lock.release()
    time.sleep(0.3)
    assert got == []


def test_with_block_raises_lock_lost(client, etcd, prefix):
    with pytest.raises(etcdlock.LockLost):
        with client.lock(f"{prefix}/wl", ttl=5) as lock:
            etcd.ctl("del", lock.key.decode())
            etcd.wait_until(lambda: not lock.is_held(), what="loss noticed")


# covers: LOCK-LOST-002
def test_on_lost_closed_and_close_ends_waits(etcd, prefix):
    c1, c2 = etcdlock.Client(etcd.endpoints), etcdlock.Client(etcd.endpoints)
    held = c1.lock(f"{prefix}/c", ttl=5)
    got = []
    held.on_lost(got.append)
    assert held.acquire()
    waiter = c2.lock(f"{prefix}/c", ttl=2)
    errors = []

    def wait():
        try:
            waiter.acquire()
        except etcdlock.Error as e:
            errors.append(e)

    t = threading.Thread(target=wait)
    t.start()
    etcd.wait_until(lambda: len(etcd.keys(f"{prefix}/c/")) == 2, what="waiter queued")
    c2.close()
    t.join(5)
    assert len(errors) == 1 and isinstance(errors[0], etcdlock.Closed)
    c1.close()
    etcd.wait_until(lambda: got, what="on_lost closed")
    assert got == ["closed"]
    assert held.key not in etcd.keys(f"{prefix}/c/")  # close revoked the holder's lease
    # The waiter's key goes with its lease, revoked by close(): well before its 2 s TTL could
    # expire it. (A lease an acquire was still cleaning up once stayed until it expired: the
    # keeper now knows a lease until its revoke is done, so close() revokes it too.)
    etcd.wait_until(lambda: etcd.keys(f"{prefix}/c/") == [], timeout=1, what="waiter key gone")
    for call in (lambda: c1.get("x"), lambda: c1.put("x", "y"), lambda: held.acquire(), lambda: c1.lock("n"), lambda: c1.lease(5)):
        with pytest.raises(etcdlock.Closed):
            call()
    c1.close()  # idempotent


# covers: CONN-CLOSE-WAITER-001
def test_close_fails_waiter_and_removes_its_queue_key(etcd, prefix):
    """Unlike the test above, the waiter's lease has a 30 s TTL: its key must go with close(),
    not with the lease's expiry."""
    with etcdlock.Client(etcd.endpoints) as holder_client:
        for round in range(5):
            name = f"{prefix}/cw{round}"
            holder = holder_client.lock(name, ttl=30)
            assert holder.acquire()
            c = etcdlock.Client(etcd.endpoints)
            waiter = c.lock(name, ttl=30)
            errors = []

            def wait():
                try:
                    waiter.acquire()
                    errors.append("acquired?!")
                except BaseException as e:
                    errors.append(e)

            t = threading.Thread(target=wait)
            t.start()
            etcd.wait_until(lambda: len(etcd.keys(name + "/")) == 2, what="waiter queued")
            c.close()
            t.join(5)
            assert not t.is_alive()
            assert len(errors) == 1 and isinstance(errors[0], etcdlock.Closed), errors
            assert not waiter.is_held()
            etcd.wait_until(lambda: etcd.keys(name + "/") == [holder.key], timeout=2,
                            what=f"round {round}: the waiter's key gone after close()")
            holder.release()


# covers: LEASE-REVOKE-001
def test_lease(client, etcd, prefix):
    lease = client.lease(ttl=5)
    assert lease.ttl == 5 and lease.is_alive() and 0 < lease.remaining() <= 5
    assert lease.id in etcd.leases()
    client.put(f"{prefix}/k", "v", lease=lease)
    got = []
    lease.on_lost(got.append)
    lease.revoke()
    lease.revoke()  # idempotent
    etcd.wait_until(lambda: got, what="lease on_lost")
    assert got == ["revoked"] and not lease.is_alive() and lease.lost_reason == "revoked"
    assert client.get(f"{prefix}/k") is None
    with pytest.raises(etcdlock.LockLost):
        client.put(f"{prefix}/k", "v", lease=lease)


# covers: LEASE-TTL-001
def test_lease_ttl_below_server_minimum(client, etcd):
    # etcd's minimum TTL is ceil(1.5 * election timeout) = 2 s with the test etcd's settings.
    with client.lease(1) as lease:
        assert lease.ttl == 2
        assert 1 < lease.remaining() <= 2
        out = json.loads(etcd.ctl("lease", "timetolive", format(lease.id, "x"), "-w", "json"))
        assert out["granted-ttl"] == 2


# covers: LEASE-LOST-001
def test_lease_revoked_from_outside(client, etcd, prefix):
    lease = client.lease(ttl=5)
    got = []
    lease.on_lost(got.append)
    etcd.ctl("lease", "revoke", format(lease.id, "x"))
    etcd.wait_until(lambda: got, timeout=10, what="lease loss noticed")
    for _ in range(5):  # fired once, and never alive again
        assert got == ["expired"] and not lease.is_alive()
        time.sleep(0.3)
    assert lease.lost_reason == "expired"


# covers: WATCH-BASIC-001, WATCH-START-001
def test_watch(client, prefix):
    w = client.watch(f"{prefix}/", prefix=True)
    wk = client.watch(f"{prefix}/a")  # a single key
    r1 = client.put(f"{prefix}/a", "1")
    client.put(f"{prefix}/b", b"2")
    r3 = client.put(f"{prefix}/a", "3")
    client.delete(f"{prefix}/a")
    client.put("elsewhere", "x")
    events = [next(w) for _ in range(4)]
    assert [(e.type, e.key, e.value) for e in events] == [
        ("put", f"{prefix}/a".encode(), b"1"),
        ("put", f"{prefix}/b".encode(), b"2"),
        ("put", f"{prefix}/a".encode(), b"3"),
        ("delete", f"{prefix}/a".encode(), b""),
    ]
    assert events[0].revision == r1 and events[2].revision == r3
    revs = [e.revision for e in events]
    assert revs == sorted(set(revs))
    key_events = [next(wk) for _ in range(3)]
    assert [(e.type, e.key, e.value, e.revision) for e in key_events] == [
        (e.type, e.key, e.value, e.revision) for e in events if e.key == f"{prefix}/a".encode()
    ]
    wk.close()
    w.close()
    assert list(w) == []
    # From a past revision, a single key.
    with client.watch(f"{prefix}/a", start_revision=r1) as w2:
        assert [(e.type, e.value, e.revision) for e in (next(w2) for _ in range(3))] == [
            (e.type, e.value, e.revision) for e in key_events
        ]


def test_watch_close_from_another_thread(client, prefix):
    w = client.watch(f"{prefix}/x")
    out = []
    t = threading.Thread(target=lambda: out.append(list(w)))
    t.start()
    time.sleep(0.2)
    w.close()
    t.join(5)
    assert out == [[]]


# covers: WATCH-COMPACT-001
def test_watch_compacted(client, etcd, prefix):
    old = client.put(f"{prefix}/c", "1")
    client.put(f"{prefix}/c", "2")
    now = client.put(f"{prefix}/c", "3")
    etcd.ctl("compact", str(now))
    with pytest.raises(etcdlock.Compacted) as ei:
        w = client.watch(f"{prefix}/c", start_revision=old)  # the core reports it here or on the first read
        next(w)
    assert ei.value.compact_revision == now
    assert list(w) == []  # the watch is finished


# covers: RT-WRONGCTX-001
def test_sync_api_refuses_to_block_an_event_loop(client, prefix):
    lock = client.lock(f"{prefix}/loop", ttl=5)
    w = client.watch(f"{prefix}/loop-w")

    async def inside():
        with pytest.raises(etcdlock.WrongContextError, match="event loop") as ei:
            lock.acquire()
        assert isinstance(ei.value, RuntimeError)
        with pytest.raises(etcdlock.WrongContextError):
            next(w)
        assert lock.acquire(blocking=False)  # a single try does not wait for anyone
        lock.release()

    asyncio.run(inside())
    w.close()


# covers: CONN-UNREACH-001
def test_unreachable_endpoint():
    t0 = time.monotonic()
    with pytest.raises(etcdlock.Unavailable) as ei:
        etcdlock.Client("http://127.0.0.1:1", timeout=0.5)
    assert isinstance(ei.value, ConnectionError)
    assert time.monotonic() - t0 < 3.0


def test_dropped_lock_is_released(client, etcd, prefix):
    import gc

    lock = client.lock(f"{prefix}/gc", ttl=30)
    assert lock.acquire()
    del lock
    gc.collect()
    # Released in the background (fenced delete), not after the 30 s TTL.
    etcd.wait_until(lambda: etcd.keys(f"{prefix}/gc/") == [], timeout=5, what="dropped lock released")
