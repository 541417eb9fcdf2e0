"""A TCP proxy on 127.0.0.1 that can cut its clients off from etcd (stdlib only; the Python twin
of bindings-node/test/cutproxy.js): ``cut()`` closes every connection through it and closes each
new one at once, until ``restore()``. For tests of what a client does when it hears nothing for a
while (its watches resume, or find the history they need compacted)."""

import socket
import threading
from typing import List

from netfakes import HOST, _shut, dial, listener


class CutProxy:
    """Forwards bytes both ways to 127.0.0.1:``port`` while not cut."""

    def __init__(self, port: int) -> None:
        self._port = port
        self._sock = listener()
        self.endpoint = f"http://{HOST}:{self._sock.getsockname()[1]}"
        self._lock = threading.Lock()  # _cut and _socks
        self._cut = False
        self._socks: List[socket.socket] = []
        self._closed = False
        self._threads: List[threading.Thread] = []
        self._spawn(self._accept)

    def _spawn(self, target, *args) -> None:
        t = threading.Thread(target=target, args=args, name="cut-proxy", daemon=True)
        self._threads.append(t)
        t.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._sock.accept()
            except OSError:
                return  # closed
            up = None if self._cut else dial(self._port, client)
            if up is None:
                _shut(client)
                continue
            with self._lock:
                cut = self._cut
                if not cut:
                    self._socks += [client, up]
            if cut:  # cut while this one was being dialled
                _shut(client)
                _shut(up)
                continue
            self._spawn(self._pump, client, up)
            self._spawn(self._pump, up, client)

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        _shut(src)
        _shut(dst)

    def cut(self) -> None:
        """Closes every connection; new ones are closed at once until ``restore()``."""
        with self._lock:
            self._cut = True
            socks, self._socks = self._socks, []
        for s in socks:
            _shut(s)

    def restore(self) -> None:
        with self._lock:
            self._cut = False

    def close(self) -> None:
        self._closed = True
        _shut(self._sock)
        self.cut()
        for t in self._threads:
            t.join(5)

    def __enter__(self) -> "CutProxy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
