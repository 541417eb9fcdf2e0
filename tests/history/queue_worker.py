#!/usr/bin/env python3
"""A task-queue worker (or producer) for the queue checker's controls, on the Python binding.

    queue_worker.py --endpoints E --queue Q --results R --history FILE --process NAME \\
        --mode MODE [--produce N] [--ttl 2] [--work-ms 300] [--idle-s 3]

With ``--produce N`` it puts tasks ``t00``.. (recorded ``put``) and exits. Otherwise it claims
and handles tasks until no task came for ``--idle-s``: claim (recorded with the task's id and
token), work, then ack with its result ``R<id>`` = ``"<token>:<process>"`` in the ack's own
transaction. Modes:

- ``correct``: as above.
- ``delete-on-claim``: deletes the item as soon as it has it (a plain delete, as etcd's
  ``recipe.Queue.Dequeue`` does before returning), then works and acks. A worker killed
  mid-task has lost its item for good (Q1).
- ``ack-after-loss``: writes its result with a plain put, whether or not its claim still holds,
  then acks (which fails once the claim is lost). A worker paused past its TTL writes a result
  for a task that another worker has handled (Q3, Q1).
- ``barge``: takes the first item in the queue by writing a claim key of its own (with
  etcdctl, no lease, no look at the claims already there), works, then writes its result and
  deletes the item and its claim key: the item is claimed twice while another claim lives (Q2).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # tests/, for etcd_harness

import etcdlock  # noqa: E402
from history import Recorder  # noqa: E402

MODES = ("correct", "delete-on-claim", "ack-after-loss", "barge")


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--endpoints", required=True)
    p.add_argument("--queue", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("--history", required=True)
    p.add_argument("--process", required=True)
    p.add_argument("--mode", choices=MODES, default="correct")
    p.add_argument("--produce", type=int, default=0)
    p.add_argument("--ttl", type=int, default=2)
    p.add_argument("--work-ms", type=int, default=300)
    p.add_argument("--idle-s", type=float, default=3.0)
    a = p.parse_args(argv)
    rec = Recorder(a.history, a.process)
    rec.event("start", pid=os.getpid())
    client = etcdlock.Client(a.endpoints)
    q = client.queue(a.queue, ttl=a.ttl, max_attempts=100)
    if a.produce:
        for i in range(a.produce):
            tid = f"t{i:02d}"
            op = rec.invoke("put", task=tid)
            q.put(tid.encode(), id=tid)
            rec.ok(op)
        client.close()
        return 0
    if a.mode == "barge":
        return barge(a, rec)
    while True:
        op = rec.invoke("claim")
        try:
            task = q.claim(timeout=a.idle_s)
        except etcdlock.LockTimeout:
            rec.fail(op, "LockTimeout")
            break
        rec.ok(op, task=task.id, token=task.fencing_token, attempts=task.attempts)
        if a.mode == "delete-on-claim":
            client.delete(f"{a.queue}/items/{_slot(client, a.queue, task.id)}")
        time.sleep(a.work_ms / 1000)
        result, value = f"{a.results}{task.id}", f"{task.fencing_token}:{a.process}"
        ack = rec.invoke("ack", task=task.id, token=task.fencing_token)
        try:
            if a.mode == "ack-after-loss":
                client.put(result, value)  # unfenced
                task.ack()
            else:
                task.ack(puts={result: value})
            rec.ok(ack)
        except etcdlock.NotHeld as e:
            rec.fail(ack, type(e).__name__)
    client.close()
    return 0


def etcdctl(endpoints: str, *args: str) -> str:
    import subprocess

    import etcd_harness
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ETCD_", "ETCDCTL_"))}
    env["ETCDCTL_API"] = "3"
    return subprocess.run([etcd_harness.find_etcdctl(), f"--endpoints={endpoints}", *args], capture_output=True,
                          text=True, timeout=10, env=env, stdin=subprocess.DEVNULL, check=True).stdout


def barge(a, rec: Recorder) -> int:
    import json
    idle_until = time.monotonic() + a.idle_s
    n = 0
    while time.monotonic() < idle_until:
        first = etcdctl(a.endpoints, "get", "--prefix", f"{a.queue}/items/", "--limit", "1").splitlines()
        if len(first) < 2:
            time.sleep(0.1)
            continue
        item, task_id = first[0], first[1].split("\n")[0]
        slot = item[len(f"{a.queue}/items/"):]
        op = rec.invoke("claim")
        n += 1
        claim = f"{a.queue}/claim/{slot}/barge-{a.process}-{n}"
        token = json.loads(etcdctl(a.endpoints, "put", claim, "barged", "-w", "json"))["header"]["revision"]
        rec.ok(op, task=task_id, token=token)
        time.sleep(a.work_ms / 1000)
        etcdctl(a.endpoints, "put", f"{a.results}{task_id}", f"{token}:{a.process}")
        etcdctl(a.endpoints, "del", item)
        etcdctl(a.endpoints, "del", claim)
        idle_until = time.monotonic() + a.idle_s
    return 0


def _slot(client, queue: str, task_id: str) -> str:
    """The item's slot, from its id key."""
    return (client.get(f"{queue}/id/{task_id}") or b"").decode()


if __name__ == "__main__":
    sys.exit(main())
