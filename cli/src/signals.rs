//! The signals that end `etcdlock` (SIGINT, SIGTERM, SIGHUP, SIGQUIT), caught from start to
//! end so that none of them kills it while a queue key or a command needs tidying up; and
//! SIGTSTP (Ctrl-Z), which stops the command's group before etcdlock stops itself.

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

pub struct Signals {
    rx: mpsc::UnboundedReceiver<i32>,
    /// The command's process group, stopped first on SIGTSTP.
    group: Option<i32>,
}

impl Signals {
    /// Catches the five signals from now on. Needs the tokio runtime.
    pub fn catch() -> std::io::Result<Signals> {
        let (tx, rx) = mpsc::unbounded_channel();
        for signo in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGTSTP] {
            let mut stream = signal(SignalKind::from_raw(signo))?;
            let tx = tx.clone();
            tokio::spawn(async move {
                while stream.recv().await.is_some() {
                    if tx.send(signo).is_err() {
                        return;
                    }
                }
            });
        }
        Ok(Signals { rx, group: None })
    }

    /// While `group` is set, SIGTSTP stops it before etcdlock, and `next` returns SIGCONT once
    /// etcdlock was continued: the group stays stopped until the caller continues it. A
    /// terminal's Ctrl-Z reaches only its foreground group, etcdlock's, not the command's.
    pub fn stop_first(&mut self, group: Option<i32>) {
        self.group = group;
    }

    /// The next signal's number (SIGINT, SIGTERM, SIGHUP, SIGQUIT; SIGCONT, see `stop_first`).
    /// SIGTSTP stops etcdlock here, as its default action would.
    pub async fn next(&mut self) -> i32 {
        loop {
            // The senders live as long as the runtime: `None` cannot come first.
            let sig = self.rx.recv().await.unwrap_or(libc::SIGTERM);
            if sig != libc::SIGTSTP {
                return sig;
            }
            // SAFETY: killpg and raise only send signals.
            if let Some(group) = self.group {
                unsafe { libc::killpg(group, libc::SIGSTOP) };
            }
            // Stops every thread of etcdlock until SIGCONT.
            unsafe { libc::raise(libc::SIGSTOP) };
            if self.group.is_some() {
                return libc::SIGCONT;
            }
        }
    }
}
