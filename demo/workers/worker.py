"""The Python demo worker: acquire → guarded increment → work → release, reported as JSON lines.

Environment: ETCDLOCK_ENDPOINTS, DEMO_LOCK, DEMO_COUNTER, DEMO_TTL, DEMO_WORK_MS,
DEMO_UNTIL_NS (a CLOCK_MONOTONIC deadline; time.monotonic_ns reads that clock on Linux); with
DEMO_PG (a PostgreSQL DSN) also the fenced counter there (demo/database.py); with
https:// endpoints (demo.sh --tls) also DEMO_TLS_CA, DEMO_TLS_CERT, DEMO_TLS_KEY (PEM file paths).
DEMO_MODE=election or DEMO_MODE=semaphore runs the demo's second phase instead (demo/coordination.py):
campaign in DEMO_ELECTION proposing DEMO_LABEL and, while leading, proclaim and make fenced writes
to DEMO_TERM_KEY every DEMO_WRITE_MS; or loop acquire -> hold DEMO_HOLD_MS -> release on the
semaphore DEMO_SEMAPHORE with DEMO_PERMITS permits. Both stop at DEMO_UNTIL_NS.
DEMO_MODE=produce or DEMO_MODE=tasks runs the demo's third phase (demo/tasks.py): put DEMO_TASK_COUNT
tasks with the ids DEMO_TASK_PREFIX00.. into the queue DEMO_QUEUE; or loop claim (DEMO_CLAIM_MS at
most) -> work DEMO_WORK_MS -> ack with the result DEMO_RESULTS<id> = "<token>:DEMO_LABEL" in the
ack's own transaction, until DEMO_UNTIL_NS has passed and the queue is empty.
With DEMO_SERVICE set, the mutex worker registers itself there as DEMO_LABEL while it runs.
"""
import json
import os
import sys
import threading
import time

import etcdlock


_emit_lock = threading.Lock()


def emit(**fields):
    # One write per line, under a lock: a loss reaches the callback thread at the moment the main
    # thread goes on (after a SIGCONT, both at once), and print() writes a line's text and its
    # newline separately, so two lines could interleave into one that the demo cannot parse and
    # drops (seen: a frozen holder's refused late write went missing from the report).
    line = json.dumps({"t": time.monotonic_ns(), **fields}) + "\n"
    with _emit_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def main():
    env = os.environ
    until, work = int(env["DEMO_UNTIL_NS"]), int(env["DEMO_WORK_MS"]) / 1000
    tls = {}
    if env.get("DEMO_TLS_CA"):
        tls = {"ca_file": env["DEMO_TLS_CA"], "cert_file": env.get("DEMO_TLS_CERT"), "key_file": env.get("DEMO_TLS_KEY")}
    with etcdlock.Client(env["ETCDLOCK_ENDPOINTS"], **tls) as client:
        mode = env.get("DEMO_MODE")
        if mode in ("election", "semaphore", "produce", "tasks"):
            {"election": election, "semaphore": semaphore, "produce": produce, "tasks": tasks}[mode](client, env, until)
            emit(ev="done")
            return
        # The value is who queues: the report's queue inspection shows it.
        lock = client.lock(env["DEMO_LOCK"], ttl=int(env["DEMO_TTL"]), value=f"python pid {os.getpid()}")
        db = db_connect(env)
        reg = register(client, env)
        held = {"token": None, "watching": False}  # the acquisition a loss is reported for
        emit(ev="ready")
        while time.monotonic_ns() < until:
            emit(ev="waiting")
            try:
                lock.acquire()
            except etcdlock.Error as e:
                emit(ev="error", error=f"{type(e).__name__}: {e}")
                time.sleep(0.2)
                continue
            token = lock.fencing_token
            emit(ev="acquired", token=token, key=lock.key.decode())
            held["token"] = token
            if not held["watching"]:  # a lock's lost callback stays for its later acquisitions
                lock.on_lost(lambda reason: emit(ev="lost", token=held["token"], reason=reason))
                held["watching"] = True
            fence = lock.fence() if db is not None else None  # taken with the lock, used after the work
            time.sleep(work)
            if db is not None:
                db_increment(db, fence, token)
            try:
                current = int(client.get(env["DEMO_COUNTER"]) or 0)
            except etcdlock.Error as e:  # no write without the value it increments; release all the same
                emit(ev="error", error=f"read {type(e).__name__}: {e}")
                current = None
            if current is not None:
                try:
                    client.put(env["DEMO_COUNTER"], str(current + 1), if_held=lock)
                    emit(ev="wrote", token=token, value=current + 1)
                except etcdlock.Error as e:  # NotHeld: refused; a timeout: unknown (run.py tells them apart)
                    emit(ev="write_refused", token=token, value=current + 1, error=type(e).__name__)
            emit(ev="releasing", token=token)
            try:
                lock.release()
                emit(ev="released", token=token)
            except etcdlock.Error as e:
                emit(ev="release_failed", token=token, error=type(e).__name__)
        if reg is not None:
            reg.close()
        emit(ev="metrics", text=client.metrics_text())
    emit(ev="done")


def db_connect(env):
    """With DEMO_PG (demo/database.py): a PostgreSQL connection for the fenced counter there."""
    if not env.get("DEMO_PG"):
        return None
    import psycopg
    return psycopg.connect(env["DEMO_PG"])


def db_increment(db, fence, token):
    """Increments the counter in PostgreSQL in a transaction that the database lets commit only
    if no newer holder of the lock has written (the fence's check, before the writes)."""
    from etcdlock.fencing import StaleFence, postgres
    try:
        with db.transaction():
            postgres.check(db, fence)
            db.execute("UPDATE demo_counter SET n = n + 1 WHERE id = 1")
            db.execute("INSERT INTO demo_writes (worker, token) VALUES (%s, %s)", (os.environ["DEMO_LABEL"], token))
        emit(ev="db_wrote", token=token)
    except StaleFence as e:
        emit(ev="db_refused", token=token, error=str(e))


def register(client, env):
    """Registers this worker in DEMO_SERVICE (if set) as DEMO_LABEL, reporting losses."""
    if not env.get("DEMO_SERVICE"):
        return None
    reg = client.register(env["DEMO_SERVICE"], env["DEMO_LABEL"], f"python pid {os.getpid()}", ttl=int(env["DEMO_TTL"]))
    reg.on_lost(lambda reason: emit(ev="unregistered", reason=reason))
    reg.on_restored(lambda lease: emit(ev="registered_again", lease=lease))
    return reg


def left(until):
    """Seconds left before until (CLOCK_MONOTONIC ns), None once it passed."""
    now = time.monotonic_ns()
    return (until - now) / 1e9 if now < until else None


def election(client, env, until):
    label, term_key, every = env["DEMO_LABEL"], env["DEMO_TERM_KEY"], int(env["DEMO_WRITE_MS"]) / 1000
    elect = client.election(env["DEMO_ELECTION"], ttl=int(env["DEMO_TTL"]))
    emit(ev="ready")
    while left(until) is not None:
        emit(ev="campaigning")
        try:
            leadership = elect.campaign(label, timeout=left(until) or 0.001)
        except etcdlock.Error as e:  # LockTimeout at the deadline
            emit(ev="campaign_ended", error=type(e).__name__)
            if left(until) is not None:
                time.sleep(0.2)
            continue
        token = leadership.fencing_token
        emit(ev="leading", token=token, key=leadership.key.decode())
        leadership.on_lost(lambda reason, token=token: emit(ev="lost", token=token, reason=reason))
        try:
            emit(ev="proclaimed", token=token, rev=leadership.proclaim(f"{label} leads"))
        except etcdlock.Error as e:
            emit(ev="proclaim_refused", token=token, error=type(e).__name__)
        seq = 0
        while left(until) is not None and leadership.is_leader():
            seq += 1
            try:
                rev = client.put(term_key, f"{label} token {token} write {seq}", if_held=leadership)
                emit(ev="term_write", token=token, seq=seq, rev=rev)
            except etcdlock.Error as e:
                emit(ev="term_refused", token=token, seq=seq, error=type(e).__name__)
            time.sleep(every)
        try:
            leadership.resign()
            emit(ev="resigned", token=token)
        except etcdlock.Error as e:
            emit(ev="resign_failed", token=token, error=type(e).__name__)


def semaphore(client, env, until):
    slots = client.semaphore(env["DEMO_SEMAPHORE"], permits=int(env["DEMO_PERMITS"]), ttl=int(env["DEMO_TTL"]))
    hold = int(env["DEMO_HOLD_MS"]) / 1000
    emit(ev="ready")
    while left(until) is not None:
        emit(ev="waiting")
        try:
            if not slots.acquire(timeout=left(until) or 0.001):
                continue  # the deadline passed while waiting
        except etcdlock.Error as e:
            emit(ev="error", error=f"{type(e).__name__}: {e}")
            if left(until) is not None:
                time.sleep(0.2)
            continue
        token = slots.fencing_token
        emit(ev="acquired", token=token, key=slots.key.decode())
        time.sleep(hold)
        emit(ev="releasing", token=token)
        try:
            slots.release()
            emit(ev="released", token=token)
        except etcdlock.Error as e:
            emit(ev="release_failed", token=token, error=type(e).__name__)


def produce(client, env, until):
    q = client.queue(env["DEMO_QUEUE"], ttl=int(env["DEMO_TTL"]), max_attempts=int(env["DEMO_MAX_ATTEMPTS"]))
    emit(ev="ready")
    for i in range(int(env["DEMO_TASK_COUNT"])):
        tid = f"{env['DEMO_TASK_PREFIX']}{i:02d}"
        try:
            q.put(f"task {tid} from {env['DEMO_LABEL']}".encode(), id=tid)
            emit(ev="put", id=tid)
        except etcdlock.Error as e:  # a timeout: the item may or may not be there
            emit(ev="put_failed", id=tid, error=f"{type(e).__name__}: {e}")


def tasks(client, env, until):
    q = client.queue(env["DEMO_QUEUE"], ttl=int(env["DEMO_TTL"]), max_attempts=int(env["DEMO_MAX_ATTEMPTS"]))
    label, results = env["DEMO_LABEL"], env["DEMO_RESULTS"]
    work, wait = int(env["DEMO_WORK_MS"]) / 1000, int(env["DEMO_CLAIM_MS"]) / 1000
    emit(ev="ready")
    while True:
        try:
            task = q.claim(timeout=wait, worker=label)
        except etcdlock.LockTimeout:
            if left(until) is None:
                s = q.stats()
                if s.pending + s.delayed + s.claimed == 0:
                    return
            continue
        except etcdlock.Error as e:
            emit(ev="error", error=f"claim {type(e).__name__}: {e}")
            time.sleep(0.2)
            continue
        token = task.fencing_token
        emit(ev="claimed", id=task.id, token=token, attempts=task.attempts)
        time.sleep(work)
        try:  # the result and the ack in one transaction, only while the claim holds
            rev = task.ack(puts={f"{results}{task.id}": f"{token}:{label}"})
            emit(ev="acked", id=task.id, token=token, rev=rev)
        except etcdlock.NotHeld as e:
            emit(ev="refused", id=task.id, token=token, stage="ack", error=type(e).__name__)
        except etcdlock.Error as e:  # a timeout: the ack may or may not have been committed
            emit(ev="ack_unknown", id=task.id, token=token, error=f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
