"""Where native outcomes come back to Python.

The core's runtime threads never call into Python. A task that finishes queues its outcome on a
native ``Bridge`` and writes a byte to the bridge's pipe; a *port* reads that pipe and runs the
handler registered for the outcome's id:

- ``LoopPort``: one per asyncio event loop, read with ``loop.add_reader`` (async API results
  and on_lost callbacks of async objects run on the loop's thread);
- ``ThreadPort``: one per process, a daemon thread started on first use, for the on_lost
  callbacks of sync objects.
"""

import asyncio
import itertools
import os
import select
import sys
import threading
import traceback
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _log, _native

Handler = Callable[[Optional[BaseException], Any], None]


class _Port:
    def __init__(self) -> None:
        self.native = _native.Bridge()
        self._handlers: Dict[int, Handler] = {}
        self._ids = itertools.count(1)

    def expect(self, handler: Handler) -> int:
        """Registers ``handler(exception, value)`` for the next outcome id."""
        i = next(self._ids)
        self._handlers[i] = handler
        return i

    def forget(self, i: int) -> None:
        self._handlers.pop(i, None)

    def drain(self) -> None:
        for i, exc, value in self.native.drain():
            handler = self._handlers.pop(i, None)
            if handler is not None:
                handler(exc, value)

    def run_callback(self, fn: Callable[..., Any], *args: Any) -> None:
        raise NotImplementedError

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        raise NotImplementedError


class LoopPort(_Port):
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        # Weak: the loop holds this port (through its reader), not the other way round.
        self._loop = weakref.ref(loop)
        self._outbox: List[Tuple[Any, int]] = []
        loop.add_reader(self.native.fd, self.drain)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop()
        if loop is None:
            raise RuntimeError("the event loop is gone")
        return loop

    def future(self, op: Any) -> "asyncio.Future[Any]":
        """Runs ``op`` on the core runtime; a future of this loop gets its outcome."""
        fut = self.loop.create_future()

        def settle(exc: Optional[BaseException], value: Any) -> None:
            if fut.done():
                return
            if isinstance(exc, KeyboardInterrupt):  # the core's "cancelled": we cancelled it
                fut.cancel()
            elif exc is not None:
                fut.set_exception(exc)
            else:
                fut.set_result(value)

        self._outbox.append((op, self.expect(settle)))
        if len(self._outbox) == 1:
            self.loop.call_soon(self._flush)
        return fut

    def _flush(self) -> None:
        # Everything submitted during one loop iteration starts with one runtime wake-up.
        batch, self._outbox = self._outbox, []
        try:
            self.native.submit_many(batch)
        except BaseException as e:  # e.g. after the exit hook: fail the calls, don't hang them
            for _, i in batch:
                handler = self._handlers.pop(i, None)
                if handler is not None:
                    handler(e, None)

    def run_callback(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            r = fn(*args)
            if asyncio.iscoroutine(r):
                asyncio.ensure_future(r, loop=self.loop)
        except Exception as e:  # a user callback's error must not break the loop's reader
            self.loop.call_exception_handler({"message": f"exception in etcdlock callback {fn!r}", "exception": e})

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        self.loop.call_soon_threadsafe(self.run_callback, fn, *args)


class ThreadPort(_Port):
    def __init__(self) -> None:
        super().__init__()
        self._soon: List[Tuple[Callable[..., Any], Tuple[Any, ...]]] = []
        self._stopping = False
        self.thread = threading.Thread(target=self._run, name="etcdlock-callbacks", daemon=True)
        self.thread.start()

    def expect(self, handler: Handler) -> int:
        with _lock:  # the callback thread pops handlers concurrently
            return super().expect(handler)

    def forget(self, i: int) -> None:
        with _lock:
            super().forget(i)

    def drain(self) -> None:
        for i, exc, value in self.native.drain():
            if i == 0:  # a log record (_log.py)
                try:
                    _log.emit(value)
                except Exception:
                    traceback.print_exc()
                continue
            with _lock:
                handler = self._handlers.pop(i, None)
            if handler is not None:
                handler(exc, value)

    def _run(self) -> None:
        while not self._stopping:
            select.select([self.native.fd], [], [])
            if self._stopping:
                return
            self.drain()
            with _lock:
                soon, self._soon = self._soon, []
            for fn, args in soon:
                self.run_callback(fn, *args)

    def run_callback(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            print(f"Exception in etcdlock callback {fn!r}:", file=sys.stderr)
            traceback.print_exc()

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        with _lock:
            self._soon.append((fn, args))
        self.native.wake()

    def stop(self, timeout: float) -> None:
        self._stopping = True
        self.native.wake()
        if self.thread is not threading.current_thread():
            self.thread.join(timeout)


_lock = threading.Lock()
_thread_port: Optional[ThreadPort] = None
_loop_ports: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopPort]" = weakref.WeakKeyDictionary()


def thread_port() -> ThreadPort:
    global _thread_port
    with _lock:
        if _thread_port is None:
            _thread_port = ThreadPort()
        return _thread_port


def loop_port(loop: Optional[asyncio.AbstractEventLoop] = None) -> LoopPort:
    """The port of ``loop`` (default: the running loop, which must exist)."""
    loop = loop or asyncio.get_running_loop()
    port = _loop_ports.get(loop)
    if port is None:
        port = _loop_ports[loop] = LoopPort(loop)
    return port


def stop_thread_port(timeout: float) -> None:
    with _lock:
        port = _thread_port
    if port is not None:
        port.stop(timeout)


def _after_fork_in_child() -> None:
    # The callback thread and the loops' readers did not survive fork(); start afresh.
    global _thread_port, _lock, _loop_ports
    _lock = threading.Lock()
    _thread_port = None
    _loop_ports = weakref.WeakKeyDictionary()


os.register_at_fork(after_in_child=_after_fork_in_child)
