//! The guardian of the command's process group: a small process of its own that kills the whole
//! group when etcdlock can no longer vouch for the lock, whatever happens to etcdlock.
//!
//! etcdlock tells it, through a pipe, "the group may run until T" (T on CLOCK_BOOTTIME, which
//! counts a suspend) each time the lease's deadline moves. The guardian kills the group with
//! SIGKILL when the pipe closes (etcdlock died: kill -9, the OOM killer, a panic) or when T passes
//! with nothing newer (etcdlock stopped: SIGSTOP, a debugger, a frozen cgroup, Ctrl-Z past the
//! TTL), and leaves quietly when told the group is done. It is in a session of its own, out of
//! reach of the terminal's signals, and ignores the signals a user sends to end a process.
//!
//! It is forked, not executed: nothing to install beside the binary, and nothing to find at a
//! path. After a fork in a threaded process only async-signal-safe calls are allowed; the
//! guardian makes only those (sigaction, setsid, close, poll, read, clock_gettime, killpg,
//! _exit) and allocates nothing.

use std::io;
use std::time::{Duration, Instant};

/// How often the guardian looks at the clock while it waits: `poll`'s timeout does not count
/// a suspend, CLOCK_BOOTTIME does.
const CHECK_MS: i32 = 100;

/// The message that tells the guardian the group is done: it leaves without killing.
const DONE: u64 = 0;

pub struct Guardian {
    /// The write end of the pipe; the guardian holds the read end.
    fd: i32,
}

impl Guardian {
    /// Forks the guardian of process group `group`, allowed to run until `until`.
    pub fn start(group: i32, until: Instant) -> io::Result<Guardian> {
        let mut fds = [0i32; 2];
        // SAFETY: pipe2 writes two descriptors into the array we own.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let (read_end, write_end) = (fds[0], fds[1]);
        let first = boottime_ns_at(until);
        // SAFETY: the child runs only `guard`, which makes async-signal-safe calls and never
        // returns; the parent only closes its copy of the read end.
        match unsafe { libc::fork() } {
            -1 => {
                let e = io::Error::last_os_error();
                // SAFETY: closing the two descriptors made above.
                unsafe { (libc::close(read_end), libc::close(write_end)) };
                Err(e)
            }
            0 => unsafe { guard(read_end, write_end, group, first) },
            _ => {
                // SAFETY: the guardian has its copy; ours would keep the pipe open for ever.
                unsafe { libc::close(read_end) };
                Ok(Guardian { fd: write_end })
            }
        }
    }

    /// The group may run until `until`.
    pub fn hold_until(&self, until: Instant) {
        self.send(boottime_ns_at(until).max(1));
    }

    /// The group is done (stopped, or ended by itself): the guardian leaves without killing.
    pub fn done(&self) {
        self.send(DONE);
    }

    fn send(&self, message: u64) {
        let bytes = message.to_ne_bytes();
        // SAFETY: writes 8 bytes from a local array; a pipe takes them whole (under PIPE_BUF).
        // A guardian that is gone (EPIPE; Rust ignores SIGPIPE) leaves etcdlock's own stop.
        unsafe { libc::write(self.fd, bytes.as_ptr().cast(), bytes.len()) };
    }
}

impl Drop for Guardian {
    fn drop(&mut self) {
        // SAFETY: our descriptor, closed once.
        unsafe { libc::close(self.fd) };
    }
}

/// CLOCK_BOOTTIME now, in nanoseconds.
fn boottime_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec we pass (async-signal-safe).
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `at` (a monotonic instant) on CLOCK_BOOTTIME.
fn boottime_ns_at(at: Instant) -> u64 {
    let ahead = at.saturating_duration_since(Instant::now());
    boottime_ns() + ahead.as_nanos().min(Duration::from_secs(1 << 30).as_nanos()) as u64
}

/// The guardian's whole life, in the forked child.
unsafe fn guard(read_end: i32, write_end: i32, group: i32, mut until: u64) -> ! {
    libc::close(write_end);
    // Signals meant to end etcdlock or its command (a terminal's, a user's) are not for the
    // guardian: inherited handlers would write into etcdlock's signal pipe.
    for sig in [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGTSTP,
        libc::SIGTTIN,
        libc::SIGTTOU,
        libc::SIGPIPE,
        libc::SIGUSR1,
        libc::SIGUSR2,
    ] {
        libc::signal(sig, libc::SIG_IGN);
    }
    libc::setsid();
    loop {
        let now = boottime_ns();
        if now >= until {
            libc::killpg(group, libc::SIGKILL);
            libc::_exit(0);
        }
        let left_ms = ((until - now) / 1_000_000 + 1).min(CHECK_MS as u64) as i32;
        let mut pfd = libc::pollfd { fd: read_end, events: libc::POLLIN, revents: 0 };
        if libc::poll(&mut pfd, 1, left_ms) <= 0 {
            continue; // the timeout, or EINTR
        }
        let mut buf = [0u8; 8];
        match libc::read(read_end, buf.as_mut_ptr().cast(), buf.len()) {
            // etcdlock is gone: nobody keeps the lease alive, and nobody will stop the group.
            0 => {
                libc::killpg(group, libc::SIGKILL);
                libc::_exit(0);
            }
            8 => match u64::from_ne_bytes(buf) {
                DONE => libc::_exit(0),
                t => until = t,
            },
            _ => {} // EINTR (a short read cannot happen: every message is written whole)
        }
    }
}
