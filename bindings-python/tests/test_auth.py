"""Token refresh against real etcd members with auth enabled: one whose tokens live 2 s
(`--auth-token-ttl 2`), and one with JWT tokens whose auth store changes under a client (a
role change makes every earlier JWT old): the user / password keywords of Client and AsyncClient."""

import asyncio
import os
import sys
import threading
import time

import pytest

import etcdlock

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests"))

from etcd_harness import Cluster  # noqa: E402

APP_PASSWORD = "apppw-refresh"
WRONG_PASSWORD = "nope-refresh"


@pytest.fixture(scope="module")
def ttl_etcd():
    """A member with auth enabled and 2 s tokens, root and `app` (see Cluster.enable_auth_with_app_user)."""
    with Cluster(1, extra_args=["--auth-token-ttl", "2"]) as c:
        yield c.enable_auth_with_app_user(APP_PASSWORD)


@pytest.fixture(scope="module")
def auth_etcd():
    """A member with auth enabled and JWT tokens (etcd's default lifetime, 5 min), root and
    `app`: a JWT carries the auth revision it was issued at, so a role change makes it old
    (etcd's simple tokens never go old: it checks them against its current revision)."""
    with Cluster(1, jwt=True) as c:
        yield c.enable_auth_with_app_user(APP_PASSWORD)


def _app(c: Cluster, password: str = APP_PASSWORD) -> etcdlock.Client:
    return etcdlock.Client(c.endpoints_str, user="app", password=password, timeout=5)


def _next_key(w: etcdlock.Watch, seconds: float = 5) -> bytes:
    """The key of the next event of `w`; the watch is closed (and this fails) after `seconds`."""
    timer = threading.Timer(seconds, w.close)
    timer.start()
    try:
        return next(w).key
    except StopIteration:
        pytest.fail(f"no event within {seconds} s")
    finally:
        timer.cancel()


# covers: AUTH-REFRESH-001 (a request after idling past the token; a lock held past it while another waits)
def test_expired_tokens_are_refreshed_for_requests_and_a_lock_held_past_them(ttl_etcd):
    with _app(ttl_etcd) as a, _app(ttl_etcd) as b:
        time.sleep(4)  # the token lives 2 s
        assert a.put("app/after-idle", "1") > 0
        assert a.get("app/after-idle") == b"1"

        lock = a.lock("app/held", ttl=5)
        assert lock.acquire(timeout=5)
        other = b.lock("app/held", ttl=5)
        got = []
        waiter = threading.Thread(target=lambda: got.append(other.acquire(timeout=20)))
        waiter.start()
        time.sleep(4)  # only keepalives go meanwhile
        assert lock.is_held(), lock.lost_reason
        assert got == [], "the waiter got the lock while it was held"
        assert a.put("app/fenced", "x", if_held=lock) > 0
        first = lock.fencing_token
        lock.release()
        waiter.join(25)  # bounded: the waiter's timeout is 20 s
        assert got == [True]
        assert other.is_held() and other.fencing_token > first
        other.release()
    assert ttl_etcd.etcdctl("--user", "root:rootpw", "get", "--prefix", "--keys-only", "app/held").strip() == ""


# covers: AUTH-REFRESH-001 (a new watch on a stream idle past the token; a wrong password)
def test_a_watch_created_on_a_stream_idle_past_the_token_works_and_a_wrong_password_is_auth(ttl_etcd):
    with _app(ttl_etcd) as c:
        before = c.watch("app/w1")
        time.sleep(4)
        after = c.watch("app/w2")
        c.put("app/w1", "a")
        c.put("app/w2", "b")
        assert _next_key(before) == b"app/w1"
        assert _next_key(after) == b"app/w2"
        before.close()
        after.close()

    started = time.monotonic()
    with pytest.raises(etcdlock.AuthError) as e:
        _app(ttl_etcd, WRONG_PASSWORD)
    assert time.monotonic() - started < 2, f"{time.monotonic() - started:.2f} s"
    assert WRONG_PASSWORD not in str(e.value)


# covers: AUTH-REFRESH-002
def test_a_token_made_old_by_a_role_change_is_refreshed_for_requests_watches_and_keepalives(auth_etcd):
    """Fails when a request, a watch or a keepalive refused for an old token is not refreshed."""
    with _app(auth_etcd) as c:
        # A watch stream and a keepalive stream opened with the token of the current auth revision.
        before = c.watch("app/w1")
        lock = c.lock("app/held", ttl=3)
        assert lock.acquire(timeout=5)
        # Any change to users or roles makes every token issued before it old.
        auth_etcd.etcdctl("--user", "root:rootpw", "role", "grant-permission", "app", "read", "elsewhere-sync")
        assert c.put("app/after", "1") > 0
        assert c.get("app/after") == b"1"
        # A new watch on the open watch stream: etcd checks the stream's (old) token.
        after = c.watch("app/w2")
        c.put("app/w1", "a")
        c.put("app/w2", "b")
        assert _next_key(before) == b"app/w1"
        assert _next_key(after) == b"app/w2"
        time.sleep(7)  # held past its TTL twice over: only keepalives go meanwhile
        assert lock.is_held(), lock.lost_reason
        assert c.put("app/fenced", "x", if_held=lock) > 0
        lock.release()
        c.put("app/w1", "c")
        assert _next_key(before) == b"app/w1"
        before.close()
        after.close()
    assert auth_etcd.etcdctl("--user", "root:rootpw", "get", "--prefix", "--keys-only", "app/held").strip() == ""


# covers: AUTH-REFRESH-002
def test_async_a_token_made_old_by_a_role_change_is_refreshed_for_requests_watches_and_keepalives(auth_etcd):
    """The same with AsyncClient (see the note of the sync test)."""

    async def next_key(w: "etcdlock.AsyncWatch") -> bytes:
        return (await asyncio.wait_for(w.__anext__(), 5)).key

    async def main() -> None:
        async with etcdlock.AsyncClient(auth_etcd.endpoints_str, user="app", password=APP_PASSWORD, timeout=5) as c:
            before = await c.watch("app/aw1").start()
            lock = c.lock("app/aheld", ttl=3)
            assert await lock.acquire(timeout=5)
            await asyncio.to_thread(
                auth_etcd.etcdctl, "--user", "root:rootpw", "role", "grant-permission", "app", "read", "elsewhere-async"
            )
            assert await c.put("app/aafter", "1") > 0
            after = await c.watch("app/aw2").start()
            await c.put("app/aw1", "a")
            await c.put("app/aw2", "b")
            assert await next_key(before) == b"app/aw1"
            assert await next_key(after) == b"app/aw2"
            await asyncio.sleep(7)  # held past its TTL twice over: only keepalives go meanwhile
            assert lock.is_held(), lock.lost_reason
            await lock.release()
            await c.put("app/aw1", "c")
            assert await next_key(before) == b"app/aw1"
            before.close()
            after.close()

    asyncio.run(main())
    assert auth_etcd.etcdctl("--user", "root:rootpw", "get", "--prefix", "--keys-only", "app/aheld").strip() == ""
