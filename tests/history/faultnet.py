"""A TCP proxy whose path can be cut and restored, for fault scenarios (S13, S7).

``CutProxy(port)`` forwards 127.0.0.1:<its port> to 127.0.0.1:``port`` byte for byte.
``cut()`` makes the path silent: bytes of the open connections are dropped in both directions
(the sockets stay open, as with a network that drops everything), and new connections are
accepted and left silent. ``restore()`` resets (RST) every connection that lived through the
cut, so the client notices at once and reconnects; connections made after it are forwarded.

Threads are daemons; ``close()`` ends everything. Nothing here is unbounded: each pump ends
when its socket closes.
"""
from __future__ import annotations

import socket
import struct
import threading
from typing import List, Optional

HOST = "127.0.0.1"


def _rst(sock: socket.socket) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class _Conn:
    def __init__(self, client: socket.socket, up: Optional[socket.socket]) -> None:
        self.client = client
        self.up = up
        self.gen = 0  # the cut generation it was made in


class CutProxy:
    def __init__(self, port: int) -> None:
        self._port = port
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((HOST, 0))
        self._sock.listen(64)
        self.endpoint = f"http://{HOST}:{self._sock.getsockname()[1]}"
        self._lock = threading.Lock()
        self._cut = False
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
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                cut = self._cut
            up = None
            if not cut:
                try:
                    up = socket.create_connection((HOST, self._port), timeout=5)
                    up.settimeout(None)
                    up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                except OSError:
                    _rst(client)
                    continue
            conn = _Conn(client, up)
            with self._lock:
                self._conns.append(conn)
            if up is None:  # made during a cut: silent until restore() resets it
                threading.Thread(target=self._drain, args=(client,), daemon=True).start()
                continue
            threading.Thread(target=self._pump, args=(client, up), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, client), daemon=True).start()

    def _drain(self, src: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                self.dropped += len(data)
        except OSError:
            pass

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if self._cut:
                    self.dropped += len(data)
                    continue
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
