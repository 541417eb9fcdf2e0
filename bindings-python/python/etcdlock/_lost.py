"""``on_lost`` bookkeeping for one Lock or Lease: each callback runs once per loss, with the
reason ("expired", "revoked", "key_deleted" or "closed"), on the object's port (the callback
thread for sync objects, the event loop for async ones).

A native watcher is started only once a callback exists, so plain acquire/release cycles cost
nothing extra. The handler registered for it holds this object, never the Lock or Lease."""

import threading
from typing import Any, Callable, List, Optional

from . import _args
from ._ports import _Port

# start(native_bridge, id) -> whether there was something to watch
Start = Callable[[Any, int], Any]


class LostCallbacks:
    def __init__(self) -> None:
        self._mu = threading.Lock()
        self._callbacks: List[Callable[[str], Any]] = []
        self._epoch = 0  # bumped by each acquisition
        self._watched = -1  # epoch whose watcher runs (or ran)
        self._reason: Optional[str] = None  # what that watcher reported

    def add(self, callback: Callable[[str], Any], port: Callable[[], _Port], start: Start) -> None:
        """``port`` is called only when a port is needed (the sync one starts a thread)."""
        _args.callback(callback)
        with self._mu:
            self._callbacks.append(callback)
            fired = self._reason if self._watched == self._epoch else None
        if fired is not None:
            port().call_soon(callback, fired)  # already lost: tell the late subscriber too
        else:
            self.arm(port, start)

    def new_epoch(self) -> None:
        with self._mu:
            self._epoch += 1
            self._reason = None

    def arm(self, port: Callable[[], _Port], start: Start) -> None:
        """Starts the watcher for the current epoch if there are callbacks and none runs."""
        with self._mu:
            if not self._callbacks or self._watched == self._epoch:
                return
            self._watched = epoch = self._epoch
        p = port()
        i = p.expect(lambda exc, reason: self._fire(epoch, reason, p))
        if start(p.native, i) is False:
            p.forget(i)
            with self._mu:
                if self._watched == epoch:
                    self._watched = -1

    def _fire(self, epoch: int, reason: Optional[str], port: _Port) -> None:
        if reason is None:  # released or replaced, not lost
            return
        with self._mu:
            if epoch != self._epoch:
                return
            self._reason = reason
            callbacks = list(self._callbacks)
        for cb in callbacks:
            port.run_callback(cb, reason)
