"""Builds and runs the demo's worker processes, and feeds their JSON events to the run."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LANGS = ("rust", "python", "node", "c", "java")
# The languages whose binding has an election and a semaphore: the second phase's (coordination.py).
COORD_LANGS = ("rust", "python", "node", "c", "java")
C_WORKER = os.path.join(REPO, "target", "demo", "worker_c")
JAVA_JAR = os.path.join(REPO, "bindings-java", "target", "etcdlock-0.1.0.jar")
JAVA_CLASSES = os.path.join(REPO, "target", "demo", "java")
# A worker is a short-lived JVM: C1 only and the serial collector start it sooner and take less
# of the two cores it shares with etcd and the other workers.
JAVA_FLAGS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k"]


def sh(cmd: list[str], cwd: str = REPO, **kw) -> None:
    subprocess.run(cmd, check=True, cwd=cwd, **kw)


def java_toolchain() -> None:
    """A JDK (17, the Java binding's baseline) and Maven when missing (scripts/install-java.sh)."""
    if not (shutil.which("mvn") and shutil.which("javac")):
        sh(["bash", os.path.join(REPO, "scripts", "install-java.sh")])


def mvn(args: list[str], cwd: str, env: dict | None = None) -> None:
    """Quiet Maven; its output (errors go to stdout, and -q still writes colour resets there) is
    shown only when it fails."""
    r = subprocess.run(["mvn", "-q", "-B", *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout)
        raise subprocess.CalledProcessError(r.returncode, ["mvn", *args])


def newest_mtime(*roots: str) -> float:
    """The latest modification time of any file under `roots` (files or directories)."""
    newest = 0.0
    for root in roots:
        if os.path.isfile(root):
            newest = max(newest, os.path.getmtime(root))
        for d, _, files in os.walk(root):
            for f in files:
                newest = max(newest, os.path.getmtime(os.path.join(d, f)))
    return newest


def java_jar() -> str:
    """bindings-java/target/etcdlock-0.1.0.jar (the classes and libetcdlock_jni.so), built with
    `mvn -q package` (which runs cargo) when missing or older than its sources (the binding's,
    core's, the lock file). Also used by bench/run.py."""
    java_toolchain()
    sources = [os.path.join(REPO, p) for p in ("bindings-java/src", "bindings-java/pom.xml", "bindings-java/Cargo.toml",
                                                "core/src", "core/Cargo.toml", "Cargo.lock")]
    if not os.path.exists(JAVA_JAR) or os.path.getmtime(JAVA_JAR) < newest_mtime(*sources):
        # Without ETCDLOCK_ENDPOINTS the pom skips its tests (they need an etcd of their own).
        env = {k: v for k, v in os.environ.items() if k != "ETCDLOCK_ENDPOINTS"}
        mvn(["package", "-DskipTests"], cwd=os.path.join(REPO, "bindings-java"), env=env)
    return JAVA_JAR


def build(langs: list[str]) -> None:
    """Builds what the chosen workers need; every step is a no-op when already up to date."""
    # The packaged tools only: given ETCD_BIN, install-deps would re-point .tools/bin at it (and
    # drop the etcdctl link); the harness reads $ETCD_BIN itself.
    env = {k: v for k, v in os.environ.items() if k not in ("ETCD_BIN", "ETCDCTL_BIN")}
    sh(["bash", "scripts/install-deps.sh"], stdout=subprocess.DEVNULL, env=env)
    if "rust" in langs:
        sh(["cargo", "build", "--quiet", "--release", "-p", "etcdlock-bench", "--example", "demo_worker"])
    if "python" in langs:
        sh([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "./bindings-python"])
        # The fenced counter in PostgreSQL (demo/database.py) goes through psycopg 3.
        if subprocess.run([sys.executable, "-c", "import psycopg"], capture_output=True).returncode != 0:
            sh([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "psycopg[binary]>=3.1,<4"])
    if "node" in langs:
        node_dir = os.path.join(REPO, "bindings-node")
        sh(["npm", "install", "--silent", "--no-audit", "--no-fund"], cwd=node_dir)
        sh(["npm", "run", "--silent", "build"], cwd=node_dir)  # rebuild from current sources (incremental)
    if "cli" in langs:
        sh(["cargo", "build", "--quiet", "--release", "-p", "etcdlock-cli"])
    if "c" in langs:
        sh(["cargo", "build", "--quiet", "--release", "-p", "etcdlock-c"])
        os.makedirs(os.path.dirname(C_WORKER), exist_ok=True)
        lib = os.path.join(REPO, "target", "release")
        sh(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", C_WORKER, os.path.join(HERE, "workers", "worker.c"),
            "-I", os.path.join(REPO, "include"), "-L", lib, "-letcdlock", f"-Wl,-rpath,{lib}", "-lpthread"])
    if "java" in langs:
        jar = java_jar()
        src = os.path.join(HERE, "workers", "Worker.java")
        cls = os.path.join(JAVA_CLASSES, "Worker.class")
        # Compiled once (javac), not source-launched: each worker JVM then starts in ~0.3 s, not ~1.5 s.
        if not os.path.exists(cls) or os.path.getmtime(cls) < max(os.path.getmtime(src), os.path.getmtime(jar)):
            os.makedirs(JAVA_CLASSES, exist_ok=True)
            sh(["javac", "-Xlint:all", "-Werror", "--release", "17", "-cp", jar, "-d", JAVA_CLASSES, src])


def command(lang: str) -> list[str]:
    return {
        "rust": [os.path.join(REPO, "target", "release", "examples", "demo_worker")],
        "python": [sys.executable, os.path.join(HERE, "workers", "worker.py")],
        "node": ["node", os.path.join(HERE, "workers", "worker.js")],
        "c": [C_WORKER],
        "java": ["java", *JAVA_FLAGS, "-cp", f"{JAVA_JAR}{os.pathsep}{JAVA_CLASSES}", "Worker"],
    }[lang]


class Worker:
    def __init__(self, lang: str, label: str, proc: subprocess.Popen):
        self.lang, self.label, self.proc, self.pid = lang, label, proc, proc.pid


class Pool:
    def __init__(self, run, env: dict):
        self.run, self.env = run, {**os.environ, **env}
        self.workers: list[Worker] = []
        self.threads: list[threading.Thread] = []

    def _follow(self, w: Worker) -> None:
        waiting_since = None
        for line in w.proc.stdout:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("ev") == "waiting":
                waiting_since = ev["t"]
            elif ev.get("ev") == "acquired" and waiting_since is not None:
                ev["wait_ms"] = (ev["t"] - waiting_since) / 1e6
            self.run.add(w, ev)

    def _spawn(self, lang: str, label: str, cmd: list[str], env: dict) -> Worker:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
        w = Worker(lang, label, proc)
        self.workers.append(w)
        t = threading.Thread(target=self._follow, args=(w,), daemon=True)
        t.start()
        self.threads.append(t)
        return w

    def start(self, lang: str, i: int) -> Worker:
        label = f"{lang}-{i + 1}"
        return self._spawn(lang, label, command(lang), {**self.env, "DEMO_LABEL": label})

    def start_with(self, lang: str, label: str, extra_env: dict) -> Worker:
        """A worker of `lang` with more environment (the second phase's DEMO_MODE and its settings)."""
        return self._spawn(lang, label, command(lang), {**self.env, **extra_env})

    def start_etcdctl(self, ctl: dict) -> dict:
        """etcdctl lock runs a command while it holds the lock, with ETCD_LOCK_KEY set: the
        command reports like a worker. (ETCD_LOCK_REV is the response's header revision, not the
        key's create revision: the real token is looked up in etcd's history afterwards.)"""
        report = (
            "import json, os, time\n"
            "ev = lambda **kw: print(json.dumps({'t': time.monotonic_ns(), **kw}), flush=True)\n"
            "ev(ev='acquired', token=0, key=os.environ['ETCD_LOCK_KEY'])\n"
            "time.sleep(0.2)\n"
            "ev(ev='releasing', token=0, key=os.environ['ETCD_LOCK_KEY'])\n"
        )
        etcdctl = os.environ.get("ETCDCTL_BIN") or os.path.join(REPO, ".tools", "bin", "etcdctl")
        env = {k: v for k, v in self.env.items() if not k.startswith(("ETCD_", "ETCDCTL_"))}
        env["ETCDCTL_API"] = "3"
        w = self._spawn("etcdctl", "etcdctl", [etcdctl, f"--endpoints={ctl['endpoints']}", *ctl.get("flags", []), "lock", f"--ttl={ctl['ttl']}", ctl["lock"], "--",
                                                sys.executable, "-c", report], env)
        self.run.add(w, {"ev": "waiting", "t": time.monotonic_ns()})
        return {"label": w.label, "pid": w.pid}

    def start_cli(self, ctl: dict) -> dict:
        """`etcdlock run` (the command line) runs a command under the lock; the command reports
        like a worker, with the fencing token etcdlock hands it (its key's create revision)."""
        report = (
            "import json, os, time\n"
            "ev = lambda **kw: print(json.dumps({'t': time.monotonic_ns(), **kw}), flush=True)\n"
            "tok, key = int(os.environ['ETCDLOCK_FENCING_TOKEN']), os.environ['ETCDLOCK_KEY']\n"
            "ev(ev='acquired', token=tok, key=key)\n"
            "time.sleep(0.2)\n"
            "ev(ev='releasing', token=tok, key=key)\n"
        )
        cli = os.path.join(REPO, "target", "release", "etcdlock")
        # etcdctl's TLS flags (--cacert, --cert, --key) are accepted as they are.
        w = self._spawn("cli", "etcdlock-run", [cli, "run", f"--endpoints={ctl['endpoints']}", *ctl.get("flags", []),
                                                f"--ttl={ctl['ttl']}", ctl["lock"], "--", sys.executable, "-c", report], self.env)
        self.run.add(w, {"ev": "waiting", "t": time.monotonic_ns()})
        return {"label": w.label, "pid": w.pid}

    def wait(self, until_ns: int) -> None:
        """Waits for every worker to finish its last round; kills stragglers by PID."""
        deadline = until_ns / 1e9 + 15
        for w in self.workers:
            left = max(0.1, deadline - time.monotonic())
            try:
                w.proc.wait(timeout=left)
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait()
        for t in self.threads:
            t.join(timeout=2)
