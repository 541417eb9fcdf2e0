"""TLS and mTLS against real etcd members serving https (certificates made with the openssl CLI
at test time, in a temp dir): the ca_file / cert_file / key_file / server_name keywords of
Client and AsyncClient."""

import asyncio
import os
import pathlib
import subprocess
import sys
import time

import pytest

import etcdlock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests"))

from etcd_harness import TlsCluster, make_certs  # noqa: E402


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return pathlib.Path(make_certs(str(tmp_path_factory.mktemp("tls"))))


@pytest.fixture(scope="module")
def tls_etcd(certs):
    """A member serving TLS (server certificate only) on https_endpoint."""
    with TlsCluster(str(certs / "server.pem"), str(certs / "server.key")) as c:
        yield c


@pytest.fixture(scope="module")
def mtls_etcd(certs):
    """A member that requires client certificates signed by the test CA."""
    with TlsCluster(str(certs / "server.pem"), str(certs / "server.key"), trusted_ca_file=str(certs / "ca.pem")) as c:
        yield c


@pytest.fixture
def key(prefix):
    return f"{prefix}/tls"


# covers: TLS-CA-001
def test_ca_file_sync(tls_etcd, certs, key):
    assert tls_etcd.https_endpoint.startswith("https://")
    ca = certs / "ca.pem"  # an os.PathLike
    with etcdlock.Client(tls_etcd.https_endpoint, ca_file=ca, timeout=5) as client:
        rev = client.put(f"{key}/k", "v")
        assert rev > 0 and client.get(f"{key}/k") == b"v"
        # Written over TLS, seen over the plain port by etcdctl.
        assert tls_etcd.etcdctl("get", "--print-value-only", f"{key}/k").strip() == "v"

        lock = client.lock(f"{key}/lock", ttl=5)
        assert lock.acquire(timeout=5)
        assert lock.fencing_token and lock.is_held()
        assert client.put(f"{key}/fenced", "f", if_held=lock) > 0
        lock.release()
        with pytest.raises(etcdlock.NotHeld):
            client.put(f"{key}/fenced", "g", if_held=lock)
        assert client.get(f"{key}/fenced") == b"f"

        # A lease kept alive over TLS past its TTL: the keepalive stream (TLS too) must work
        # for a 2 s lease to live 3 s.
        with client.lease(2) as lease:
            client.put(f"{key}/leased", "l", lease=lease)
            time.sleep(3)
            assert lease.is_alive() and client.get(f"{key}/leased") == b"l"
        assert client.get(f"{key}/leased") is None

        w = client.watch(f"{key}/w/", prefix=True)
        r = client.put(f"{key}/w/a", "1")
        client.delete(f"{key}/w/a")
        events = [next(w) for _ in range(2)]
        assert [(e.type, e.key, e.value) for e in events] == [
            ("put", f"{key}/w/a".encode(), b"1"),
            ("delete", f"{key}/w/a".encode(), b""),
        ]
        assert events[0].revision == r
        w.close()


# covers: TLS-CA-001
def test_ca_file_async_and_server_name(tls_etcd, certs, key):
    async def main():
        client = etcdlock.AsyncClient(
            [tls_etcd.https_endpoint], ca_file=str(certs / "ca.pem"), server_name="localhost", timeout=5
        )
        async with client:
            assert await client.put(f"{key}/a", "1") > 0
            assert await client.get(f"{key}/a") == b"1"
            lock = client.lock(f"{key}/alock", ttl=5)
            assert await lock.acquire(timeout=5)
            assert await client.put(f"{key}/afenced", "x", if_held=lock) > 0
            await lock.release()
            async with await client.lease(5) as lease:
                await client.put(f"{key}/aleased", "l", lease=lease)
                assert lease.is_alive()
            assert await client.get(f"{key}/aleased") is None
            async with client.watch(f"{key}/aw/", prefix=True) as w:
                await client.put(f"{key}/aw/b", "2")
                ev = await asyncio.wait_for(w.__anext__(), 5)
                assert (ev.type, ev.key, ev.value) == ("put", f"{key}/aw/b".encode(), b"2")

    asyncio.run(asyncio.wait_for(main(), 30))


# covers: TLS-CA-001
def test_dns_name_endpoint(tls_etcd, certs, key):
    with etcdlock.Client(f"https://localhost:{tls_etcd.https_port}", ca_file=certs / "ca.pem", timeout=5) as client:
        assert client.put(f"{key}/dns", "d") > 0 and client.get(f"{key}/dns") == b"d"


# covers: TLS-MTLS-001
def test_readme_tls_example(mtls_etcd, certs):
    """The README's TLS example (a ```py block, which tests/test_readme.py does not run) runs
    as written against a member that requires client certificates."""
    import re

    from conftest import run_script

    readme = pathlib.Path(__file__).resolve().parents[1] / "README.md"
    section = readme.read_text(encoding="utf-8").split("## Connecting to a secured etcd", 1)[1]
    code = re.search(r"```py\n(.*?)```", section, re.S).group(1)
    r = run_script(
        code,
        env_extra={
            "ETCDLOCK_TLS_ENDPOINTS": mtls_etcd.https_endpoint,
            "ETCDLOCK_CA_FILE": str(certs / "ca.pem"),
            "ETCDLOCK_CERT_FILE": str(certs / "client.pem"),
            "ETCDLOCK_KEY_FILE": str(certs / "client.key"),
            "ETCDLOCK_SERVER_NAME": "localhost",
        },
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert mtls_etcd.etcdctl("get", "--prefix", "readme/", "--keys-only").strip() == ""


# covers: TLS-MTLS-001
def test_mtls(mtls_etcd, certs, key):
    ca = str(certs / "ca.pem")
    with etcdlock.Client(
        mtls_etcd.https_endpoint, ca_file=ca, cert_file=certs / "client.pem", key_file=certs / "client.key", timeout=5
    ) as client:
        assert client.put(f"{key}/m", "v") > 0 and client.get(f"{key}/m") == b"v"
        lock = client.lock(f"{key}/mlock", ttl=5)
        with lock:
            assert client.put(f"{key}/mfenced", "x", if_held=lock) > 0

    t0 = time.monotonic()
    with pytest.raises(etcdlock.AuthError) as e:
        etcdlock.Client(mtls_etcd.https_endpoint, ca_file=ca, timeout=5)
    assert time.monotonic() - t0 < 4.5
    assert "certificate" in str(e.value).lower()

    # A client certificate from another CA is refused too.
    with pytest.raises(etcdlock.AuthError):
        etcdlock.Client(
            mtls_etcd.https_endpoint, ca_file=ca, cert_file=certs / "stranger.pem", key_file=certs / "stranger.key", timeout=5
        )

    async def without_cert():
        async with etcdlock.AsyncClient(mtls_etcd.https_endpoint, ca_file=ca, timeout=5) as c:
            await c.get("x")

    with pytest.raises(etcdlock.AuthError):
        asyncio.run(asyncio.wait_for(without_cert(), 30))


# covers: TLS-BADCERT-001
def test_untrusted_server_certificate(tls_etcd, certs):
    t0 = time.monotonic()
    with pytest.raises(etcdlock.Unavailable) as e:
        etcdlock.Client(tls_etcd.https_endpoint, ca_file=certs / "other.pem", timeout=5)
    assert time.monotonic() - t0 < 4.5, "an untrusted certificate must fail at once, not after the timeout"
    assert "certificate" in str(e.value).lower()

    async def main():
        async with etcdlock.AsyncClient(tls_etcd.https_endpoint, ca_file=certs / "other.pem", timeout=5):
            pass

    with pytest.raises(etcdlock.Unavailable):
        asyncio.run(asyncio.wait_for(main(), 30))

    # The wrong scheme either way fails within the connect timeout.
    plain_port = tls_etcd.endpoints[0].rsplit(":", 1)[1]
    for endpoint, kw in (
        (f"http://127.0.0.1:{tls_etcd.https_port}", {}),
        (f"https://127.0.0.1:{plain_port}", {"ca_file": certs / "ca.pem"}),
    ):
        t0 = time.monotonic()
        with pytest.raises(etcdlock.Unavailable):
            etcdlock.Client(endpoint, timeout=2, **kw)
        assert time.monotonic() - t0 < 10


@pytest.fixture(scope="module")
def other_name_etcd(certs):
    """A member whose certificate, signed by the test CA, names only DNS:other.invalid (made
    here with openssl as othername.pem / othername.key)."""

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=certs, check=True, capture_output=True, timeout=60)

    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=other host",
            "-keyout", "othername.key", "-out", "othername.csr")  # fmt: skip
    (certs / "othername.ext").write_text(
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:other.invalid\n"
    )
    openssl("x509", "-req", "-in", "othername.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-extfile", "othername.ext", "-out", "othername.pem")  # fmt: skip
    with TlsCluster(str(certs / "othername.pem"), str(certs / "othername.key")) as c:
        yield c


# covers: TLS-NAME-001
def test_certificate_for_another_name_needs_server_name(other_name_etcd, certs, key):
    t0 = time.monotonic()
    with pytest.raises(etcdlock.Unavailable) as e:
        etcdlock.Client(other_name_etcd.https_endpoint, ca_file=certs / "ca.pem", timeout=5)
    assert time.monotonic() - t0 < 4.5, f"{time.monotonic() - t0:.2f} s"
    assert "server_name" in str(e.value), str(e.value)
    with etcdlock.Client(
        other_name_etcd.https_endpoint, ca_file=certs / "ca.pem", server_name="other.invalid", timeout=5
    ) as client:
        assert client.put(f"{key}/k", "v") > 0 and client.get(f"{key}/k") == b"v"
        with client.lock(f"{key}/lock", ttl=5, timeout=5) as lock:
            assert client.put(f"{key}/fenced", "f", if_held=lock) > 0
        w = client.watch(f"{key}/w")
        r = client.put(f"{key}/w", "1")
        assert next(w).revision == r
        w.close()


# covers: TLS-ARGS-001
def test_tls_arguments(tls_etcd, certs, tmp_path):
    missing = tmp_path / "no-such-ca.pem"
    with pytest.raises(ValueError) as e:
        etcdlock.Client(tls_etcd.https_endpoint, ca_file=missing, timeout=5)
    assert "no-such-ca.pem" in str(e.value)

    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    with pytest.raises(ValueError) as e:
        etcdlock.Client(tls_etcd.https_endpoint, ca_file=str(garbage), timeout=5)
    assert "garbage.pem" in str(e.value)

    # TLS options with a plain http:// endpoint.
    with pytest.raises(ValueError):
        etcdlock.Client(tls_etcd.endpoints_str, ca_file=certs / "ca.pem", timeout=5)

    # http:// mixed with https://.
    with pytest.raises(ValueError):
        etcdlock.Client([tls_etcd.https_endpoint, tls_etcd.endpoints[0]], timeout=5)

    # Wrong types, refused before anything is sent (AsyncClient's constructor sends nothing).
    for cls in (etcdlock.Client, etcdlock.AsyncClient):
        for kw in (
            {"ca_file": 42},
            {"ca_file": b"/tmp/ca.pem"},
            {"cert_file": ["a"]},
            {"key_file": 1.5},
            {"server_name": 7},
        ):
            with pytest.raises(TypeError):
                cls(tls_etcd.https_endpoint, **kw)

    async def async_missing():
        async with etcdlock.AsyncClient(tls_etcd.https_endpoint, ca_file=str(missing), timeout=5):
            pass

    with pytest.raises(ValueError, match="no-such-ca.pem"):
        asyncio.run(asyncio.wait_for(async_missing(), 30))


APP_PASSWORD = "app-Pw-7f2a9c"  # distinctive, so that a leak into a message or repr is found
WRONG_PASSWORD = "wrong-Pw-91c3e5"


@pytest.fixture(scope="module")
def auth_tls_etcd(certs):
    """A member serving TLS with auth enabled: root, and a user `app` granted readwrite on
    `app/` only (set up with etcdctl over the member's plain endpoint)."""
    with TlsCluster(str(certs / "server.pem"), str(certs / "server.key")) as c:
        c.enable_auth_with_app_user(APP_PASSWORD)
        yield c


def _no_secret(*texts: str) -> None:
    for t in texts:
        assert APP_PASSWORD not in t and WRONG_PASSWORD not in t, f"a password leaked into: {t!r}"


def _error_texts(e: BaseException) -> list:
    out = []
    while e is not None:  # the exception and whatever it was raised from
        out += [str(e), repr(e), *(repr(a) for a in e.args)]
        e = e.__cause__ or e.__context__
    return out


# covers: TLS-AUTH-001, TLS-CA-001, AUTH-PREFIX-001
def test_user_and_password_over_tls(auth_tls_etcd, certs, prefix):
    ca = certs / "ca.pem"
    base = f"app/{prefix}"
    with etcdlock.Client(auth_tls_etcd.https_endpoint, ca_file=ca, user="app", password=APP_PASSWORD, timeout=5) as client:
        _no_secret(str(client), repr(client), repr(client._n))
        # Inside app/: put/get, a lease, a lock with a guarded write, a watch.
        w = client.watch(f"{base}/", prefix=True)
        assert client.put(f"{base}/k", "v") > 0 and client.get(f"{base}/k") == b"v"
        with client.lease(5) as lease:
            client.put(f"{base}/leased", "l", lease=lease)
            assert lease.is_alive()
        with client.lock(f"{base}/lock", ttl=5, timeout=5) as lock:
            assert client.put(f"{base}/fenced", "f", if_held=lock) > 0
        assert next(w).key == f"{base}/k".encode()

        # Outside app/: AuthError at once, not retried until a deadline.
        started = time.monotonic()
        for what, call in (
            ("get", lambda: client.get("other")),
            ("put", lambda: client.put("other", "x")),
            ("lock", lambda: client.lock("other", ttl=5).acquire(timeout=5)),
            ("watch", lambda: client.watch("other")),
        ):
            with pytest.raises(etcdlock.AuthError) as e:
                call()
                pytest.fail(f"{what} outside app/ did not raise AuthError")
            _no_secret(*_error_texts(e.value))
        assert time.monotonic() - started < 3, f"{time.monotonic() - started:.2f} s"
        # The watch inside goes on.
        client.put(f"{base}/k2", "v")
        for _ in range(20):
            if next(w).key == f"{base}/k2".encode():
                break
        else:
            pytest.fail(f"the watch inside did not deliver {base}/k2")
        w.close()
    # Written over TLS as `app`, seen by root over the plain port.
    assert auth_tls_etcd.etcdctl("--user", "root:rootpw", "get", "--print-value-only", f"{base}/fenced").strip() == "f"
    assert auth_tls_etcd.etcdctl("--user", "root:rootpw", "get", "--prefix", "--keys-only", f"{base}/lock").strip() == ""

    # A wrong password: AuthError at once (no loop of token refreshes), the password in no text.
    started = time.monotonic()
    with pytest.raises(etcdlock.AuthError) as e:
        etcdlock.Client(auth_tls_etcd.https_endpoint, ca_file=ca, user="app", password=WRONG_PASSWORD, timeout=5)
    assert time.monotonic() - started < 2, f"{time.monotonic() - started:.2f} s"
    _no_secret(*_error_texts(e.value))

    async def main():
        client = etcdlock.AsyncClient(auth_tls_etcd.https_endpoint, ca_file=ca, user="app", password=APP_PASSWORD, timeout=5)
        _no_secret(str(client), repr(client), repr(client._n))
        async with client:
            lock = client.lock(f"{base}/alock", ttl=5)
            assert await lock.acquire(timeout=5)
            assert await client.put(f"{base}/afenced", "a", if_held=lock) > 0
            await lock.release()
            with pytest.raises(etcdlock.AuthError) as e:
                await client.get("other")
            _no_secret(*_error_texts(e.value))
        wrong = etcdlock.AsyncClient(auth_tls_etcd.https_endpoint, ca_file=ca, user="app", password=WRONG_PASSWORD, timeout=5)
        _no_secret(repr(wrong), repr(wrong._n))
        t0 = time.monotonic()
        with pytest.raises(etcdlock.AuthError) as e:
            await wrong.connect()
        assert time.monotonic() - t0 < 2
        _no_secret(*_error_texts(e.value))
        await wrong.close()

    asyncio.run(asyncio.wait_for(main(), 30))
