//! The signals that end `etcdlock` (SIGINT, SIGTERM, SIGHUP, SIGQUIT), caught from start to
//! end so that none of them kills it while a queue key or a command needs tidying up.

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

pub struct Signals {
    rx: mpsc::UnboundedReceiver<i32>,
}

impl Signals {
    /// Catches the four signals from now on. Needs the tokio runtime.
    pub fn catch() -> std::io::Result<Signals> {
        let (tx, rx) = mpsc::unbounded_channel();
        for signo in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
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
        Ok(Signals { rx })
    }

    /// The next signal's number.
    pub async fn next(&mut self) -> i32 {
        // The senders live as long as the runtime: `None` cannot come first.
        self.rx.recv().await.unwrap_or(libc::SIGTERM)
    }
}
