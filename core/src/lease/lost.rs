//! The "lost" signal of a lease or a held lock: fires once, with a reason, and never clears.

use std::sync::atomic::{fence, AtomicU8, Ordering};
use std::sync::OnceLock;
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
///
/// Reading it is one atomic load (guards and leases are checked on every call); the channel
/// behind [`LostSignal`] is made only when somebody asks for one, which most never do.
#[derive(Debug, Default)]
pub(crate) struct LostFlag {
    /// 0 while not lost, else 1 + the reason's index in [`REASONS`].
    code: AtomicU8,
    tx: OnceLock<watch::Sender<Option<LostReason>>>,
}

const REASONS: [LostReason; 4] = [LostReason::Expired, LostReason::Revoked, LostReason::KeyDeleted, LostReason::Closed];

impl LostFlag {
    pub fn new() -> Self {
        LostFlag::default()
    }

    /// Records the loss; returns false if it was already lost.
    pub fn set(&self, reason: LostReason) -> bool {
        self.set_and(reason, || {})
    }

    /// [`LostFlag::set`], running `first` when this is the loss, before anyone waiting for it
    /// hears of it (so that its log comes before whatever they do about it).
    pub fn set_and(&self, reason: LostReason, first: impl FnOnce()) -> bool {
        let code = REASONS.iter().position(|r| *r == reason).expect("every reason is listed") as u8 + 1;
        if self.code.compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            return false;
        }
        first();
        // Pairs with `signal`: either it sees the code, or this sees its channel.
        fence(Ordering::SeqCst);
        if let Some(tx) = self.tx.get() {
            publish(tx, reason);
        }
        true
    }

    pub fn reason(&self) -> Option<LostReason> {
        match self.code.load(Ordering::Acquire) {
            0 => None,
            c => Some(REASONS[c as usize - 1]),
        }
    }

    pub fn signal(&self) -> LostSignal {
        let tx = self.tx.get_or_init(|| watch::channel(self.reason()).0);
        fence(Ordering::SeqCst);
        if let Some(reason) = self.reason() {
            publish(tx, reason);
        }
        LostSignal(tx.subscribe())
    }
}

fn publish(tx: &watch::Sender<Option<LostReason>>, reason: LostReason) {
    tx.send_if_modified(|cur| {
        let first = cur.is_none();
        if first {
            *cur = Some(reason);
        }
        first
    });
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
