"""The metrics of etcdlock clients in a ``prometheus_client`` registry.

``register(client)`` adds a client (sync ``Client`` or ``AsyncClient``) to the registry's one
etcdlock collector, created on first use; ``unregister(client)`` takes it out (and the collector
with the last one). The families are the core's (``etcdlock_lock_acquisitions_total``,
``etcdlock_lock_wait_seconds`` ...: the same names, help and types as ``metrics_text()``), read
from each client at every scrape, each series labelled ``client="<client.name>"``. One
collector for all the clients of a registry, so that each family is described once and the
registry finds no duplicate series::

    import etcdlock, etcdlock.prometheus
    from prometheus_client import generate_latest

    orders = etcdlock.Client("127.0.0.1:2379", name="orders")
    billing = etcdlock.Client("127.0.0.1:2379", name="billing")
    etcdlock.prometheus.register(orders)
    etcdlock.prometheus.register(billing)
    print(generate_latest().decode())

Needs ``prometheus_client`` (``pip install 'etcdlock[prometheus]'``); ``import etcdlock`` does
not import this module.
"""
import threading
import weakref
from typing import Any, Dict, Iterator, List, Optional, Union

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector, CollectorRegistry

from ._aio import AsyncClient
from ._sync import Client

__all__ = ["EtcdLockCollector", "register", "unregister"]

AnyClient = Union[Client, AsyncClient]


class EtcdLockCollector(Collector):
    """The etcdlock families of the clients added to it, read at each ``collect()``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: Dict[str, AnyClient] = {}

    def add(self, client: AnyClient) -> None:
        """Adds ``client``; ``ValueError`` if a client of that name is in it already (their
        series would be the same)."""
        with self._lock:
            if client.name in self._clients:
                raise ValueError(f"a client named {client.name!r} is registered already")
            self._clients[client.name] = client

    def remove(self, client: AnyClient) -> bool:
        """Takes ``client`` out (``KeyError`` if it is not in); returns whether none is left."""
        with self._lock:
            if self._clients.get(client.name) is not client:
                raise KeyError(f"client {client.name!r} is not registered")
            del self._clients[client.name]
            return not self._clients

    def describe(self) -> List[Metric]:
        """The families without samples, so the registry checks their names against its other
        collectors' once, when this one is registered."""
        return list(_families([]))

    def collect(self) -> Iterator[Metric]:
        """The families of every registered client, each series labelled with its client's name
        (prometheus_client calls this on each scrape)."""
        with self._lock:
            clients = list(self._clients.items())
        return _families([(name, c._n.metric_families()) for name, c in clients])


def _families(snapshots: "List[Any]") -> Iterator[Metric]:
    # Every snapshot lists the same families in the same order (Metrics::entries); an empty
    # client's list gives the shapes only.
    shapes = snapshots[0][1] if snapshots else _SHAPES
    for i, (name, help_, kind, label, _) in enumerate(shapes):
        labels = ["client"] + ([label] if label else [])
        if kind == "histogram":
            fam: Metric = HistogramMetricFamily(name, help_, labels=labels)
        elif kind == "gauge":
            fam = GaugeMetricFamily(name, help_, labels=labels)
        else:
            fam = CounterMetricFamily(name, help_, labels=labels)
        for client, entries in snapshots:
            value = entries[i][4]
            if kind == "histogram":
                count, total, buckets = value
                fam.add_metric([client], buckets=list(buckets) + [("+Inf", count)], sum_value=total)
            elif label:
                for label_value, n in value.items():
                    fam.add_metric([client, label_value], n)
            else:
                fam.add_metric([client], value)
        yield fam


_SHAPES: "List[Any]" = []
_per_registry: "weakref.WeakKeyDictionary[CollectorRegistry, EtcdLockCollector]" = weakref.WeakKeyDictionary()
_registering = threading.Lock()


def _shapes_from(client: AnyClient) -> None:
    global _SHAPES
    if not _SHAPES:
        _SHAPES = client._n.metric_families()


def register(client: AnyClient, registry: Optional[CollectorRegistry] = None) -> EtcdLockCollector:
    """Adds ``client``'s metrics to ``registry`` (default: ``prometheus_client.REGISTRY``),
    through the registry's one etcdlock collector (returned). ``ValueError`` if a client of the
    same name is registered there already, or if another collector of the registry has one of
    the etcdlock family names. ``TypeError`` for anything but an etcdlock client."""
    if not isinstance(client, (Client, AsyncClient)):
        raise TypeError(f"client must be an etcdlock Client or AsyncClient, not {type(client).__name__}")
    registry = REGISTRY if registry is None else registry
    _shapes_from(client)
    with _registering:
        collector = _per_registry.get(registry)
        if collector is None:
            collector = EtcdLockCollector()
            collector.add(client)
            registry.register(collector)
            _per_registry[registry] = collector
        else:
            collector.add(client)
        return collector


def unregister(client: AnyClient, registry: Optional[CollectorRegistry] = None) -> None:
    """Takes ``client``'s metrics out of ``registry`` (the collector goes with the last
    client). ``KeyError`` if it was not registered there."""
    registry = REGISTRY if registry is None else registry
    with _registering:
        collector = _per_registry.get(registry)
        if collector is None:
            raise KeyError(f"client {client.name!r} is not registered")
        if collector.remove(client):
            registry.unregister(collector)
            del _per_registry[registry]
