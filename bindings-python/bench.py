#!/usr/bin/env python3
"""The Rust benchmark's lock, task queue, semaphore and pool workloads (bench/src/workloads.rs,
bench/src/queue.rs, bench/src/recipes.rs), through the Python package.

    python3 bench.py --endpoints URLS [--seconds S] [--rounds R] [--serve]

Prints one JSON line per workload, in the Rust bench's format with "lang":"python", each the
round with the median throughput. Rounds interleave the workloads, as the Rust bench does.
With --serve, runs one workload per stdin line (`SECONDS WORKLOAD NAME`) and answers each with
one JSON line, until stdin closes (for bench/run.py).
"""

import argparse
import asyncio
import json
import os
import resource
import sys
import threading
import time
import uuid
from typing import List, Optional, Tuple

import etcdlock


class Report:
    def __init__(self, name: str, cycles_per_sec: float, p50: Optional[float] = None,
                 p99: Optional[float] = None, jain: Optional[float] = None, cpu: Optional[float] = None) -> None:
        self.name, self.cycles_per_sec, self.p50, self.p99, self.jain = name, cycles_per_sec, p50, p99, jain
        self.cpu = cpu  # the process's CPU seconds per cycle over the timed window

    def json(self) -> str:
        # Same fields and number formats as Report::json in bench/src/workloads.rs.
        def ms(s: Optional[float]) -> str:
            return "null" if s is None else f"{s * 1e3:.4f}"

        jain = "null" if self.jain is None else f"{self.jain:.4f}"
        cpu = "null" if self.cpu is None else f"{self.cpu * 1e6:.1f}"
        return (f'{{"lang":"python","workload":"{self.name}","cycles_per_sec":{self.cycles_per_sec:.1f},'
                f'"handoff_p50_ms":{ms(self.p50)},"handoff_p99_ms":{ms(self.p99)},"jain":{jain},'
                f'"cpu_us_per_cycle":{cpu}}}')


def process_cpu() -> float:
    """This process's user and system CPU seconds so far (every thread, the library's included)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def per_cycle(cpu0: float, cycles: int) -> Optional[float]:
    return (process_cpu() - cpu0) / cycles if cycles else None


def unique(tag: str) -> str:
    return f"bench/{tag}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def lock_uncontended(endpoints: str, dur: float) -> Report:
    with etcdlock.Client(endpoints) as client:
        lock = client.lock(unique("lock"), ttl=30)
        lock.acquire()  # grants the client's lease before timing starts, as the Rust bench does
        lock.release()
        cpu0 = process_cpu()
        n, deadline = 0, time.monotonic() + dur
        while time.monotonic() < deadline:
            lock.acquire()
            lock.release()
            n += 1
        cpu = per_cycle(cpu0, n)
    return Report("lock uncontended", n / dur, cpu=cpu)


def lock_many_threads(endpoints: str, tasks: int, dur: float) -> Tuple[int, Optional[float]]:
    with etcdlock.Client(endpoints) as client:
        prefix = unique("lock")
        counts = [0] * tasks
        start = threading.Barrier(tasks + 1)
        deadline = [0.0]

        def worker(i: int) -> None:
            lock = client.lock(f"{prefix}/{i}", ttl=30)
            lock.acquire()
            lock.release()
            start.wait()
            n = 0
            while time.monotonic() < deadline[0]:
                lock.acquire()
                lock.release()
                n += 1
            counts[i] = n

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(tasks)]
        for t in threads:
            t.start()
        cpu0 = process_cpu()
        deadline[0] = time.monotonic() + dur + 0.0
        start.wait()
        for t in threads:
            t.join()
        cpu = per_cycle(cpu0, sum(counts))
    return sum(counts), cpu


def lock_many_asyncio(endpoints: str, tasks: int, dur: float) -> Tuple[int, Optional[float]]:
    async def main() -> Tuple[int, Optional[float]]:
        async with etcdlock.AsyncClient(endpoints) as client:
            prefix = unique("lock")
            locks = [client.lock(f"{prefix}/{i}", ttl=30) for i in range(tasks)]
            for lock in locks:  # leases granted before timing starts
                await lock.acquire()
                await lock.release()
            cpu0 = process_cpu()
            deadline = time.monotonic() + dur

            async def cycle(lock: etcdlock.AsyncLock) -> int:
                n = 0
                while time.monotonic() < deadline:
                    await lock.acquire()
                    await lock.release()
                    n += 1
                return n

            n = sum(await asyncio.gather(*(cycle(l) for l in locks)))
            return n, per_cycle(cpu0, n)

    return asyncio.run(main())


def lock_contended(endpoints: str, clients: int, dur: float) -> Report:
    name = unique("contended")
    conns = [etcdlock.Client(endpoints) for _ in range(clients)]  # one connection per contender
    timeline: List[Tuple[float, float]] = []
    counts = [0] * clients
    cpu0 = process_cpu()
    start = time.monotonic()
    deadline = start + dur

    def worker(i: int) -> None:
        lock = conns[i].lock(name, ttl=30)
        n = 0
        while time.monotonic() < deadline:
            lock.acquire()
            acquired = time.monotonic()
            releasing = time.monotonic()
            lock.release()
            timeline.append((acquired, releasing))  # list.append is atomic under the GIL
            n += 1
        counts[i] = n

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    cpu = per_cycle(cpu0, sum(counts))
    for c in conns:
        c.close()
    timeline.sort()
    handoffs = sorted(max(0.0, b[0] - a[1]) for a, b in zip(timeline, timeline[1:]))

    def pct(p: float) -> Optional[float]:
        return handoffs[round((len(handoffs) - 1) * p)] if handoffs else None

    total, sq = float(sum(counts)), float(sum(c * c for c in counts))
    return Report(f"lock contended ({clients} clients)", total / elapsed, pct(0.5), pct(0.99),
                  total * total / (len(counts) * sq) if sq else None, cpu)


# bench/src/queue.rs's: the producer stays at most this many items per worker ahead of the acks.
BACKLOG_PER_WORKER = 2
PAYLOAD = b"task-0123456789"


def queue(endpoints: str, workers: int, dur: float) -> Report:
    """One producer (the main thread) and `workers` threads, each a blocking Client of its own,
    on a queue of its own: the producer puts while fewer than BACKLOG_PER_WORKER x workers
    items are unacked, each worker claims and acks until the window ends; tasks acked by its
    end per second. What is left is claimed and acked afterwards, untimed (bench/src/queue.rs)."""
    name = unique("queue")
    producer = etcdlock.Client(endpoints)
    conns = [etcdlock.Client(endpoints) for _ in range(workers)]
    backlog = threading.Semaphore(BACKLOG_PER_WORKER * workers)
    counts = [0] * workers
    failed: List[BaseException] = []
    cpu0 = process_cpu()
    deadline = time.monotonic() + dur

    def worker(i: int) -> None:
        try:
            q = conns[i].queue(name, ttl=10, max_attempts=5)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    task = q.claim(timeout=left)
                except etcdlock.LockTimeout:
                    break
                task.ack()
                backlog.release()
                if time.monotonic() <= deadline:
                    counts[i] += 1
        except BaseException as e:  # noqa: BLE001 (reported by the main thread)
            failed.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    q = producer.queue(name, ttl=10, max_attempts=5)
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not backlog.acquire(timeout=left) or time.monotonic() >= deadline:
            break
        q.put(PAYLOAD)
    for t in threads:
        t.join()
    if failed:
        raise failed[0]
    acked = sum(counts)
    cpu = per_cycle(cpu0, acked)
    while True:  # what is left, so that the next window's etcd holds nothing of this one's
        try:
            q.claim(timeout=0).ack()
        except etcdlock.WouldBlock:
            break
    for c in conns:
        c.close()
    producer.close()
    return Report(f"queue ({workers} workers)", acked / dur, cpu=cpu)


def recipe_contended(endpoints: str, kind: str, clients: int, size: int, dur: float) -> Report:
    """`clients` threads, each a blocking Client of its own, cycling acquire/release on one
    semaphore of `size` permits or one slot of a pool of `size` slots, on a name of its own
    (bench/src/recipes.rs): cycles/s over all of them and Jain's index of their counts."""
    name = unique(kind)
    conns = [etcdlock.Client(endpoints) for _ in range(clients)]  # one connection per contender
    counts = [0] * clients
    failed: List[BaseException] = []
    cpu0 = process_cpu()
    start = time.monotonic()
    deadline = start + dur

    def worker(i: int) -> None:
        try:
            n = 0
            if kind == "pool":
                pool = conns[i].pool(name, size=size, ttl=30)
                while time.monotonic() < deadline:
                    pool.acquire(count=1).release()
                    n += 1
            else:
                sem = conns[i].semaphore(name, permits=size, ttl=30)
                while time.monotonic() < deadline:
                    sem.acquire()
                    sem.release()
                    n += 1
            counts[i] = n
        except BaseException as e:  # noqa: BLE001 (reported by the main thread)
            failed.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    if failed:
        raise failed[0]
    cpu = per_cycle(cpu0, sum(counts))
    for c in conns:
        c.close()
    total, sq = float(sum(counts)), float(sum(c * c for c in counts))
    label = (f"pool contended ({clients} clients, {size} slots)" if kind == "pool"
             else f"semaphore contended ({clients} clients, {size} permits)")
    return Report(label, total / elapsed, jain=total * total / (len(counts) * sq) if sq else None, cpu=cpu)


def many_report(name: str, cycles: int, cpu: Optional[float], dur: float) -> Report:
    return Report(name, cycles / dur, cpu=cpu)


def median(rounds: List[Report]) -> Report:
    rounds = sorted(rounds, key=lambda r: r.cycles_per_sec)
    return rounds[len(rounds) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--endpoints", default=os.environ.get("ETCDLOCK_ENDPOINTS", "http://127.0.0.1:2379"))
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--serve", action="store_true", help="run the workloads stdin names (see above)")
    a = ap.parse_args()
    if a.rounds < 1 or a.seconds <= 0:
        ap.error("--rounds and --seconds must be positive")

    workloads = {
        "lock uncontended": lambda s: lock_uncontended(a.endpoints, s),
        "lock many (64 tasks)": lambda s: many_report("lock many (64 tasks)", *lock_many_asyncio(a.endpoints, 64, s), s),
        # The blocking Client from a thread pool (Flask, Django, Celery code) gets its own row.
        "lock many (64 threads)": lambda s: many_report("lock many (64 threads)", *lock_many_threads(a.endpoints, 64, s), s),
        "lock contended (4 clients)": lambda s: lock_contended(a.endpoints, 4, s),
        "lock contended (16 clients)": lambda s: lock_contended(a.endpoints, 16, s),
        "queue (4 workers)": lambda s: queue(a.endpoints, 4, s),
        "queue (16 workers)": lambda s: queue(a.endpoints, 16, s),
        "semaphore contended (16 clients, 4 permits)": lambda s: recipe_contended(a.endpoints, "semaphore", 16, 4, s),
        "pool contended (16 clients, 4 slots)": lambda s: recipe_contended(a.endpoints, "pool", 16, 4, s),
    }
    if a.serve:
        for line in sys.stdin:
            seconds, _, name = line.strip().partition(" ")
            if not name:
                break
            print(workloads[name](float(seconds)).json(), flush=True)
        return
    lock_uncontended(a.endpoints, 0.5)  # warm the server up before anything is timed
    rounds: List[List[Report]] = [[] for _ in workloads]
    for _ in range(a.rounds):
        for i, w in enumerate(workloads.values()):
            rounds[i].append(w(a.seconds))
    for r in rounds:
        print(median(r).json(), flush=True)


if __name__ == "__main__":
    main()
