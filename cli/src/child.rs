//! The command, in a process group of its own so that a loss or a signal reaches every process
//! it started (a `sh -c` grandchild included), and reaped by this process.
//!
//! On Linux this process becomes a child subreaper: the command's orphaned descendants are
//! reparented here rather than to init, and a thread reaps them, so that a group whose
//! processes all died is seen empty at once (init in a container may never reap them). One
//! thread for the process, whatever number of commands it runs one after another (`queue
//! work`): two threads waiting for any child could take each other's.
//!
//! What happens to etcdlock must not let the command outlive the lock: a [`Guardian`] kills the
//! group when etcdlock dies or stops renewing its word, and the command itself gets SIGKILL when
//! etcdlock dies (`PR_SET_PDEATHSIG`, for the moment before the guardian is there).

use crate::exit::{Exit, CANNOT_EXECUTE, NOT_FOUND, SOFTWARE};
use crate::guardian::Guardian;
use std::io::{Seek, Write};
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

pub struct Child {
    /// The command's pid, which is also its process group's id.
    pub pid: i32,
    /// The command's wait status once it exited.
    status: watch::Receiver<Option<i32>>,
    guardian: Guardian,
}

/// Starts `cmd` (through `sh -c` with `shell`) in a new process group with `env` added, and its
/// guardian, which lets the group run until `until` unless told a later moment. With `stdin`,
/// the command reads those bytes; without, etcdlock's own stdin.
pub fn spawn(cmd: &[String], shell: bool, env: &[(String, String)], stdin: Option<&[u8]>, until: std::time::Instant) -> Result<Child, Exit> {
    let mut c = if shell {
        let mut c = std::process::Command::new("/bin/sh");
        c.arg("-c").args(cmd);
        c
    } else {
        let mut c = std::process::Command::new(&cmd[0]);
        c.args(&cmd[1..]);
        c
    };
    c.envs(env.iter().map(|(k, v)| (k, v))).process_group(0);
    if let Some(bytes) = stdin {
        let file = input_file(bytes).map_err(|e| Exit::fail(SOFTWARE, format!("cannot pass the input to {:?}: {e}", cmd[0])))?;
        c.stdin(file);
    }
    die_with_parent(&mut c);
    become_subreaper();
    let reaper = reaper().map_err(|e| Exit::fail(SOFTWARE, format!("cannot start the reaper thread: {e}")))?;
    // Registered before the reaper may collect its status (it takes this lock to hand one on).
    let mut waiting = reaper.waiting.lock().unwrap_or_else(|e| e.into_inner());
    let child = c.spawn().map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound { NOT_FOUND } else { CANNOT_EXECUTE };
        Exit::fail(code, format!("cannot run {:?}: {e}", cmd[0]))
    })?;
    let pid = child.id() as i32;
    // Never waited through `std::process::Child`: the reaper thread collects its status.
    drop(child);
    let (tx, status) = watch::channel(None);
    waiting.push((pid, tx));
    drop(waiting);
    reaper.spawned.notify_one();
    let guardian = Guardian::start(pid, until).map_err(|e| kill_at_once(pid, format!("cannot start the guardian: {e}")))?;
    Ok(Child { pid, status, guardian })
}

/// A file holding `bytes`, read from its start: a command's input. Not a pipe: the guardian,
/// forked after the spawn, holds a copy of every descriptor etcdlock has, and a pipe's write
/// end open there would never let the command see the end of its input.
fn input_file(bytes: &[u8]) -> std::io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    // Through syscall(2), not glibc's wrapper, which exists from glibc 2.27 only: the command
    // line is to run on glibc 2.17 systems too (#58; the kernel call itself is Linux 3.17+).
    // SAFETY: memfd_create takes a NUL-terminated name and returns a new descriptor we own.
    let fd = unsafe { libc::syscall(libc::SYS_memfd_create, c"etcdlock-input".as_ptr(), libc::MFD_CLOEXEC) } as libc::c_int;
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just created, owned by nothing else.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(bytes)?;
    file.rewind()?;
    Ok(file)
}

/// A command that cannot be guarded does not run.
fn kill_at_once(group: i32, message: String) -> Exit {
    // SAFETY: killpg only sends a signal.
    unsafe { libc::killpg(group, libc::SIGKILL) };
    Exit::fail(SOFTWARE, message)
}

/// SIGKILL to the command when etcdlock dies. The "parent" is the thread that forks: this is
/// called on the command line's one runtime thread, the main thread, which lives as long as the
/// process.
#[cfg(target_os = "linux")]
fn die_with_parent(c: &mut std::process::Command) {
    // SAFETY: getpid is async-signal-safe; the closure runs between fork and exec and makes
    // only async-signal-safe calls (prctl, getppid).
    let parent = unsafe { libc::getpid() };
    unsafe {
        c.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            // etcdlock died before the prctl: nothing would send the signal.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        })
    };
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_: &mut std::process::Command) {}

/// The process's one reaper thread, and the commands whose status it hands on.
struct Reaper {
    waiting: Mutex<Vec<(i32, watch::Sender<Option<i32>>)>>,
    /// Wakes the thread, idle with no child left, when a command starts.
    spawned: Condvar,
}

static REAPER: Reaper = Reaper { waiting: Mutex::new(Vec::new()), spawned: Condvar::new() };

/// The reaper, its thread started on first use (always from the runtime's one thread).
fn reaper() -> std::io::Result<&'static Reaper> {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if !STARTED.load(Ordering::Acquire) {
        std::thread::Builder::new().name("etcdlock-reaper".into()).spawn(|| reap(&REAPER))?;
        STARTED.store(true, Ordering::Release);
    }
    Ok(&REAPER)
}

/// Reaps every child, for ever, handing on the commands' statuses. A child's exit is seen
/// first without reaping it (WNOWAIT), then reaped under the lock that `spawn` holds: a command
/// whose exec failed is reaped by the standard library inside `spawn`, which must find it there.
fn reap(r: &'static Reaper) {
    loop {
        // SAFETY: waitid writes only the siginfo we own (all zeroes is a valid siginfo_t).
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let seen = unsafe { libc::waitid(libc::P_ALL, 0, &mut info, libc::WEXITED | libc::WNOWAIT) };
        let mut waiting = r.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if seen != 0 {
            // ECHILD: no child now; wait for the next command (unless one started since the
            // call). Anything else (EINTR): look again shortly.
            let pause = if waiting.is_empty() { Duration::from_secs(1) } else { Duration::from_millis(10) };
            drop(r.spawned.wait_timeout(waiting, pause));
            continue;
        }
        // SAFETY: the siginfo of a successful WEXITED waitid names the child.
        let pid = unsafe { info.si_pid() };
        let mut status = 0;
        // SAFETY: waitpid writes only the status we own. Already reaped (by `spawn`): ECHILD.
        if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
            if let Some(i) = waiting.iter().position(|(p, _)| *p == pid) {
                let _ = waiting.swap_remove(i).1.send(Some(status));
            }
        }
    }
}

#[cfg(target_os = "linux")]
fn become_subreaper() {
    // SAFETY: PR_SET_CHILD_SUBREAPER takes an integer and changes only this process's flag.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
}

#[cfg(not(target_os = "linux"))]
fn become_subreaper() {}

impl Child {
    /// The command's wait status, once it exited.
    pub async fn exited(&mut self) -> i32 {
        match self.status.wait_for(|s| s.is_some()).await {
            Ok(s) => s.expect("checked by wait_for"),
            // The reaper dropped it without a status: it cannot, but do not wait forever.
            Err(_) => 0,
        }
    }

    /// The group may run until `until` (the guardian kills it then, unless told a later moment).
    pub fn hold_until(&self, until: std::time::Instant) {
        self.guardian.hold_until(until);
    }

    /// The group is stopped or ended: the guardian leaves.
    pub fn unguard(&self) {
        self.guardian.done();
    }

    /// Sends `sig` to the command's whole process group.
    pub fn signal_group(&self, sig: i32) {
        // SAFETY: killpg only sends a signal. A group already gone (ESRCH) is fine.
        unsafe { libc::killpg(self.pid, sig) };
    }

    /// Whether any process is left in the command's group.
    pub fn group_alive(&self) -> bool {
        // SAFETY: signal 0 only checks that the group exists.
        unsafe { libc::killpg(self.pid, 0) == 0 }
    }

    /// Stops the whole group: SIGTERM, then SIGKILL at `kill_at` if anything is left (at once
    /// if that moment has come). Returns once the group is empty or SIGKILL was sent.
    pub async fn stop_group(&mut self, kill_at: Instant) {
        if Instant::now() < kill_at {
            self.signal_group(libc::SIGTERM);
            // A stopped process acts on SIGTERM only once continued.
            self.signal_group(libc::SIGCONT);
            while self.group_alive() && Instant::now() < kill_at {
                tokio::time::sleep(Duration::from_millis(20).min(kill_at - Instant::now())).await;
            }
        }
        if self.group_alive() {
            self.signal_group(libc::SIGKILL);
        }
    }
}

/// The shell's view of a wait status: the exit code, or 128 + the signal that ended it.
pub fn exit_of(status: i32) -> Exit {
    if libc::WIFEXITED(status) {
        Exit::ok(libc::WEXITSTATUS(status) as u8)
    } else if libc::WIFSIGNALED(status) {
        Exit::signal(libc::WTERMSIG(status))
    } else {
        Exit::ok(crate::exit::SOFTWARE)
    }
}
