"""``etcdlock.prometheus``: clients' metrics in a real ``prometheus_client`` registry, read back
with its own ``generate_latest()`` and the strict text reader (tests/prometheus_text.py)."""

import asyncio
import subprocess
import sys

import pytest
from prometheus_client import REGISTRY, CollectorRegistry, Counter, generate_latest

import etcdlock
import etcdlock.prometheus
import prometheus_text


def families(text):
    """{family name: type} of a text."""
    return {line.split()[2]: line.split()[3] for line in text.splitlines() if line.startswith("# TYPE ")}


# covers: METRICS-REGISTRY-001
def test_two_clients_in_one_registry_each_under_its_name(etcd, prefix):
    registry = CollectorRegistry()
    with etcdlock.Client(etcd.endpoints, name="orders") as orders, etcdlock.Client(etcd.endpoints) as other:
        with orders.lock(f"{prefix}/job", ttl=10):
            pass
        billing = etcdlock.AsyncClient(etcd.endpoints, name="billing")  # not connected yet: zeros
        for c in (orders, other, billing):
            etcdlock.prometheus.register(c, registry=registry)
        text = generate_latest(registry).decode()
        assert families(text) == families(orders.metrics_text()), "the same families, names and types"
        # Each client's series are those of its own text, under its name.
        samples = prometheus_text.parse(text)
        for c in (orders, other, billing):
            label = f'client="{c.name}"'
            assert {k for k in samples if label in k} == set(prometheus_text.parse(c.metrics_text())), c.name
        assert len(samples) == 3 * len(prometheus_text.parse(orders.metrics_text())), "no other series"
        assert samples['etcdlock_lock_acquisitions_total{client="orders"}'] == 1
        assert samples['etcdlock_lock_acquisitions_total{client="billing"}'] == 0
        assert samples['etcdlock_lock_wait_seconds_bucket{client="orders",le="+Inf"}'] == 1
        assert samples['etcdlock_lock_losses_total{client="orders",reason="expired"}'] == 0
        assert samples[f'etcdlock_leases_alive{{client="{other.name}"}}'] == 0
        assert text.count("# TYPE etcdlock_lock_acquisitions_total counter\n") == 1

        # A second client of the same name would repeat its series: refused, nothing changed.
        with etcdlock.Client(etcd.endpoints, name="orders") as twin:
            with pytest.raises(ValueError, match="orders"):
                etcdlock.prometheus.register(twin, registry=registry)
        assert generate_latest(registry).decode().count('etcdlock_lock_acquisitions_total{client="orders"}') == 1

        etcdlock.prometheus.unregister(billing, registry=registry)
        text = generate_latest(registry).decode()
        assert 'client="billing"' not in text and 'client="orders"' in text
        with pytest.raises(KeyError):
            etcdlock.prometheus.unregister(billing, registry=registry)
        for c in (orders, other):
            etcdlock.prometheus.unregister(c, registry=registry)
        assert generate_latest(registry) == b"", "the collector left with the last client"
        asyncio.run(billing.close())


# covers: METRICS-REGISTRY-001
def test_the_default_registry_and_its_other_collectors(etcd):
    with etcdlock.Client(etcd.endpoints) as a, etcdlock.Client(etcd.endpoints) as b:
        collector = etcdlock.prometheus.register(a)
        try:
            assert etcdlock.prometheus.register(b) is collector, "one collector per registry"
            text = generate_latest(REGISTRY).decode()
            prometheus_text.parse(text)  # the whole default registry, process metrics included
            assert f'etcdlock_watches_open{{client="{a.name}"}}' in text and f'etcdlock_watches_open{{client="{b.name}"}}' in text
        finally:
            etcdlock.prometheus.unregister(a)
            etcdlock.prometheus.unregister(b)
        assert "etcdlock_" not in generate_latest(REGISTRY).decode()

        # A family name the application uses already: refused at registration.
        registry = CollectorRegistry()
        Counter("etcdlock_lock_acquisitions", "the application's own", registry=registry)
        with pytest.raises(ValueError):
            etcdlock.prometheus.register(a, registry=registry)
        with pytest.raises(TypeError):
            etcdlock.prometheus.register(object(), registry=registry)


def test_etcdlock_imports_without_prometheus_client():
    code = "import sys, etcdlock; c = etcdlock.AsyncClient('127.0.0.1:1'); c.metrics_text(); assert 'prometheus_client' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
