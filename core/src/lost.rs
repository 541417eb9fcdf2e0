//! The "lost" signal of a lease or a held lock: fires once, with a reason, and never clears.

use tokio::sync::watch;

/// Why a lease or a lock is no longer held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LostReason {
    /// The local deadline passed without an acknowledged keepalive, or the server reported
    /// the lease gone (TTL <= 0). Another client may hold the lock now.
    Expired,
    /// The lease was revoked through this library.
    Revoked,
    /// The lock key was deleted (by an operator, or by a revoke from elsewhere).
    KeyDeleted,
    /// The client was closed.
    Closed,
}

impl LostReason {
    /// The lower-case name every binding uses: `expired`, `revoked`, `key_deleted`, `closed`.
    pub fn as_str(self) -> &'static str {
        match self {
            LostReason::Expired => "expired",
            LostReason::Revoked => "revoked",
            LostReason::KeyDeleted => "key_deleted",
            LostReason::Closed => "closed",
        }
    }
}

impl std::fmt::Display for LostReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The setter side. Only the first reason sticks.
#[derive(Debug)]
pub(crate) struct LostFlag(watch::Sender<Option<LostReason>>);

impl LostFlag {
    pub fn new() -> Self {
        LostFlag(watch::channel(None).0)
    }

    /// Records the loss; returns false if it was already lost.
    pub fn set(&self, reason: LostReason) -> bool {
        self.0.send_if_modified(|cur| {
            if cur.is_none() {
                *cur = Some(reason);
                true
            } else {
                false
            }
        })
    }

    pub fn reason(&self) -> Option<LostReason> {
        *self.0.borrow()
    }

    pub fn signal(&self) -> LostSignal {
        LostSignal(self.0.subscribe())
    }
}

/// An awaitable view of the loss. Cheap to clone.
#[derive(Debug, Clone)]
pub struct LostSignal(watch::Receiver<Option<LostReason>>);

impl LostSignal {
    /// The reason, if already lost.
    pub fn reason(&self) -> Option<LostReason> {
        *self.0.borrow()
    }

    /// Resolves once lost (at once if it already is). The future owns what it needs, so
    /// `guard.lost().wait()` can be awaited directly.
    pub fn wait(&self) -> impl std::future::Future<Output = LostReason> + Send + 'static {
        let mut rx = self.0.clone();
        async move {
            let r = rx.wait_for(|r| r.is_some()).await.map(|r| *r);
            match r {
                Ok(r) => r.expect("checked by wait_for"),
                // The owner is gone without saying why: whatever held it was closed.
                Err(_) => LostReason::Closed,
            }
        }
    }
}
