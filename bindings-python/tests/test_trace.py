"""Spans through the OpenTelemetry API (etcdlock/_trace.py), read back with the SDK's in-memory
exporter: etcdlock.acquire, etcdlock.hold, etcdlock.release (etcdlock.campaign and etcdlock.lead
for an election), with the name, the fencing token, the outcome and the error kind."""

import asyncio

import pytest

import etcdlock

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans():
    """The spans ended during the test (OpenTelemetry's provider is process-wide: set once)."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def named(exporter, span_name, name):
    return [s for s in exporter.get_finished_spans() if s.name == span_name and s.attributes.get("etcdlock.name") == name]


def one(exporter, span_name, name):
    found = named(exporter, span_name, name)
    assert len(found) == 1, [(s.name, dict(s.attributes)) for s in exporter.get_finished_spans()]
    return found[0]


# covers: TRACE-SPANS-001
def test_acquire_hold_and_release_are_spans_with_the_name_token_and_outcome(client, prefix, spans):
    name = f"{prefix}/held"
    lock = client.lock(name)
    assert lock.acquire()
    token = lock.fencing_token
    acquire = one(spans, "etcdlock.acquire", name)
    assert acquire.attributes["etcdlock.outcome"] == "acquired"
    assert acquire.attributes["etcdlock.fencing_token"] == token
    assert named(spans, "etcdlock.hold", name) == [], "the hold is open (not ended) while held"

    lock.release()
    hold = one(spans, "etcdlock.hold", name)
    assert (hold.attributes["etcdlock.outcome"], hold.attributes["etcdlock.fencing_token"]) == ("released", token)
    assert [l.context.span_id for l in hold.links] == [acquire.context.span_id], "the hold links to its acquire"
    release = one(spans, "etcdlock.release", name)
    assert (release.attributes["etcdlock.outcome"], release.attributes["etcdlock.fencing_token"]) == ("released", token)
    assert "etcdlock.error_kind" not in release.attributes


# covers: TRACE-SPANS-001
def test_a_timed_out_acquire_is_a_span_with_its_error_kind_and_no_hold(etcd, prefix, spans):
    name = f"{prefix}/busy"
    with etcdlock.Client(etcd.endpoints) as a, etcdlock.Client(etcd.endpoints) as b:
        with a.lock(name):
            with pytest.raises(etcdlock.LockTimeout):
                with b.lock(name, timeout=0.3):
                    pass
            assert not b.lock(name).acquire(blocking=False)
    waits = named(spans, "etcdlock.acquire", name)
    assert [(s.attributes["etcdlock.outcome"], s.attributes.get("etcdlock.error_kind")) for s in waits] == [
        ("acquired", None),
        ("timeout", "LOCK_TIMEOUT"),
        ("timeout", "WOULD_BLOCK"),
    ]
    assert "etcdlock.fencing_token" not in waits[1].attributes
    assert len(named(spans, "etcdlock.hold", name)) == 1, "only the holder's hold"


# covers: TRACE-SPANS-001
def test_a_lost_hold_ends_as_lost_with_the_reason_and_its_release_fails(client, etcd, prefix, spans):
    name = f"{prefix}/lost"
    lock = client.lock(name)
    assert lock.acquire()
    etcd.ctl("lease", "revoke", format(lock.lease_id, "x"))
    etcd.wait_until(lambda: named(spans, "etcdlock.hold", name), what="the hold span to end")
    hold = one(spans, "etcdlock.hold", name)
    assert hold.attributes["etcdlock.outcome"] == "lost"
    assert hold.attributes["etcdlock.error_kind"] == "LOCK_LOST"
    assert hold.attributes["etcdlock.lost_reason"] in ("revoked", "key_deleted")
    with pytest.raises(etcdlock.NotHeld):
        lock.release()
    release = one(spans, "etcdlock.release", name)
    assert (release.attributes["etcdlock.outcome"], release.attributes["etcdlock.error_kind"]) == ("error", "NOT_HELD")
    assert len(named(spans, "etcdlock.hold", name)) == 1, "the hold ends once"


# covers: TRACE-SPANS-001
def test_a_campaign_and_its_leadership_are_spans(client, prefix, spans):
    name = f"{prefix}/election"
    leading = client.election(name).campaign(b"me")
    token = leading.fencing_token
    campaign = one(spans, "etcdlock.campaign", name)
    assert (campaign.attributes["etcdlock.outcome"], campaign.attributes["etcdlock.fencing_token"]) == ("acquired", token)
    assert named(spans, "etcdlock.acquire", name) == []
    leading.resign()
    assert one(spans, "etcdlock.lead", name).attributes["etcdlock.outcome"] == "released"


# covers: TRACE-SPANS-001
def test_the_asyncio_lock_has_the_same_spans(etcd, prefix, spans):
    name = f"{prefix}/async"

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as c:
            lock = c.lock(name)
            assert await lock.acquire()
            token = lock.fencing_token
            await lock.release()
            return token

    token = asyncio.run(main())
    assert one(spans, "etcdlock.acquire", name).attributes["etcdlock.fencing_token"] == token
    assert one(spans, "etcdlock.hold", name).attributes["etcdlock.outcome"] == "released"
    assert one(spans, "etcdlock.release", name).attributes["etcdlock.outcome"] == "released"


# covers: TRACE-SPANS-002
def test_a_task_claimed_and_acked_are_spans_with_the_task_id_and_token(client, prefix, spans):
    name = f"{prefix}/queue"
    q = client.queue(name)
    item = q.put(b"job")
    task = q.claim(timeout=5)
    claim = one(spans, "etcdlock.task.claim", name)
    assert (claim.attributes["etcdlock.outcome"], claim.attributes["etcdlock.task_id"], claim.attributes["etcdlock.fencing_token"]) == (
        "acquired",
        item,
        task.fencing_token,
    )
    task.ack()
    ack = one(spans, "etcdlock.task.ack", name)
    assert (ack.attributes["etcdlock.outcome"], ack.attributes["etcdlock.task_id"], ack.attributes["etcdlock.fencing_token"]) == (
        "acked",
        item,
        task.fencing_token,
    )
    with pytest.raises(etcdlock.NotHeld):
        task.ack()
    refused = named(spans, "etcdlock.task.ack", name)[1]
    assert (refused.attributes["etcdlock.outcome"], refused.attributes["etcdlock.error_kind"]) == ("error", "NOT_HELD")
    # An empty queue's try: a claim that timed out (WOULD_BLOCK); the claim's own lock has no spans.
    with pytest.raises(etcdlock.WouldBlock):
        q.claim(timeout=0)
    none = named(spans, "etcdlock.task.claim", name)[1]
    assert (none.attributes["etcdlock.outcome"], none.attributes["etcdlock.error_kind"]) == ("timeout", "WOULD_BLOCK")
    assert not [s for s in spans.get_finished_spans() if s.name in ("etcdlock.acquire", "etcdlock.hold")]


# covers: TRACE-SPANS-002
def test_a_registration_and_one_refused_are_spans(etcd, prefix, spans):
    svc = f"{prefix}/svc"
    with etcdlock.Client(etcd.endpoints) as a, etcdlock.Client(etcd.endpoints) as b:
        with a.register(svc, "n1", b"a"):
            with pytest.raises(etcdlock.WouldBlock):
                b.register(svc, "n1", b"b")
    regs = named(spans, "etcdlock.register", f"{svc}/n1")
    assert [(s.attributes["etcdlock.outcome"], s.attributes.get("etcdlock.error_kind")) for s in regs] == [
        ("registered", None),
        ("error", "WOULD_BLOCK"),
    ]


# covers: TRACE-SPANS-002
def test_the_asyncio_queue_and_registry_have_the_same_spans(etcd, prefix, spans):
    name, svc = f"{prefix}/aqueue", f"{prefix}/asvc"

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as c:
            q = c.queue(name)
            item = await q.put(b"job")
            async with q.claim(timeout=5) as task:
                token = task.fencing_token
            async with c.register(svc, "n1", b"a"):
                pass
            return item, token

    item, token = asyncio.run(main())
    claim = one(spans, "etcdlock.task.claim", name)
    assert (claim.attributes["etcdlock.task_id"], claim.attributes["etcdlock.fencing_token"]) == (item, token)
    assert one(spans, "etcdlock.task.ack", name).attributes["etcdlock.outcome"] == "acked"
    assert one(spans, "etcdlock.register", f"{svc}/n1").attributes["etcdlock.outcome"] == "registered"


# covers: TRACE-SPANS-003
def test_a_pools_acquire_hold_and_release_are_spans_with_its_slots(client, etcd, prefix, spans):
    name = f"{prefix}/pool"
    holding = client.pool(name, slots=["a", "b"]).acquire(2)
    token = holding.fencing_token
    acquire = one(spans, "etcdlock.acquire", name)
    assert [acquire.attributes.get(k) for k in ("etcdlock.outcome", "etcdlock.slots", "etcdlock.fencing_token")] == ["acquired", "a,b", token]
    assert named(spans, "etcdlock.hold", name) == [], "the hold is open while held"
    with pytest.raises(etcdlock.WouldBlock):
        client.pool(name, slots=["a", "b"]).acquire(1, timeout=0)
    busy = named(spans, "etcdlock.acquire", name)[1]
    assert (busy.attributes["etcdlock.outcome"], busy.attributes["etcdlock.error_kind"]) == ("timeout", "WOULD_BLOCK")
    holding.release()
    hold = one(spans, "etcdlock.hold", name)
    assert [hold.attributes.get(k) for k in ("etcdlock.outcome", "etcdlock.slots", "etcdlock.fencing_token")] == ["released", "a,b", token]
    assert [l.context.span_id for l in hold.links] == [acquire.context.span_id]
    release = one(spans, "etcdlock.release", name)
    assert [release.attributes.get(k) for k in ("etcdlock.outcome", "etcdlock.slots")] == ["released", "a,b"]
    # Lost: the lease it lives on revoked by an operator ends the hold at once.
    lost_name = f"{prefix}/pool-lost"
    lost = client.pool(lost_name, slots=["x"]).acquire()
    etcd.ctl("lease", "revoke", format(lost.lease_id, "x"))
    etcd.wait_until(lambda: named(spans, "etcdlock.hold", lost_name), what="the hold span to end")
    hold = one(spans, "etcdlock.hold", lost_name)
    assert (hold.attributes["etcdlock.outcome"], hold.attributes["etcdlock.error_kind"]) == ("lost", "LOCK_LOST")


# covers: TRACE-SPANS-003
def test_a_lock_sets_acquire_hold_and_release_are_spans_named_by_its_members(client, etcd, prefix, spans):
    x, y = f"{prefix}/set-x", f"{prefix}/set-y"
    name = f"{x},{y}"
    locks = client.lock_set([x, y])
    assert locks.acquire()
    token = locks.fencing_token
    acquire = one(spans, "etcdlock.acquire", name)
    assert (acquire.attributes["etcdlock.outcome"], acquire.attributes["etcdlock.fencing_token"]) == ("acquired", token)
    locks.release()
    hold = one(spans, "etcdlock.hold", name)
    assert (hold.attributes["etcdlock.outcome"], hold.attributes["etcdlock.fencing_token"]) == ("released", token)
    assert one(spans, "etcdlock.release", name).attributes["etcdlock.outcome"] == "released"
    assert locks.acquire()
    etcd.ctl("del", x, "--prefix")
    etcd.wait_until(lambda: len(named(spans, "etcdlock.hold", name)) == 2, what="the second hold span to end")
    lost = named(spans, "etcdlock.hold", name)[1]
    assert (lost.attributes["etcdlock.outcome"], lost.attributes["etcdlock.lost_reason"]) == ("lost", "key_deleted")
    with pytest.raises(etcdlock.NotHeld):
        locks.release()
    assert named(spans, "etcdlock.release", name)[1].attributes["etcdlock.error_kind"] == "NOT_HELD"


# covers: TRACE-SPANS-003
def test_the_asyncio_pool_and_lock_set_have_the_same_spans(etcd, prefix, spans):
    pool, x = f"{prefix}/apool", f"{prefix}/aset-x"

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as c:
            async with c.pool(pool, slots=["a"]).acquire() as holding:
                token = holding.fencing_token
            async with c.lock_set([x]):
                pass
            return token

    token = asyncio.run(main())
    assert one(spans, "etcdlock.acquire", pool).attributes["etcdlock.slots"] == "a"
    assert [one(spans, "etcdlock.hold", pool).attributes.get(k) for k in ("etcdlock.outcome", "etcdlock.fencing_token")] == ["released", token]
    assert one(spans, "etcdlock.release", pool).attributes["etcdlock.outcome"] == "released"
    assert one(spans, "etcdlock.hold", x).attributes["etcdlock.outcome"] == "released"
