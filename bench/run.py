#!/usr/bin/env python3
"""The project's benchmark across languages: one etcd (data in /dev/shm), one bench process per
language (the Rust one also runs the raw-RPC baseline), and windows of every workload alternating
between them, so that the machine's drift hits what is compared alike. Each row's ratios are the
median over rounds of ratios within a round (windows seconds apart), not ratios of medians.

    python3 bench/run.py [--seconds 1] [--rounds 9] [--langs rust,python,node,c,go,java,jetcd]
                         [--workloads lock,queue,contended] [--no-build]

"go" is etcd's own Go client and its concurrency.Mutex (bench/go), the reference client most
teams would otherwise use: every lock row gets its ratio to it (x Go). Every row also gets the
bench process's CPU time over the window per cycle (getrusage), and its ratio to Go's.

The "queue (N workers)" rows are the task queue's (bench/src/queue.rs): one producer and N
workers, each a client of its own, on a queue of their own per window; the producer puts small
payloads while fewer than 2 x N items are unacked, the workers claim and ack: tasks acked per
second, and CPU per task. Go's is etcd's recipe.Queue (Enqueue; Dequeue deletes the item: no
claim, no ack), which every queue row gets its ratio to (x Go); jetcd has no queue.
The "semaphore contended (16 clients, 4 permits)" and "pool contended (16 clients, 4 slots)" rows
(bench/src/recipes.rs) are 16 clients, each a connection of its own, cycling acquire/release on
one semaphore of 4 permits, or on one slot of one pool of 4 slots, a name of their own per
window: cycles/s and Jain's index. Go's concurrency package has neither, nor has jetcd: these
rows have no x Go, only x Rust core, and a last table gives each language's pool / semaphore
ratio within a round.
--workloads keeps the workloads whose name contains one of its comma-separated parts.

"java" is the Java binding (bindings-java's jar) and "jetcd" jetcd's own Lock and Lease clients,
both from bench/java (a Maven project built here, on the binding's jar, which is built with Maven
when missing); with "jetcd" among --langs every row also gets its ratio to jetcd (x jetcd).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests"))
sys.path.insert(0, os.path.join(REPO, "demo"))
import etcd_harness  # noqa: E402
import workers  # noqa: E402  (demo/workers.py: the Java toolchain and the binding's jar)

C_BENCH = os.path.join(REPO, "target", "bench", "bench_c")
GO_BENCH = os.path.join(REPO, "target", "bench", "bench_go")
JAVA_DIR = os.path.join(REPO, "bench", "java")
JAVA_CLASSPATH = os.path.join(JAVA_DIR, "target", "classpath.txt")  # jetcd and its dependencies, the jar


def build(langs):
    run = lambda cmd, cwd=REPO: subprocess.run(cmd, check=True, cwd=cwd)
    run(["cargo", "build", "--quiet", "--release", "-p", "etcdlock-bench"] + (["-p", "etcdlock-c"] if "c" in langs else []))
    if "c" in langs:
        os.makedirs(os.path.dirname(C_BENCH), exist_ok=True)
        lib = os.path.join(REPO, "target", "release")
        run(["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I", "include", "bindings-c/bench/bench.c",
             "-L", lib, "-letcdlock", f"-Wl,-rpath,{lib}", "-lpthread", "-lm", "-o", C_BENCH])
    if "python" in langs:
        run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "./bindings-python"])
    if "go" in langs:
        subprocess.run(["bash", "scripts/build-go-bench.sh"], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    if "node" in langs:
        run(["npm", "install", "--silent", "--no-audit", "--no-fund"], cwd=os.path.join(REPO, "bindings-node"))
        run(["npm", "run", "--silent", "build"], cwd=os.path.join(REPO, "bindings-node"))
    if "java" in langs or "jetcd" in langs:
        jar = workers.java_jar()  # JDK and Maven when missing, the jar when missing (mvn package)
        workers.mvn(["compile", "dependency:build-classpath", f"-Dmdep.outputFile={JAVA_CLASSPATH}", f"-Detcdlock.jar={jar}"],
                    cwd=JAVA_DIR)


def java(impl):
    """bench/java's Bench with `--impl impl` (etcdlock: our binding; jetcd)."""
    if impl not in ("etcdlock", "jetcd"):
        return None
    with open(JAVA_CLASSPATH) as f:
        cp = os.pathsep.join([os.path.join(JAVA_DIR, "target", "classes"), f.read().strip()])
    # jetcd logs through SLF4J, with no provider here: its "no providers" notice is all it would say.
    return ["java", "-Dslf4j.internal.verbosity=ERROR", "-cp", cp, "io.etcdlock.bench.Bench", "--impl", impl]


def commands(lang, endpoints, seconds=1.0):
    common = ["--endpoints", endpoints, "--serve"]
    if lang in ("java", "jetcd"):
        # Each workload's first window runs unmeasured for 5 windows' time (at most 5 s): the JIT's
        # warm-up (jetcd's rate climbs for seconds from a cold JVM; bench/java's Bench says more).
        warmup = min(5.0, max(0.3, 5 * seconds))
        return java("etcdlock" if lang == "java" else "jetcd") + ["--warmup", f"{warmup:g}"] + common
    return {
        "rust": [os.path.join(REPO, "target", "release", "etcdlock-bench")] + common,
        "python": [sys.executable, os.path.join(REPO, "bindings-python", "bench.py")] + common,
        "node": ["node", os.path.join(REPO, "bindings-node", "bench.js")] + common,
        "c": [C_BENCH] + common,
        "go": [GO_BENCH] + common,
    }[lang]


WORKLOADS = ["lock uncontended", "lock many (64 tasks)", "lock contended (4 clients)", "lock contended (16 clients)",
             "queue (4 workers)", "queue (16 workers)",
             "semaphore contended (16 clients, 4 permits)", "pool contended (16 clients, 4 slots)"]
# The task queue's rows: no raw loop beside them, and no jetcd (it has no queue).
QUEUE = {"queue (4 workers)", "queue (16 workers)"}
# The semaphore's and the pool's rows (#56): no raw loop beside them, and neither Go (its
# concurrency package has no semaphore and no pool) nor jetcd: the Rust core is their reference.
SEMAPHORE, POOL = "semaphore contended (16 clients, 4 permits)", "pool contended (16 clients, 4 slots)"
RECIPES = {SEMAPHORE, POOL}
RAW = {"lock uncontended": "raw uncontended", "lock many (64 tasks)": "raw many (64 tasks)"}
# The raw loop over the leaner channel etcdlock's KV requests take (RAW is over etcd-client's own).
RAW_H2 = {w: f"{raw} over etcdlock's channel" for w, raw in RAW.items()}
# The raw loop sending the lock's own two requests (put if the queue is empty, fenced delete),
# over etcdlock's channel: its ratio to the raw loop is what etcd leaves for any lock with
# these guarantees, and the lock's ratio to it is what the library costs.
SHAPED = {"lock uncontended": "raw lock-shaped uncontended", "lock many (64 tasks)": "raw lock-shaped many (64 tasks)"}
BASELINES = {"raw": RAW, "raw (etcdlock's channel)": RAW_H2, "lock-shaped": SHAPED}
# Extra rows, as label: (language, workload it stands beside, what that language's bench calls it).
# C's 64 tasks are chains of `_async` calls; its 64 blocked threads get a row of their own.
# Python's 64 tasks are asyncio tasks on an AsyncClient; 64 threads on one blocking Client (a
# thread pool's way) get a row of their own too.
# Java's 64 tasks are 64 platform threads blocked in acquire() (the way most JVM code would lock);
# 64 chains of acquireAsync() then releaseAsync(), no thread blocked per chain, get a row of
# their own.
VARIANTS = {
    "c threads": ("c", "lock many (64 tasks)", "lock many (64 threads)"),
    "python threads": ("python", "lock many (64 tasks)", "lock many (64 threads)"),
    "java async": ("java", "lock many (64 tasks)", "lock many (64 async)"),
}


class Server:
    """One language's bench process in --serve mode: a workload window per request."""

    def __init__(self, lang, endpoints, seconds=1.0):
        self.lang = lang
        self.proc = subprocess.Popen(commands(lang, endpoints, seconds), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1, cwd=REPO)

    def run(self, workload, seconds):
        self.proc.stdin.write(f"{seconds} {workload}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.lang} bench exited (code {self.proc.wait()}) during {workload!r}")
        return json.loads(line)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--langs", default="rust,python,node,c,go,java,jetcd")
    ap.add_argument("--workloads", default="", help="only the workloads whose name contains one of these (comma-separated)")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    parts = [p for p in args.workloads.split(",") if p]
    workloads = [w for w in WORKLOADS if not parts or any(p in w for p in parts)]
    if not workloads:
        ap.error(f"--workloads {args.workloads!r} matches none of {WORKLOADS}")
    langs = [l for l in args.langs.split(",") if l]
    if "rust" not in langs:
        langs.insert(0, "rust")  # the reference every binding is compared with
    if not args.no_build:
        build(langs)
    data_root = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    started, load_before = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.getloadavg()
    rounds = []  # per round: {(workload, label): report}; label "raw" is the Rust raw loop
    with etcd_harness.Cluster(1, data_root=data_root) as etcd:
        servers = {}
        try:
            for lang in langs:
                servers[lang] = Server(lang, etcd.endpoints_str, args.seconds)
                servers[lang].run("lock uncontended", 0.5)  # warm up the process and the server
            for rnd in range(args.rounds):
                print(f"# round {rnd + 1}/{args.rounds}", file=sys.stderr, flush=True)
                # etcd's history is compacted and defragmented before each round: a server
                # whose database keeps growing gets slower.
                compact(etcd)
                got = {}
                for w in workloads:
                    labels = (list(BASELINES) if w in RAW else []) + runs(w, langs) + variants(w, langs)
                    shift = rnd % len(labels)  # each language takes each place in turn
                    for label in labels[shift:] + labels[:shift]:
                        lang, name = target(label, w)
                        got[(w, label)] = servers[lang].run(name, args.seconds)
                rounds.append(got)
        finally:
            for server in servers.values():
                server.close()
    print(f"{args.rounds} rounds of {args.seconds:g} s windows per workload and language, alternating; "
          f"ratios are medians of per-round ratios")
    # The machine's load, since on a shared machine it decides more than anything measured here.
    print(f"started {started}, {os.cpu_count()} CPUs; load average (1, 5, 15 min) before "
          f"{' '.join(f'{x:.1f}' for x in load_before)}, after {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print_table(rounds, langs, workloads)


def runs(workload, langs):
    """The languages among `langs` that have `workload`."""
    return [l for l in langs if not (workload in QUEUE and l == "jetcd")
            and not (workload in RECIPES and l in ("go", "jetcd"))]


def target(label, workload):
    """The bench process and its workload name behind a row's label."""
    if label in BASELINES:
        return "rust", BASELINES[label][workload]
    if label in VARIANTS:
        lang, _, name = VARIANTS[label]
        return lang, name
    return label, workload


def variants(workload, langs):
    return [label for label, (lang, w, _) in VARIANTS.items() if w == workload and lang in langs]


def compact(etcd):
    rev = json.loads(etcd.etcdctl("endpoint", "status", "-w", "json"))[0]["Status"]["header"]["revision"]
    etcd.etcdctl("compaction", "--physical", str(rev), check=False)
    etcd.etcdctl("defrag", check=False)
    # etcd is slow for a second or so after a defrag (it measured a Python loop at 642 cycles/s
    # right after one, 947 three seconds later): let it settle, or whichever workload a
    # language measures first pays for it.
    time.sleep(3)


def median(values):
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def print_table(rounds, langs, workloads):
    def col(w, label, field):
        return [r[(w, label)][field] for r in rounds if (w, label) in r]

    def ratio(a, b, field="cycles_per_sec"):  # a, b: (workload, label); "median [middle half of the rounds]"
        values = sorted(r[a][field] / r[b][field] for r in rounds
                        if a in r and b in r and r[a].get(field) is not None and r[b].get(field))
        if not values:
            return "-"
        q = lambda f: values[round((len(values) - 1) * f)]
        return f"{median(values):.2f} [{q(0.25):.2f}-{q(0.75):.2f}]" if a != b else "1.00"

    def diff(w, a, b, field):
        return median(r[(w, a)][field] - r[(w, b)][field] for r in rounds
                      if r.get((w, a), {}).get(field) is not None and r.get((w, b), {}).get(field) is not None)

    fmt = lambda v, f, suffix="": "-" if v is None else format(v, f) + suffix
    go, jetcd = "go" in langs, "jetcd" in langs
    print("| workload | lang | cycles/s | x Go | x Rust core | x raw | CPU us/cycle | CPU x Go | handoff p50 | p50 - Rust | handoff p99 | Jain (min) |"
          + (" x jetcd | CPU x jetcd |" if jetcd else ""))
    print("|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if jetcd else ""))
    for w in workloads:
        for lang in (list(BASELINES) if w in RAW else []) + runs(w, langs) + variants(w, langs):
            if not col(w, lang, "cycles_per_sec"):
                continue
            jain = [j for j in col(w, lang, "jain") if j is not None]
            print(f"| {w} | {lang} | {median(col(w, lang, 'cycles_per_sec')):.0f} | "
                  f"{ratio((w, lang), (w, 'go')) if go else '-'} | {ratio((w, lang), (w, 'rust'))} | "
                  f"{'-' if w in QUEUE or w in RECIPES else ratio((w, lang), (w if w in RAW else WORKLOADS[0], 'raw'))} | "
                  f"{fmt(median(col(w, lang, 'cpu_us_per_cycle')), '.0f')} | "
                  f"{ratio((w, lang), (w, 'go'), 'cpu_us_per_cycle') if go else '-'} | "
                  f"{fmt(median(col(w, lang, 'handoff_p50_ms')), '.2f', ' ms')} | "
                  f"{fmt(diff(w, lang, 'rust', 'handoff_p50_ms'), '+.2f', ' ms')} | "
                  f"{fmt(median(col(w, lang, 'handoff_p99_ms')), '.2f', ' ms')} | {fmt(min(jain) if jain else None, '.3f')} |"
                  + (f" {ratio((w, lang), (w, 'jetcd'))} | {ratio((w, lang), (w, 'jetcd'), 'cpu_us_per_cycle')} |" if jetcd else ""))
    if SEMAPHORE in workloads and POOL in workloads:
        # The question (#56): what a pool's slot costs next to a semaphore's permit, in
        # each language, from the same round's two windows.
        both = [l for l in runs(POOL, langs) if l in runs(SEMAPHORE, langs)]
        print("\n| pool / semaphore (16 clients, 4 slots / 4 permits), same round | " + " | ".join(both) + " |")
        print("|---|" + "---|" * len(both))
        print("| cycles/s | " + " | ".join(ratio((POOL, l), (SEMAPHORE, l)) for l in both) + " |")
        print("| CPU us/cycle | " + " | ".join(ratio((POOL, l), (SEMAPHORE, l), "cpu_us_per_cycle") for l in both) + " |")
    print("\n(x Go: against the same round's window of etcd's Go concurrency.Mutex (bench/go), the same workload;"
          "\n x jetcd: likewise against jetcd's Lock client (bench/java, --impl jetcd); java: our Java binding,"
          "\n its 64 'tasks' are 64 platform threads blocked in acquire(); java async: 64 chains of"
          "\n acquireAsync() then releaseAsync();"
          "\n python: 64 asyncio tasks, python threads: 64 threads on one blocking Client;"
          "\n c threads: 64 threads blocked in acquire;"
          "\n x raw: against the same round's raw loop: the 64-task one for 'many' rows, else the uncontended one;"
          "\n [a-b]: the middle half of the per-round ratios, i.e. how much one round differed from the next;"
          "\n CPU us/cycle: the bench process's CPU time (user + system, all its threads) over the window per"
          "\n cycle; CPU x Go: its per-round ratio to Go's, lower is better;"
          "\n raw: over etcd-client's channel; raw (etcdlock's channel): the same loop over the leaner channel"
          "\n etcdlock's KV requests take; lock-shaped: the raw loop sending the lock's two requests over that"
          "\n channel, the most any lock with its guarantees reaches;"
          "\n queue (N workers): 1 producer, N workers, each a client of its own (bench/src/queue.rs):"
          "\n cycles/s is tasks acked per second, CPU us/cycle per task (producer included); go there is"
          "\n etcd's recipe.Queue (no claim, no ack: Dequeue deletes the item);"
          "\n semaphore / pool contended: 16 clients, each a connection of its own, acquire then release"
          "\n one of 4 permits / one slot of a pool of 4 (bench/src/recipes.rs); Go and jetcd have neither)")


if __name__ == "__main__":
    main()
