//! The `etcdlock` binary as a process against one real etcd per test binary: starting it,
//! reading what its commands record, and checking what is left in etcd.
#![allow(dead_code)]

pub use etcd_testkit::*;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub fn shared() -> &'static Etcd {
    static SHARED: OnceLock<Etcd> = OnceLock::new();
    SHARED.get_or_init(|| Etcd::start(1))
}

pub fn endpoint() -> String {
    shared().endpoints()[0].clone()
}

/// A lock name unique to one test.
pub fn name(test: &str) -> String {
    format!("cli/{test}-{}", rand_suffix())
}

/// `etcdlock ARGS` against the shared etcd (through ETCDLOCK_ENDPOINTS, as a cron line would).
pub fn etcdlock(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_etcdlock"));
    c.args(args).env("ETCDLOCK_ENDPOINTS", endpoint()).env_remove("ETCDLOCK_VERBOSE");
    c
}

pub fn spawn(args: &[&str]) -> Child {
    etcdlock(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run etcdlock")
}

/// Runs to the end, at most `limit`; kills it and fails the test past that.
pub fn output(args: &[&str], limit: Duration) -> Output {
    wait_output(spawn(args), limit)
}

pub fn wait_output(mut child: Child, limit: Duration) -> Output {
    // Read on threads: a process the command left behind may hold the pipes open.
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let mut chunk = [0u8; 4096];
                while let Ok(n) = p.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let _ = tx.send(buf.clone());
                }
            }
            let _ = tx.send(buf);
        });
        rx
    };
    let out = read(child.stdout.take().map(|p| Box::new(p) as _));
    let err = read(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("etcdlock still ran after {limit:?}; stderr: {}", String::from_utf8_lossy(&latest(&err, Duration::ZERO)));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let grace = Duration::from_secs(2);
    Output { status, stdout: latest(&out, grace), stderr: latest(&err, grace) }
}

/// The most a reader thread has read, waiting up to `grace` for the end of its pipe.
fn latest(rx: &std::sync::mpsc::Receiver<Vec<u8>>, grace: Duration) -> Vec<u8> {
    let (deadline, mut last) = (Instant::now() + grace, Vec::new());
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(buf) => last = buf,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return last,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return last,
        }
    }
}

pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A temp dir for one test's files, removed when dropped.
pub struct Dir(pub PathBuf);

impl Dir {
    pub fn new(test: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("etcdlock-cli-{test}-{}", rand_suffix()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    pub fn file(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.0.join(name)).unwrap_or_default()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Keys under `prefix` in etcd now.
pub fn keys_under(prefix: &str) -> Vec<String> {
    let out = shared().etcdctl(&["get", "--prefix", "--keys-only", prefix]);
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.is_empty()).map(str::to_string).collect()
}

/// Polls `cond` every 10 ms for at most `limit`.
pub fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet).
pub fn dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

pub fn signal(pid: u32, sig: i32) {
    // SAFETY: sends a signal to a process this test started.
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
}

/// The numbers a command wrote to `file`, one line each (written once complete).
pub fn numbers(text: &str) -> Vec<Vec<i64>> {
    text.lines().map(|l| l.split_whitespace().filter_map(|w| w.parse().ok()).collect()).filter(|v: &Vec<i64>| !v.is_empty()).collect()
}

/// The lines of `child`'s stdout (piped), read on a thread as they come.
pub fn stdout_lines(child: &mut Child) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let out = child.stdout.take().expect("stdout piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}
