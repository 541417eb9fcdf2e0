"""The demo's cluster for `demo.sh --tls`: every member serves clients over TLS and requires a
client certificate signed by the demo's CA (mTLS), with certificates made for the run."""
from __future__ import annotations

import os

import etcd_harness


class MtlsCluster(etcd_harness.Cluster):
    """A Cluster whose members each also serve https://127.0.0.1:<port> (https_endpoints) with
    the server certificate of etcd_harness.make_certs(cert_dir), and accept only clients that
    present a certificate signed by its CA (--client-cert-auth). The workers and `etcdctl lock`
    get only the https endpoints; each member keeps its plain listener (endpoints) for the
    harness's health checks and for the demo's checks, which read etcd's own history with
    etcdctl independently of the library, as etcd_harness.TlsCluster does. Peers talk plain
    http to each other."""

    def __init__(self, members: int, cert_dir: str, **kwargs):
        super().__init__(members, **kwargs)
        d = etcd_harness.make_certs(cert_dir)
        self.ca_file = os.path.join(d, "ca.pem")
        self.cert_file = os.path.join(d, "client.pem")
        self.key_file = os.path.join(d, "client.key")
        self.tls_args = [
            "--cert-file", os.path.join(d, "server.pem"), "--key-file", os.path.join(d, "server.key"),
            "--client-cert-auth", "--trusted-ca-file", self.ca_file,
        ]  # fmt: skip
        self.https_ports: dict[int, int] = {}

    @property
    def https_endpoints(self) -> list[str]:
        return [f"https://{etcd_harness.HOST}:{self.https_ports[m.index]}" for m in self.members]

    @property
    def https_endpoints_str(self) -> str:
        return ",".join(self.https_endpoints)

    def client_env(self) -> dict:
        """What the demo's workers read to connect with TLS."""
        return {"DEMO_TLS_CA": self.ca_file, "DEMO_TLS_CERT": self.cert_file, "DEMO_TLS_KEY": self.key_file}

    def etcdctl_flags(self) -> list[str]:
        return [f"--cacert={self.ca_file}", f"--cert={self.cert_file}", f"--key={self.key_file}"]

    def _layout(self) -> None:
        super()._layout()
        taken = {p for m in self.members for p in (m.client_port, m.peer_port)}
        ports = etcd_harness._free_ports(self.size)
        while taken & set(ports):
            ports = etcd_harness._free_ports(self.size)
        self.https_ports = {m.index: p for m, p in zip(self.members, ports)}

    def _command(self, m, state: str) -> list[str]:
        cmd = super()._command(m, state)
        urls = f"https://{etcd_harness.HOST}:{self.https_ports[m.index]},{m.client_url}"
        for flag in ("--listen-client-urls", "--advertise-client-urls"):
            cmd[cmd.index(flag) + 1] = urls
        return cmd + self.tls_args
