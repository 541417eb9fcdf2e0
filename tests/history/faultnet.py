"""A TCP proxy whose path can be cut and restored, for fault scenarios (S13, S7).

``CutProxy(port)`` forwards 127.0.0.1:<its port> to 127.0.0.1:``port`` byte for byte.
``cut()`` makes the path silent: bytes of the open connections are dropped in both directions
(the sockets stay open, as with a network that drops everything), and new connections are
accepted and left silent. ``restore()`` resets (RST) every connection that lived through the
cut, so the client notices at once and reconnects; connections made after it are forwarded.
``delay(seconds)`` makes every byte, either way, arrive that much later (in order; ``delay(0)``
ends it for what is sent next): a slow link, over which a request the client gave up on is
still delivered, and applied, late. ``hold_replies()`` lets requests through and holds what the
member answers (kept, in order, not lost) until ``release_replies()``: requests that are applied
but whose outcome the client does not learn in time.

Threads are daemons; ``close()`` ends everything. Nothing here is unbounded: each pump ends
when its socket closes.
"""
from __future__ import annotations

import os
import queue
import socket
import sys
import threading
import time
from typing import Callable, List, Optional

# The proxies' shared socket helpers live with the Python binding's network fakes.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "bindings-python", "tests"))
from netfakes import HOST, dial, listener, reset as _rst  # noqa: E402


class _Conn:
    def __init__(self, client: socket.socket, up: Optional[socket.socket]) -> None:
        self.client = client
        self.up = up
        self.gen = 0  # the cut generation it was made in


class CutProxy:
    def __init__(self, port: int) -> None:
        self._port = port
        self._sock = listener()
        self.endpoint = f"http://{HOST}:{self._sock.getsockname()[1]}"
        self._lock = threading.Lock()
        self._cut = False
        self._delay = 0.0
        self._hold = False
        self._conns: List[_Conn] = []
        self._closed = False
        self.dropped = 0  # bytes dropped while cut
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True, name="cut-proxy").start()

    @property
    def is_cut(self) -> bool:
        return self._cut

    def cut(self) -> None:
        with self._lock:
            self._cut = True

    def delay(self, seconds: float) -> None:
        """What is sent through the proxy from now on, either way, arrives ``seconds`` late."""
        self._delay = seconds

    def hold_replies(self) -> None:
        """From now on the member's answers are held, in order, until ``release_replies()``."""
        self._hold = True

    def release_replies(self) -> None:
        """What was held is passed on, and what follows too."""
        self._hold = False

    def restore(self) -> int:
        """Ends the cut: every connection that lived through it is reset. Returns how many."""
        with self._lock:
            self._cut = False
            old, self._conns = self._conns, []
        for c in old:
            _rst(c.client)
            if c.up is not None:
                _rst(c.up)
        return len(old)

    def close(self) -> None:
        self._closed = True
        try:
            self._sock.close()
        except OSError:
            pass
        with self._lock:
            old, self._conns = self._conns, []
        for c in old:
            _rst(c.client)
            if c.up is not None:
                _rst(c.up)

    def __enter__(self) -> "CutProxy":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            self.accepted += 1
            with self._lock:
                cut = self._cut
            up = None
            if not cut:
                up = dial(self._port, client)
                if up is None:
                    continue
            conn = _Conn(client, up)
            with self._lock:
                self._conns.append(conn)
            if up is None:  # made during a cut: silent until restore() resets it
                threading.Thread(target=self._drain, args=(client,), daemon=True).start()
                continue
            threading.Thread(target=self._pump, args=(client, up), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, client, True), daemon=True).start()

    def _drain(self, src: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                self.dropped += len(data)
        except OSError:
            pass

    def _pump(self, src: socket.socket, dst: socket.socket, replies: bool = False) -> None:
        held = (lambda: self._hold and not self._closed) if replies else (lambda: False)
        pump(src, dst, lambda: self._cut, self._drop, lambda: self._delay, held)

    def _drop(self, n: int) -> None:
        self.dropped += n


def pump(src: socket.socket, dst: socket.socket, silent: Callable[[], bool], drop: Callable[[int], None],
         delay: Callable[[], float] = lambda: 0.0, held: Callable[[], bool] = lambda: False) -> None:
    """Copies src to dst until src closes or fails, then shuts both; while ``silent()`` each
    chunk read is dropped instead (``drop(its length)``), as a network that loses everything.
    Each chunk is passed on ``delay()`` seconds after it was read (as read when it was), in
    order, and the end of the stream as late: a slow link, over which what was sent is still
    delivered, and applied, late. While ``held()`` nothing is passed on (what was read waits, in
    order). A writer thread of its own does the passing on."""
    chunks: "queue.Queue" = queue.Queue()

    def writer() -> None:
        try:
            while True:
                due, data = chunks.get()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                while held():  # ends with release_replies() or close()
                    time.sleep(0.005)
                if data is None:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    threading.Thread(target=writer, daemon=True).start()
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if silent():
                drop(len(data))
                continue
            chunks.put((time.monotonic() + delay(), data))
    except OSError:
        pass
    chunks.put((time.monotonic() + delay(), None))
