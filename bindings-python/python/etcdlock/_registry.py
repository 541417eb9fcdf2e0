"""The service registry (blocking API): ``Registration`` and ``Discovery``, and the callback
pump both APIs use for a registration's events."""

import threading
from typing import Any, Callable, Iterator, List, Optional

from . import _args, _native
from ._common import Instances, instances, refuse_in_event_loop
from ._ports import _Port, thread_port


class RegistrationCallbacks:
    """``on_lost`` / ``on_restored`` of one registration. A native events reader is started
    with the first callback and re-armed after each event; it holds this object and the
    native events, never the registration, so a registration nobody keeps is still dropped
    (and deregistered)."""

    def __init__(self, native: "_native.Registration", port: Callable[[], _Port]) -> None:
        self._events = native.events()
        self._port = port
        self._mu = threading.Lock()
        self._lost: List[Callable[[str], Any]] = []
        self._restored: List[Callable[[int], Any]] = []
        self._started = False

    def add(self, lost: bool, callback: Callable[[Any], Any]) -> None:
        _args.callback(callback)
        with self._mu:
            (self._lost if lost else self._restored).append(callback)
            start, self._started = not self._started, True
        if start:
            self._next(self._port())

    def _next(self, port: _Port) -> None:
        i = port.expect(lambda exc, value: self._got(port, exc, value))
        try:
            self._events.next().submit(port.native, i)
        except BaseException:  # after the exit hook: nothing more will come
            port.forget(i)

    def _got(self, port: _Port, exc: Optional[BaseException], value: Any) -> None:
        if exc is not None:
            return
        kind, data = value
        if kind == "end":
            return
        with self._mu:
            callbacks = list(self._restored if kind == "restored" else self._lost)
        arg = "taken_over" if kind == "taken_over" else data
        for cb in callbacks:
            port.run_callback(cb, arg)
        if kind != "taken_over":  # the registration has ended then
            self._next(port)


class RegistrationView:
    """The local, non-blocking view of a registration, shared by both APIs."""

    _n: "_native.Registration"
    _callbacks: RegistrationCallbacks

    @property
    def key(self) -> bytes:
        """``<service>/<instance>``."""
        return self._n.key

    @property
    def lease_id(self) -> Optional[int]:
        """The lease the key is on now; None while registering again, and once ended."""
        return self._n.lease_id()

    def is_registered(self) -> bool:
        """Whether the instance is registered now, as far as this process knows."""
        return self._n.is_registered()

    def on_lost(self, callback: Callable[[str], Any]) -> None:
        """Calls ``callback(reason)`` each time the instance stops being registered:
        ``"expired"``, ``"revoked"`` or ``"key_deleted"`` (it is registered again at once on a
        new lease, and ``on_restored`` says so), or ``"taken_over"`` (another registrant took
        the name with ``replace=True``: the registration has ended)."""
        self._callbacks.add(True, callback)

    def on_restored(self, callback: Callable[[int], Any]) -> None:
        """Calls ``callback(lease_id)`` each time the instance is registered again after a
        loss, with the new lease's ID."""
        self._callbacks.add(False, callback)


class Registration(RegistrationView):
    """An instance of a service kept registered (``client.register``) until ``close()`` or the
    end of its ``with`` block. Callbacks run on the library's callback thread."""

    def __init__(self, native: "_native.Registration") -> None:
        self._n = native
        self._callbacks = RegistrationCallbacks(native, thread_port)

    def update(self, value: _args.BytesLike) -> int:
        """Replaces the registered value (kept for later registrations too); returns the
        write's revision. ``NotHeld`` while the instance is being registered again (the value
        is kept and registered then) or once taken over."""
        revision: int = self._n.update(_args.to_bytes(value, "value")).wait()
        return revision

    def close(self) -> None:
        """Deregisters: the key deleted and the lease revoked when this returns (or, if etcd
        cannot be reached, the lease expires). Idempotent."""
        self._n.close().wait()

    def __enter__(self) -> "Registration":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Discovery:
    """A service's instance sets (``client.discover``): the current ``Instances`` first, then
    the whole set after each change, across reconnects and compaction. Ends when closed (also
    from another thread) or when the client closes."""

    def __init__(self, native: "_native.Discovery") -> None:
        self._n = native

    def __iter__(self) -> Iterator[Instances]:
        return self

    def __next__(self) -> Instances:
        refuse_in_event_loop("iterating a Discovery")
        what, raw = self._n.next().wait()
        if what == "end":
            raise StopIteration
        return instances(raw)

    def close(self) -> None:
        """Stops watching the service (also from another thread: a waiting iteration ends)."""
        self._n.close()

    def __enter__(self) -> "Discovery":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
