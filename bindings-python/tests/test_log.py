"""The library's events on the standard logger ``etcdlock`` (etcdlock/_log.py)."""

import asyncio
import logging

import etcdlock
from conftest import run_script
from etcd_harness import find_etcdctl


# covers: OBS-EVENT-001
def test_lost_lock_is_a_warning_with_name_token_and_reason(client, etcd, prefix, caplog):
    caplog.set_level(logging.DEBUG, logger="etcdlock")
    name = f"{prefix}/lost"
    lock = client.lock(name, ttl=10)  # reads the logger's level: DEBUG
    assert lock.acquire()
    token = lock.fencing_token

    def ours(message):
        return [r for r in caplog.records if r.name == "etcdlock" and r.event == message and r.lock == name]

    etcd.wait_until(lambda: ours("lock acquired"), what="the acquired record")
    acquired = ours("lock acquired")[0]
    assert acquired.levelno == logging.DEBUG and acquired.token == token and acquired.area == "lock"

    etcd.ctl("del", lock.key.decode())
    lost_message = "lock lost: it may be held by another client now"
    etcd.wait_until(lambda: ours(lost_message), what="the lost record")
    (lost,) = ours(lost_message)
    assert lost.levelno == logging.WARNING and lost.levelname == "WARNING"
    assert (lost.lock, lost.token, lost.reason) == (name, token, "key_deleted")
    assert isinstance(lost.held_ms, int)
    assert lost.fields == {"lock": name, "token": token, "reason": "key_deleted", "held_ms": lost.held_ms}
    assert lost.getMessage() == f"{lost_message} lock={name} token={token} reason=key_deleted held_ms={lost.held_ms}"
    assert lost.threadName == "etcdlock-callbacks"
    assert not lock.is_held()


# covers: OBS-EVENT-001
def test_async_client_records_too(etcd, prefix, caplog):
    caplog.set_level(logging.DEBUG, logger="etcdlock")
    name = f"{prefix}/async"

    async def main():
        async with etcdlock.AsyncClient(etcd.endpoints) as client:
            async with client.lock(name, ttl=10):
                pass

    asyncio.run(main())
    etcd.wait_until(lambda: any(getattr(r, "event", None) == "lock released" and r.lock == name for r in caplog.records), what="released")


def test_debug_records_follow_the_logger_level(client, etcd, prefix, caplog):
    caplog.set_level(logging.WARNING, logger="etcdlock")
    name = f"{prefix}/quiet"
    with client.lock(name, ttl=10):
        pass
    caplog.set_level(logging.DEBUG, logger="etcdlock")
    with client.lock(name, ttl=10):  # lock() reads the new level
        pass
    etcd.wait_until(lambda: any(getattr(r, "event", None) == "lock released" and r.lock == name for r in caplog.records), what="released")
    assert len([r for r in caplog.records if getattr(r, "event", None) == "lock acquired" and r.lock == name]) == 1


def test_nothing_printed_unless_logging_is_configured(etcd, prefix):
    # The lost lock's WARNING would reach stderr through logging's last-resort handler if the
    # library did not give its logger a NullHandler.
    code = f"""
import subprocess, time, etcdlock
with etcdlock.Client({etcd.endpoints!r}) as c:
    lock = c.lock({prefix + "/quiet"!r}, ttl=5)
    lock.acquire()
    lost = []
    lock.on_lost(lost.append)
    subprocess.run([{find_etcdctl()!r}, "--endpoints", {etcd.endpoints!r}, "del", lock.key.decode()], check=True, capture_output=True)
    for _ in range(100):
        if lost:
            break
        time.sleep(0.05)
    time.sleep(0.2)
    print(lost)
"""
    r = run_script(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['key_deleted']"
    assert r.stderr == ""
