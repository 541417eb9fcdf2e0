"""Spans through the OpenTelemetry API, when ``opentelemetry-api`` is installed: ``etcdlock.acquire``
(the wait included), ``etcdlock.hold`` (from the acquisition to its release or loss) and
``etcdlock.release``; for an election ``etcdlock.campaign`` and ``etcdlock.lead``; a task queue's
``etcdlock.task.claim`` (the wait included) and ``etcdlock.task.ack``; ``etcdlock.register``. A
pool's acquire, hold and release are ``etcdlock.acquire``, ``etcdlock.hold`` and
``etcdlock.release`` too, named by the pool, with ``etcdlock.slots`` (the slot ids, comma-joined);
a lock set's are named by its members' names, comma-joined. The names,
attributes and outcomes are the core's ``tracing`` spans' (docs/manual/rust.md, "Traces").

Without the package nothing is imported (one failed import, remembered) and each call costs a
check of a module global. With it, the tracer is the application's (``etcdlock`` instrumentation
scope), so the spans go wherever its ``TracerProvider`` sends them."""

from typing import Any, Optional

# None: not looked up yet; False: opentelemetry-api is not installed.
_api: Any = None


def tracer() -> Any:
    """The OpenTelemetry tracer, or None without ``opentelemetry-api``."""
    global _api
    if _api is None:
        try:
            from opentelemetry import trace

            _api = trace
        except ImportError:
            _api = False
    if _api is False:
        return None
    return _api.get_tracer("etcdlock")


def _name(name: bytes) -> str:
    return name.decode("utf-8", "replace")


class Wait:
    """One acquire's (or campaign's) span; ``None`` from ``begin`` without OpenTelemetry."""

    __slots__ = ("span", "tr", "name")

    def __init__(self, tr: Any, span_name: str, name: bytes) -> None:
        self.tr, self.name = tr, _name(name)
        self.span = tr.start_span(span_name, attributes={"etcdlock.name": self.name})

    @staticmethod
    def begin(span_name: str, name: bytes) -> "Optional[Wait]":
        tr = tracer()
        if tr is None:
            return None
        wait = Wait(tr, span_name, name)
        # Not recording (the API without an SDK's TracerProvider, or a sampler that dropped it):
        # no hold to follow, so no lost callback and no callback thread for it.
        return wait if wait.span.is_recording() else None

    def acquired(self, token: Optional[int], attrs: Optional[dict] = None) -> None:
        self.span.set_attribute("etcdlock.outcome", "acquired")
        if token is not None:
            self.span.set_attribute("etcdlock.fencing_token", token)
        for k, v in (attrs or {}).items():
            self.span.set_attribute(k, v)
        self.span.end()

    def timed_out(self, error_kind: str) -> None:
        self.span.set_attribute("etcdlock.outcome", "timeout")
        self.span.set_attribute("etcdlock.error_kind", error_kind)
        self.span.end()

    def failed(self, e: BaseException) -> None:
        failed(self.span, e, wait=True)
        self.span.end()


class Hold:
    """The open hold span of a lock object, ended at release or loss. The lost callback it gives
    holds this object only, never the lock (which would keep it alive)."""

    __slots__ = ("span",)

    def __init__(self) -> None:
        self.span: Any = None

    def begin(self, wait: Wait, span_name: str, token: Optional[int], more: Optional[dict] = None) -> None:
        self.end("released")  # an earlier acquisition's, if it was never ended
        link = _api.Link(wait.span.get_span_context())
        attrs: dict = {"etcdlock.name": wait.name, **(more or {})}
        if token is not None:
            attrs["etcdlock.fencing_token"] = token
        self.span = wait.tr.start_span(span_name, attributes=attrs, links=[link])

    def end(self, outcome: str, lost_reason: Optional[str] = None) -> None:
        span, self.span = self.span, None
        if span is None:
            return
        span.set_attribute("etcdlock.outcome", outcome)
        if lost_reason is not None:
            span.set_attribute("etcdlock.error_kind", "LOCK_LOST")
            span.set_attribute("etcdlock.lost_reason", lost_reason)
        span.end()

    def lost(self, reason: str) -> None:
        self.end("lost", reason)


def error_kind(e: BaseException) -> str:
    """The error's kind as the core names it (``LOCK_TIMEOUT``, ``NOT_HELD``...)."""
    from . import _errors as x

    kinds = (
        (x.LockTimeout, "LOCK_TIMEOUT"), (x.Timeout, "TIMEOUT"), (x.LockLost, "LOCK_LOST"), (x.NotHeld, "NOT_HELD"),
        (x.Unavailable, "UNAVAILABLE"), (x.Compacted, "COMPACTED"), (x.Closed, "CLOSED"), (x.AuthError, "AUTH"),
        (x.WouldBlock, "WOULD_BLOCK"), (x.WrongContextError, "WRONG_CONTEXT"), ((ValueError, TypeError), "INVALID_ARGUMENT"),
    )
    for cls, kind in kinds:
        if isinstance(e, cls):
            return kind
    return "CANCELLED" if type(e).__name__ in ("CancelledError", "KeyboardInterrupt") else "INTERNAL"


def failed(span: Any, e: BaseException, wait: bool) -> None:
    kind = error_kind(e)
    if wait and kind in ("LOCK_TIMEOUT", "WOULD_BLOCK"):
        outcome = "timeout"
    elif kind == "CANCELLED":
        outcome = "cancelled"
    else:
        outcome = "error"
    span.set_attribute("etcdlock.outcome", outcome)
    span.set_attribute("etcdlock.error_kind", kind)


def release_span(name: bytes, token: Optional[int], more: Optional[dict] = None) -> Any:
    """An ``etcdlock.release`` span, or None without OpenTelemetry."""
    tr = tracer()
    if tr is None:
        return None
    attrs: dict = {"etcdlock.name": _name(name), **(more or {})}
    if token is not None:
        attrs["etcdlock.fencing_token"] = token
    return tr.start_span("etcdlock.release", attributes=attrs)


def released(span: Any, e: Optional[BaseException]) -> None:
    if e is None:
        span.set_attribute("etcdlock.outcome", "released")
    else:
        failed(span, e, wait=False)
    span.end()


class Releasing:
    """``with _trace.Releasing(span): <the release>``: ends a release span (``None``: nothing to
    do) with the release's outcome, its error if it raised."""

    __slots__ = ("span",)

    def __init__(self, span: Any) -> None:
        self.span = span

    def __enter__(self) -> "Releasing":
        return self

    def __exit__(self, typ: Any, e: Optional[BaseException], tb: Any) -> bool:
        if self.span is not None:
            released(self.span, e)
        return False


_UNTRACED = Releasing(None)


def lock_acquired(view: Any, wait: Wait, ok: bool, t: Optional[float], port: Any, span_name: str = "etcdlock.hold") -> None:
    """Ends a lock's (or lock set's) acquire span: timed out, or acquired with its token; then
    opens the hold's span on the view's one ``Hold``, whose loss callback is registered with the
    first acquisition (``view`` has ``_hold``, ``_lost``, ``_n`` and ``fencing_token``)."""
    if not ok:
        wait.timed_out("WOULD_BLOCK" if t == 0 else "LOCK_TIMEOUT")
        return
    token = view.fencing_token
    wait.acquired(token)
    if view._hold is None:
        view._hold = Hold()
        view._lost.add(view._hold.lost, port, view._n.watch_lost)
    view._hold.begin(wait, span_name, token)


def releasing(view: Any, name: bytes, more: Optional[dict] = None) -> Releasing:
    """``with _trace.releasing(view, name): <the release>``: ends the view's hold span
    (released, or lost if it was), and traces the release; nothing when untraced."""
    if view._hold is None and tracer() is None:
        return _UNTRACED
    if view._hold is not None:
        reason = view.lost_reason
        view._hold.end("released" if reason is None else "lost", reason)
    return Releasing(release_span(name, view.fencing_token, more))


class Call:
    """One call's span (a claim, an ack, a registration); ``None`` from ``begin`` without
    OpenTelemetry or when the span would not record."""

    __slots__ = ("span",)

    def __init__(self, span: Any) -> None:
        self.span = span

    @staticmethod
    def begin(span_name: str, name: bytes, attrs: Optional[dict] = None) -> "Optional[Call]":
        tr = tracer()
        if tr is None:
            return None
        a: dict = {"etcdlock.name": _name(name)}
        if attrs:
            a.update(attrs)
        span = tr.start_span(span_name, attributes=a)
        if not span.is_recording():
            span.end()
            return None
        return Call(span)

    def ok(self, outcome: str, attrs: Optional[dict] = None) -> None:
        self.span.set_attribute("etcdlock.outcome", outcome)
        for k, v in (attrs or {}).items():
            self.span.set_attribute(k, v)
        self.span.end()

    def failed(self, e: BaseException, wait: bool) -> None:
        failed(self.span, e, wait)
        self.span.end()


def claimed(call: Call, task: Any) -> None:
    """Ends a claim's span: ``acquired``, the task's id and fencing token."""
    call.ok("acquired", {"etcdlock.task_id": task.id, "etcdlock.fencing_token": task.fencing_token})


def traced(span_name: str, name: bytes, wait: bool, run: Any, done: Any, attrs: Optional[dict] = None) -> Any:
    """``run()`` in a span ``span_name`` when traced; ``done(call, result)`` ends it."""
    call = Call.begin(span_name, name, attrs)
    if call is None:
        return run()
    try:
        r = run()
    except BaseException as e:
        call.failed(e, wait)
        raise
    done(call, r)
    return r


async def traced_async(span_name: str, name: bytes, wait: bool, run: Any, done: Any, attrs: Optional[dict] = None) -> Any:
    """``await run()`` in a span ``span_name`` when traced; ``done(call, result)`` ends it."""
    call = Call.begin(span_name, name, attrs)
    if call is None:
        return await run()
    try:
        r = await run()
    except BaseException as e:
        call.failed(e, wait)
        raise
    done(call, r)
    return r


def acked(call: Call, _revision: Any) -> None:
    call.ok("acked")


def registered(call: Call, _reg: Any) -> None:
    call.ok("registered")


def holding_acquired(wait: Wait, view: Any, attrs: dict) -> Hold:
    """Ends a pool acquire's span and opens its holding's hold (ended by its loss too: the
    lost callback holds the ``Hold`` only)."""
    token = view.fencing_token
    wait.acquired(token, attrs)
    hold = Hold()
    view.on_lost(hold.lost)
    hold.begin(wait, "etcdlock.hold", token, attrs)
    return hold


def set_name(names: Any) -> bytes:
    """A lock set's span name: its members' names, comma-joined."""
    return b",".join(names)
