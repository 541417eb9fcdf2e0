"""An etcd cluster whose peer links run through TCP proxies that can cut one member off (S7).

``PeerProxiedCluster(3)`` is ``etcd_harness.Cluster`` with every member advertising a proxy's
address as its peer URL: each member still listens on its own peer port, but every other
member reaches it through that proxy. ``isolate(i)`` makes member i a minority of one: every
peer connection to it or from it goes silent (bytes dropped both ways, sockets left open, as
a network that drops everything), while clients still reach it directly on its client URL.
``heal()`` ends that and resets (RST) each connection that lived through it, so that the
members reconnect at once. ``delay(a, b, seconds)`` makes every byte member a sends to member b
arrive that much later (in order; ``undelay()`` ends it for what is sent next): a follower's
proposals then reach the leader late, and are applied after the client moved on.

Why the proxy has to know who dials: etcd's raft transport sends member A's messages to B both
on connections A dials to B's peer URL (pipeline) and on connections B dials to A's (the
stream A serves to B's reader). Cutting only the proxy in front of member i would leave the
second kind to the others' proxies, so the leader's heartbeats would still reach i. Every
connection therefore gets its sender: the member process that owns the client end of the
accepted socket (from /proc/net/tcp and that process's /proc/PID/fd; Linux only, and only
the members this test started). A connection is silent while its sender or its receiver is
isolated (or, during an isolation, when its sender could not be told).

Threads are daemons; ``close()`` (the cluster's ``stop()``) ends everything; each pump ends
when its socket closes.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from typing import Dict, List, Optional

from faultnet import pump  # also puts the Python binding's tests (netfakes) on the path
from etcd_harness import Cluster
from netfakes import HOST, dial, listener, reset


def socket_owner(local_port: int, remote_port: int, pids: Dict[int, int]) -> Optional[int]:
    """Which of ``pids`` (index -> PID) owns the TCP socket 127.0.0.1:local_port ->
    127.0.0.1:remote_port, or None."""
    want = (f"0100007F:{local_port:04X}", f"0100007F:{remote_port:04X}")
    inode = None
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if (fields[1], fields[2]) == want:
                inode = fields[9]
                break
    if inode is None:
        return None
    target = f"socket:[{inode}]"
    for index, pid in pids.items():
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(os.path.join(fd_dir, fd)) == target:
                    return index
            except OSError:
                continue
    return None


def remote_ports(pid: int) -> list:
    """The remote ports of process pid's established TCP connections to 127.0.0.1."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    except OSError:
        return []
    out = []
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[9] in inodes and fields[3] == "01" and fields[2].startswith("0100007F:"):
                out.append(int(fields[2].split(":")[1], 16))
    return sorted(out)


class _Link:
    """One proxied peer connection: its sender (the member that dialed, None if unknown) and
    its receiver (the member behind the proxy)."""

    def __init__(self, client: socket.socket, up: socket.socket, src: Optional[int], dst: int) -> None:
        self.client, self.up, self.src, self.dst = client, up, src, dst


class PeerNet:
    """The proxies in front of each member's peer port, and the set of isolated members."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._isolated: set = set()
        self._links: List[_Link] = []
        self._listeners: List[socket.socket] = []
        self._closed = False
        self.pids: Dict[int, int] = {}  # member index -> PID, kept up to date by the cluster
        self.unknown_senders = 0  # accepted connections whose dialing member was not found
        self.dropped = 0  # bytes dropped while a member was isolated
        self._delays: Dict[tuple, float] = {}  # (from member, to member) -> seconds

    def proxy(self, index: int, port: int) -> int:
        """Starts a proxy for member ``index``'s peer port; returns the proxy's port."""
        sock = listener()
        with self._lock:
            self._listeners.append(sock)
        threading.Thread(target=self._accept, args=(sock, index, port), daemon=True, name=f"peer-proxy-{index}").start()
        return sock.getsockname()[1]

    def isolate(self, index: int) -> None:
        with self._lock:
            self._isolated.add(index)

    def delay(self, frm: int, to: int, seconds: float) -> None:
        """What member ``frm`` sends to member ``to`` from now on arrives ``seconds`` late."""
        with self._lock:
            self._delays[(frm, to)] = seconds

    def undelay(self) -> None:
        """What is sent from now on goes through at once (what is on its way stays late)."""
        with self._lock:
            self._delays = {}

    def heal(self) -> int:
        """Ends every isolation; resets the connections that lived through it. Returns how many."""
        with self._lock:
            gone = self._isolated
            self._isolated = set()
            old = [l for l in self._links if l.src in gone or l.dst in gone or l.src is None]
            self._links = [l for l in self._links if l not in old]
        for l in old:
            reset(l.client)
            reset(l.up)
        return len(old)

    def close(self) -> None:
        self._closed = True
        with self._lock:
            socks, self._listeners = self._listeners, []
            links, self._links = self._links, []
        for s in socks:
            try:
                s.close()
            except OSError:
                pass
        for l in links:
            reset(l.client)
            reset(l.up)

    def _silent(self, link: _Link) -> bool:
        iso = self._isolated
        return bool(iso) and (link.dst in iso or link.src in iso or link.src is None)

    def _sender(self, client: socket.socket, proxy_port: int) -> Optional[int]:
        port = client.getpeername()[1]
        for _ in range(5):  # the dialer's socket is in /proc at once; a few tries for safety
            src = socket_owner(port, proxy_port, dict(self.pids))
            if src is not None:
                return src
            time.sleep(0.01)
        self.unknown_senders += 1
        return None

    def _accept(self, sock: socket.socket, index: int, port: int) -> None:
        proxy_port = sock.getsockname()[1]
        while not self._closed:
            try:
                client, _ = sock.accept()
            except OSError:
                return
            up = dial(port, client)
            if up is None:
                continue
            link = _Link(client, up, self._sender(client, proxy_port), index)
            with self._lock:
                self._links.append(link)
            # The dialer's bytes go to the member behind the proxy, and the member's back to it.
            threading.Thread(target=self._pump, args=(link, client, up, (link.src, link.dst)), daemon=True).start()
            threading.Thread(target=self._pump, args=(link, up, client, (link.dst, link.src)), daemon=True).start()

    def _pump(self, link: _Link, src: socket.socket, dst: socket.socket, way: tuple) -> None:
        pump(src, dst, lambda: self._silent(link), self._drop, lambda: self._delays.get(way, 0.0))
        with self._lock:  # ended (either way): forgotten, so that the list stays short
            if link in self._links:
                self._links.remove(link)

    def _drop(self, n: int) -> None:
        self.dropped += n


class PeerProxiedCluster(Cluster):
    """A Cluster whose members reach each other only through ``self.net``'s proxies."""

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.net = PeerNet()
        self._advertised: Dict[int, str] = {}

    def _layout(self) -> None:
        super()._layout()
        self._advertised = {m.index: f"http://{HOST}:{self.net.proxy(m.index, m.peer_port)}" for m in self.members}

    def _command(self, m, state: str) -> List[str]:
        cmd = super()._command(m, state)
        cmd[cmd.index("--initial-advertise-peer-urls") + 1] = self._advertised[m.index]
        cmd[cmd.index("--initial-cluster") + 1] = ",".join(
            f"{x.name}={self._advertised[x.index]}" for x in self.members if not x.removed)
        return cmd

    def _spawn(self, m, state: str) -> None:
        super()._spawn(m, state)
        self.net.pids[m.index] = m.proc.pid

    def member_id(self, i: int) -> int:
        """Raft member ID of member i: etcd knows it by its advertised (proxy) peer URL."""
        import json
        ml = json.loads(self.etcdctl("member", "list", "-w", "json", timeout=15))
        for mem in ml.get("members", []):
            if self._advertised[i] in (u.rstrip("/") for u in mem.get("peerURLs") or []):
                self._member_ids[i] = mem["ID"]
                return mem["ID"]
        raise AssertionError(f"member {i} ({self._advertised[i]}) is not in the member list")

    def isolate(self, i: int) -> None:
        self.net.isolate(i)

    def heal(self) -> int:
        return self.net.heal()

    def stop(self) -> None:
        super().stop()
        self.net.close()
