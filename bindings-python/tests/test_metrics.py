"""Per-client metrics (``client.metrics()``, ``client.metrics_text()``): exact after a known
sequence, and Prometheus text that a strict reader (tests/prometheus_text.py) accepts."""

import asyncio

import pytest

import etcdlock
import prometheus_text

COUNTERS = {
    "acquisitions": "etcdlock_lock_acquisitions_total",
    "lock_timeouts": "etcdlock_lock_timeouts_total",
    "would_block": "etcdlock_lock_would_block_total",
    "acquire_failures": "etcdlock_lock_acquire_failures_total",
    "releases": "etcdlock_lock_releases_total",
    "release_failures": "etcdlock_lock_release_failures_total",
}
REASONS = ["expired", "revoked", "key_deleted", "closed"]


def assert_text_matches(m, text, client):
    """The text parses strictly, every series labelled with the client's name, and says what
    the dict says."""
    samples = prometheus_text.parse(text, client=client.name)
    for key, sample in COUNTERS.items():
        assert samples[sample] == m[key], key
    for reason in REASONS:
        assert samples[f'etcdlock_lock_losses_total{{reason="{reason}"}}'] == m["losses"][reason]
    for h in ("lock_wait_seconds", "lock_hold_seconds"):
        assert samples[f"etcdlock_{h}_count"] == m[h]["count"]
        assert samples[f'etcdlock_{h}_bucket{{le="+Inf"}}'] == m[h]["count"]
        assert samples[f"etcdlock_{h}_sum"] == pytest.approx(m[h]["sum"])
        for le, n in m[h]["buckets"]:
            assert samples[f'etcdlock_{h}_bucket{{le="{le:g}"}}'] == n


# covers: OBS-METRICS-001
def test_counts_and_histograms_are_exact_after_a_known_sequence(etcd, prefix):
    name = f"{prefix}/jobs"
    with etcdlock.Client(etcd.endpoints) as a, etcdlock.Client(etcd.endpoints) as b:
        lock = a.lock(name, ttl=10)
        for _ in range(3):
            with lock:
                pass
        # One timeout: the other client holds the lock.
        with b.lock(name, ttl=10):
            assert not lock.acquire(timeout=0.2)
        # One loss: an operator deletes the key; the release after it fails.
        assert lock.acquire()
        etcd.ctl("del", lock.key.decode())
        etcd.wait_until(lambda: not lock.is_held(), what="the loss seen")
        with pytest.raises(etcdlock.NotHeld):
            lock.release()

        m = a.metrics()
        counts = {k: m[k] for k in COUNTERS}
        assert counts == dict(acquisitions=4, lock_timeouts=1, would_block=0, acquire_failures=0, releases=3, release_failures=1)
        assert m["losses"] == {"expired": 0, "revoked": 0, "key_deleted": 1, "closed": 0}
        assert m["lock_wait_seconds"]["count"] == 4
        assert m["lock_hold_seconds"]["count"] == 4, "three releases and one loss"
        assert 0 < m["lock_wait_seconds"]["sum"] < 10
        buckets = m["lock_hold_seconds"]["buckets"]
        assert [le for le, _ in buckets][:2] == [0.001, 0.0025] and buckets[-1][0] == 10.0
        assert all(x[1] <= y[1] for x, y in zip(buckets, buckets[1:])), "cumulative"
        assert b.metrics()["acquisitions"] == 1, "per client"
        assert_text_matches(m, a.metrics_text(), a)


# covers: OBS-METRICS-001
def test_async_client_metrics_without_awaiting(etcd, prefix):
    name = f"{prefix}/async"

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            before = client.metrics()  # not connected yet: zeros, same names
            assert before["acquisitions"] == 0 and before["lock_wait_seconds"]["count"] == 0
            assert_text_matches(before, client.metrics_text(), client)
            for _ in range(2):
                async with client.lock(name, ttl=10):
                    pass
            m = client.metrics()
            assert (m["acquisitions"], m["releases"], m["lock_hold_seconds"]["count"]) == (2, 2, 2)
            assert_text_matches(m, client.metrics_text(), client)

    asyncio.run(main())


def test_the_text_reader_is_strict():
    """The reader the tests trust refuses what is not the format."""
    good = "# TYPE x_total counter\nx_total 1\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 0.5\nh_count 2\n"
    assert prometheus_text.parse(good)["h_count"] == 2
    for bad in [
        good.replace("x_total 1", "x_total one"),
        good.replace("h_count 2", "h_count 3"),
        good.replace('h_bucket{le="1"} 1', 'h_bucket{le="1"} 3'),
        good.replace('{le="+Inf"}', '{le="2"}'),
        good + "x_total 2\n",
        good.replace("\n", "", 1),
        good[:-1],
    ]:
        with pytest.raises(ValueError):
            prometheus_text.parse(bad)


# covers: METRICS-LABEL-001
def test_each_client_labels_its_series_with_its_name(etcd):
    with etcdlock.Client(etcd.endpoints) as a, etcdlock.Client(etcd.endpoints, name='billing "eu"\\1') as named:
        b = etcdlock.AsyncClient(etcd.endpoints)  # never connected: its name is known already
        assert a.name.startswith("etcdlock-") and b.name.startswith("etcdlock-") and a.name != b.name
        assert named.name == 'billing "eu"\\1'
        for c in (a, b, named):
            assert prometheus_text.parse(c.metrics_text(), client=c.name)["etcdlock_lock_acquisitions_total"] == 0
        assert 'etcdlock_leases_alive{client="billing \\"eu\\"\\\\1"} 0\n' in named.metrics_text()
    with pytest.raises(ValueError, match="name"):
        etcdlock.Client(etcd.endpoints, name="")
    with pytest.raises(ValueError, match="name"):
        etcdlock.AsyncClient(etcd.endpoints, name="")
    with pytest.raises(TypeError, match="name"):
        etcdlock.AsyncClient(etcd.endpoints, name=b"x")
