"""Network fakes on 127.0.0.1 for the member-selection and cancellation tests (stdlib only,
threads and blocking sockets; the Python twin of bindings-node/test/netfakes.js):

- ``SilentListener``: a member whose kernel accepts connections that nobody ever serves;
- ``UnacceptingListener``: a member whose full accept queue drops every SYN;
- ``HoldProxy``: a TCP proxy that reads the HTTP/2 frames both ways, holds back one request's
  body, and can reset the held request's stream (RST_STREAM both ways).

Why the proxy parses HTTP/2 instead of delaying bytes: the client multiplexes every request on
one HTTP/2 connection, and one TCP connection keeps order. A proxy that delays all bytes delays
the client's cleanup (the delete of its queue key) behind the enqueue too, so the enqueue still
lands first and no ghost can appear. Holding back just the enqueue's DATA frame (its HEADERS
went through, so etcd has the request open and waits for the body) while later requests on the
same connection pass, and dropping its RST_STREAM (the client giving up on it, as if lost in
the network), lets that enqueue reach etcd after everything the client sent when it gave up.

Every thread is a daemon that ends when ``close()`` shuts its sockets; nothing here waits
without a bound except on sockets that ``close()`` shuts down.

``python3 netfakes.py hold-proxy PORT`` runs a ``HoldProxy`` for programs in other languages
(the C tests): it prints the proxy's endpoint, then answers one line per command read on
stdin: ``hold MARKER`` -> ``ok``; ``wait-holding SECONDS`` -> ``yes`` or ``no``; ``release`` ->
the number of frames sent on; ``reset`` -> the reset stream's ID (0: none held). It closes the
proxy and exits at the end of its input."""

import socket
import struct
import sys
import threading
import time
from typing import List, Optional

HOST = "127.0.0.1"
PREFACE = 24  # b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA = 0x0
RST_STREAM = 0x3
CANCEL = 0x8  # an RST_STREAM error code


def rst_stream(sid: int, code: int = CANCEL) -> bytes:
    """An RST_STREAM frame for stream ``sid``."""
    return (4).to_bytes(3, "big") + bytes([RST_STREAM, 0]) + sid.to_bytes(4, "big") + code.to_bytes(4, "big")


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def reset(sock: socket.socket) -> None:
    """Closes with a reset (RST) instead of an orderly FIN, as a network that lost the peer."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


def listener(backlog: int = 64) -> socket.socket:
    """A listening socket on a free port of 127.0.0.1."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((HOST, 0))
    s.listen(backlog)
    return s


def dial(port: int, client: socket.socket) -> Optional[socket.socket]:
    """The upstream connection of a proxy's accepted ``client``, to 127.0.0.1:``port``, both
    without Nagle's delay (small gRPC frames would wait otherwise). None when the upstream
    cannot be reached: the client is then shut, as if the upstream refused it."""
    try:
        up = socket.create_connection((HOST, port), timeout=5)
    except OSError:
        _shut(client)
        return None
    up.settimeout(None)
    for s in (client, up):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return up


class SilentListener:
    """Accepts connections and never reads or writes a byte; counts them in ``accepted``."""

    def __init__(self) -> None:
        self._sock = listener()
        self.endpoint = f"http://{HOST}:{self._sock.getsockname()[1]}"
        self.accepted = 0
        self._held: List[socket.socket] = []
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="silent-listener", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed
            self._held.append(conn)
            self.accepted += 1

    def close(self) -> None:
        self._closed = True
        _shut(self._sock)
        for c in self._held:
            _shut(c)
        self._thread.join(5)

    def __enter__(self) -> "SilentListener":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class UnacceptingListener:
    """A socket listening with backlog 0 that never accepts, its accept queue filled by our own
    connections until a connect no longer completes: every further SYN is dropped."""

    def __init__(self) -> None:
        self._sock = listener(0)
        port = self._sock.getsockname()[1]
        self.endpoint = f"http://{HOST}:{port}"
        self._fillers: List[socket.socket] = []
        for _ in range(8):
            c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            c.settimeout(0.3)
            try:
                c.connect((HOST, port))
            except OSError:
                c.close()
                break
            self._fillers.append(c)
        else:
            self.close()
            raise RuntimeError("the accept queue of a backlog-0 socket never filled")

    def close(self) -> None:
        for c in self._fillers:
            _shut(c)
        _shut(self._sock)

    def __enter__(self) -> "UnacceptingListener":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Held:
    def __init__(self, up: socket.socket, sid: int) -> None:
        self.up = up
        self.sid = sid
        self.frames: List[bytes] = []
        self.released = False
        self.reset = False  # reset_held(): every later frame of the stream is dropped


class _Conn:
    """One proxied connection: writes to ``client`` are whole frames under ``down_lock``."""

    def __init__(self, client: socket.socket, up: socket.socket) -> None:
        self.client = client
        self.up = up
        self.down_lock = threading.Lock()


class HoldProxy:
    """A TCP proxy to 127.0.0.1:``port`` that reads the HTTP/2 frames the client sends.

    ``hold(marker)`` arms it: the next request whose body (a DATA frame) contains ``marker`` is
    held (its headers already went through, so etcd waits for the body) while everything else
    passes, later requests on the same connection included. ``release()`` sends the held body
    on; the request's RST_STREAM (the client gave up on it) is dropped, as if lost in the
    network. So the request lands after whatever the client sent meanwhile. ``reset_held()``
    instead resets the held request's stream: RST_STREAM (CANCEL) to the client, as if etcd
    had reset it, and to etcd, which never gets the body; the stream's later frames are dropped.

    The replies are read frame by frame too (etcd's side starts with a frame, no preface), so
    that a frame the proxy makes up never lands inside one of etcd's."""

    def __init__(self, port: int) -> None:
        self._port = port
        self._sock = listener()
        self.endpoint = f"http://{HOST}:{self._sock.getsockname()[1]}"
        self._lock = threading.Lock()  # the hold state, and every write to an upstream socket
        self._marker: Optional[bytes] = None
        self._held: Optional[_Held] = None
        self._socks: List[socket.socket] = []
        self._conns: List[_Conn] = []
        self._threads: List[threading.Thread] = []
        self._closed = False
        self._spawn(self._accept, "hold-proxy")

    def _spawn(self, target, name: str, *args) -> None:
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._threads.append(t)
        t.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            up = dial(self._port, client)
            if up is None:
                continue
            conn = _Conn(client, up)
            with self._lock:
                self._socks += [client, up]
                self._conns.append(conn)
            self._spawn(self._replies, "hold-proxy-down", conn)
            self._spawn(self._frames, "hold-proxy-up", client, up)

    @staticmethod
    def _replies(conn: _Conn) -> None:
        """etcd's frames to the client, each written whole."""
        buf = b""
        try:
            while True:
                data = conn.up.recv(65536)
                if not data:
                    break
                buf += data
                while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
                    n = 9 + int.from_bytes(buf[:3], "big")
                    frame, buf = buf[:n], buf[n:]
                    with conn.down_lock:
                        conn.client.sendall(frame)
        except OSError:
            pass
        _shut(conn.up)
        _shut(conn.client)

    def _frames(self, client: socket.socket, up: socket.socket) -> None:
        buf = b""
        preface_sent = False
        try:
            while True:
                data = client.recv(65536)
                if not data:
                    break
                buf += data
                if not preface_sent:
                    if len(buf) < PREFACE:
                        continue
                    with self._lock:
                        up.sendall(buf[:PREFACE])
                    buf = buf[PREFACE:]
                    preface_sent = True
                while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
                    n = 9 + int.from_bytes(buf[:3], "big")
                    frame, buf = buf[:n], buf[n:]
                    self._forward(up, frame)
        except OSError:
            pass
        _shut(client)
        _shut(up)

    def _forward(self, up: socket.socket, frame: bytes) -> None:
        ftype = frame[3]
        sid = int.from_bytes(frame[5:9], "big") & 0x7FFFFFFF
        with self._lock:
            if self._marker is not None and self._held is None and ftype == DATA and self._marker in frame:
                self._held = _Held(up, sid)
                self._marker = None
            held = self._held
            if held is not None and held.up is up and held.sid == sid and sid != 0:
                if held.reset:
                    return
                if not held.released and ftype != RST_STREAM:
                    held.frames.append(frame)
                if not held.released or ftype == RST_STREAM:
                    return
            up.sendall(frame)

    def hold(self, marker: bytes) -> None:
        """Holds the body of the next request whose DATA frame contains ``marker``."""
        with self._lock:
            self._marker = marker

    @property
    def holding(self) -> bool:
        """Whether a request is being held."""
        with self._lock:
            return self._held is not None and not self._held.released

    def wait_holding(self, timeout: float) -> bool:
        """Polls ``holding`` for up to ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.holding:
                return True
            time.sleep(0.01)
        return self.holding

    def release(self) -> int:
        """Sends the held request's frames on; returns how many."""
        with self._lock:
            held = self._held
            if held is None or held.released:
                return 0
            held.released = True
            try:
                for f in held.frames:
                    held.up.sendall(f)
            except OSError:
                pass
            return len(held.frames)

    def reset_held(self) -> int:
        """Resets the held request's stream instead of sending its body: RST_STREAM (CANCEL)
        to the client and to etcd; later frames of the stream are dropped. Returns the stream
        ID (0 if nothing was held)."""
        with self._lock:
            held = self._held
            if held is None or held.released:
                return 0
            held.released = held.reset = True
            conn = next((c for c in self._conns if c.up is held.up), None)
            try:
                held.up.sendall(rst_stream(held.sid))
            except OSError:
                pass
        if conn is not None:
            try:
                with conn.down_lock:
                    conn.client.sendall(rst_stream(held.sid))
            except OSError:
                pass
        return held.sid

    def close(self) -> None:
        self._closed = True
        _shut(self._sock)
        with self._lock:
            socks = list(self._socks)
        for s in socks:
            _shut(s)
        for t in self._threads:
            t.join(5)

    def __enter__(self) -> "HoldProxy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serve_hold_proxy(port: int) -> None:
    """The ``hold-proxy`` command (see the module's docstring)."""
    with HoldProxy(port) as proxy:
        print(proxy.endpoint, flush=True)
        for line in sys.stdin:
            cmd, _, arg = line.strip().partition(" ")
            if cmd == "hold":
                proxy.hold(arg.encode())
                answer = "ok"
            elif cmd == "wait-holding":
                answer = "yes" if proxy.wait_holding(float(arg)) else "no"
            elif cmd == "release":
                answer = str(proxy.release())
            elif cmd == "reset":
                answer = str(proxy.reset_held())
            else:
                answer = f"unknown command {cmd!r}"
            print(answer, flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "hold-proxy":
        sys.exit("usage: netfakes.py hold-proxy PORT")
    _serve_hold_proxy(int(sys.argv[2]))
