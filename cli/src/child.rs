//! The command, in a process group of its own so that a loss or a signal reaches every process
//! it started (a `sh -c` grandchild included), and reaped by this process.
//!
//! On Linux this process becomes a child subreaper: the command's orphaned descendants are
//! reparented here rather than to init, and a thread reaps them, so that a group whose
//! processes all died is seen empty at once (init in a container may never reap them).
//!
//! What happens to etcdlock must not let the command outlive the lock: a [`Guardian`] kills the
//! group when etcdlock dies or stops renewing its word, and the command itself gets SIGKILL when
//! etcdlock dies (`PR_SET_PDEATHSIG`, for the moment before the guardian is there).

use crate::exit::{Exit, CANNOT_EXECUTE, NOT_FOUND, SOFTWARE};
use crate::guardian::Guardian;
use std::os::unix::process::CommandExt;
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
/// guardian, which lets the group run until `until` unless told a later moment.
pub fn spawn(cmd: &[String], shell: bool, env: &[(String, String)], until: std::time::Instant) -> Result<Child, Exit> {
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
    die_with_parent(&mut c);
    become_subreaper();
    let child = c.spawn().map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound { NOT_FOUND } else { CANNOT_EXECUTE };
        Exit::fail(code, format!("cannot run {:?}: {e}", cmd[0]))
    })?;
    let pid = child.id() as i32;
    // Never waited through `std::process::Child`: the reaper thread collects its status.
    drop(child);
    let (tx, status) = watch::channel(None);
    std::thread::Builder::new()
        .name("etcdlock-reaper".into())
        .spawn(move || reap(pid, tx))
        .map_err(|e| kill_at_once(pid, format!("cannot start the reaper thread: {e}")))?;
    let guardian = Guardian::start(pid, until).map_err(|e| kill_at_once(pid, format!("cannot start the guardian: {e}")))?;
    Ok(Child { pid, status, guardian })
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

/// Waits for any child until none is left, handing on the command's status.
fn reap(pid: i32, tx: watch::Sender<Option<i32>>) {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only the status we own.
        let reaped = unsafe { libc::waitpid(-1, &mut status, 0) };
        if reaped == pid {
            let _ = tx.send(Some(status));
        } else if reaped < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return; // ECHILD: nothing left to reap.
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
            // The reaper ended without its status: it cannot, but do not wait forever.
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
