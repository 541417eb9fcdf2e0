//! The one error type every binding maps: a small, closed set of kinds plus a message.

use std::fmt;

/// What went wrong, as a small closed set shared by every binding (Python exception classes,
/// Node `err.code`, C status codes). New variants are a breaking change: keep the set stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bad input, rejected before anything was sent.
    InvalidArgument,
    /// etcd could not be reached (or had no leader) before the deadline.
    Unavailable,
    /// The caller's deadline passed.
    Timeout,
    /// A try-once acquire found the lock held or queued.
    WouldBlock,
    /// The lease (or the lock key) was lost: the lock is not, or no longer, held.
    LockLost,
    /// The operation needs a held lock and it is not held (never was, released, or lost).
    NotHeld,
    /// The watch's start revision was compacted away; see [`Error::compact_revision`].
    Compacted,
    /// The caller cancelled the operation.
    Cancelled,
    /// The client (or the object's owner) was closed.
    Closed,
    /// Authentication or permission failure.
    Auth,
    /// Called from a context that would deadlock (inside the library runtime) or from a
    /// forked child on an object its parent created.
    WrongContext,
    /// A bug or an unexpected server answer.
    Internal,
}

impl ErrorKind {
    /// A stable, upper-snake-case name (used as Node's `err.code`).
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "INVALID_ARGUMENT",
            ErrorKind::Unavailable => "UNAVAILABLE",
            ErrorKind::Timeout => "LOCK_TIMEOUT",
            ErrorKind::WouldBlock => "WOULD_BLOCK",
            ErrorKind::LockLost => "LOCK_LOST",
            ErrorKind::NotHeld => "NOT_HELD",
            ErrorKind::Compacted => "COMPACTED",
            ErrorKind::Cancelled => "CANCELLED",
            ErrorKind::Closed => "CLOSED",
            ErrorKind::Auth => "AUTH",
            ErrorKind::WrongContext => "WRONG_CONTEXT",
            ErrorKind::Internal => "INTERNAL",
        }
    }
}

/// The error returned by every fallible etcdlock call.
#[derive(Debug, Clone)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    compact_revision: Option<i64>,
    /// The request never left this process (no connection could be made), so even a
    /// non-idempotent request may be sent again.
    unsent: bool,
    /// Sending again cannot help (the member's TLS certificate was not accepted).
    permanent: bool,
}

/// Shorthand used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), compact_revision: None, unsent: false, permanent: false }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    pub(crate) fn compacted(compact_revision: i64) -> Self {
        Error {
            kind: ErrorKind::Compacted,
            message: format!(
                "requested revision was compacted; history starts at revision {compact_revision}"
            ),
            compact_revision: Some(compact_revision),
            unsent: false,
            permanent: false,
        }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// For [`ErrorKind::Compacted`]: the oldest revision the server still has.
    pub fn compact_revision(&self) -> Option<i64> {
        self.compact_revision
    }

    /// Whether etcd refused the request's auth token as expired or older than a change of users
    /// or roles: it did nothing, and a new token may succeed.
    pub(crate) fn is_stale_token(&self) -> bool {
        const STALE: [&str; 3] = ["invalid auth token", "revision of auth store is old", "revision in header is old"];
        STALE.iter().any(|m| self.message.contains(m))
    }

    /// The same failure, to be sent again at once: nothing was done, and the token is new.
    pub(crate) fn resend(mut self) -> Error {
        self.kind = ErrorKind::Unavailable;
        self.unsent = true;
        self.permanent = false;
        self
    }

    /// Whether retrying the same idempotent request may succeed.
    pub(crate) fn is_transient(&self) -> bool {
        self.kind == ErrorKind::Unavailable && !self.permanent
    }

    /// Whether etcd did not answer (in time): the same request may work later.
    pub(crate) fn is_unreachable(&self) -> bool {
        matches!(self.kind, ErrorKind::Unavailable | ErrorKind::Timeout)
    }

    /// Whether the request certainly never reached a server (safe to send again even when
    /// it is not idempotent).
    pub(crate) fn is_unsent(&self) -> bool {
        self.unsent
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message)
    }
}

impl std::error::Error for Error {}

impl From<etcd_client::Error> for Error {
    fn from(e: etcd_client::Error) -> Self {
        convert(&e)
    }
}

/// Whether etcd refused a request (or a stream) for a stale auth token ([`Error::is_stale_token`]).
pub(crate) fn stale_token(e: &etcd_client::Error) -> bool {
    convert(e).is_stale_token()
}

/// Whether a request that failed this way may still have been applied (its reply was lost).
pub(crate) fn may_have_applied(e: &etcd_client::Error) -> bool {
    !convert(e).is_unsent()
}

fn convert(e: &etcd_client::Error) -> Error {
    use etcd_client::Error as E;
    match e {
        E::GRpcStatus(status) => from_status(status),
        E::TransportError(_) | E::IoError(_) => Error::new(ErrorKind::Unavailable, format!("etcd unreachable: {e}")),
        E::InvalidArgs(_) | E::InvalidUri(_) | E::InvalidMetadataValue(_) => Error::invalid(e.to_string()),
        E::WatchError(_) | E::LeaseKeepAliveError(_) => Error::new(ErrorKind::Unavailable, format!("stream failed: {e}")),
        _ => Error::new(ErrorKind::Internal, e.to_string()),
    }
}

/// Whether an Unavailable answer says that the request was not applied and never will be.
/// A channel that could not connect fails the call before anything is written to the wire
/// (tonic's words, which the KV channel uses too). "no leader" is what etcd's interceptor
/// answers a request carrying `hasleader` (every one of ours) when the member knows no leader,
/// before the request reaches its handler, so nothing was proposed; etcd's handlers report a
/// proposal that failed otherwise ("leader changed", "request timed out"), and those may still
/// be applied.
fn never_proposed(status: &tonic::Status) -> bool {
    let m = status.message();
    m.contains("tcp connect error") || m.contains("error trying to connect") || m == "etcdserver: no leader"
}

fn from_status(status: &tonic::Status) -> Error {
    use tonic::Code;
    let msg = format!("etcd: {}", status.message());
    // etcd reports some auth failures as InvalidArgument or FailedPrecondition.
    const AUTH: [&str; 5] = ["authentication failed", "permission denied", "user name is empty", "invalid auth token", "user name not found"];
    if AUTH.iter().any(|m| status.message().contains(m)) {
        return Error::new(ErrorKind::Auth, msg);
    }
    match status.code() {
        // etcd answers "leader changed", "no leader" and "request timed out" with Unavailable;
        // connection failures surface as Unavailable or Unknown from the transport.
        Code::Unavailable | Code::Aborted | Code::ResourceExhausted | Code::Unknown => {
            let mut e = Error::new(ErrorKind::Unavailable, msg);
            e.unsent = never_proposed(status);
            // The KV channel's words for a TLS failure (h2_channel/conn.rs).
            e.permanent = status.message().contains("TLS: ") || status.message().contains("TLS handshake failed");
            e
        }
        Code::DeadlineExceeded => Error::new(ErrorKind::Timeout, msg),
        Code::Cancelled => Error::new(ErrorKind::Unavailable, msg),
        Code::Unauthenticated | Code::PermissionDenied => Error::new(ErrorKind::Auth, msg),
        Code::InvalidArgument | Code::OutOfRange | Code::FailedPrecondition => {
            if status.message().contains("compacted") {
                Error::new(ErrorKind::Compacted, msg)
            } else {
                Error::invalid(msg)
            }
        }
        // etcd's only NotFound is "lease not found": whatever used the lease has lost it.
        Code::NotFound => Error::new(ErrorKind::LockLost, msg),
        _ => Error::new(ErrorKind::Internal, msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unavailable(message: &str) -> etcd_client::Error {
        etcd_client::Error::GRpcStatus(tonic::Status::unavailable(message))
    }

    #[test]
    fn no_leader_was_never_proposed_and_may_be_sent_again() {
        let e = Error::from(unavailable("etcdserver: no leader"));
        assert_eq!(e.kind(), ErrorKind::Unavailable);
        assert!(e.is_unsent());
        assert!(!may_have_applied(&unavailable("etcdserver: no leader")));
    }

    #[test]
    fn failures_after_a_proposal_may_have_applied() {
        for m in ["etcdserver: leader changed", "etcdserver: request timed out", "etcdserver: request timed out, possibly due to previous leader failure", "etcd connection failed: broken pipe"] {
            assert!(may_have_applied(&unavailable(m)), "{m}");
            assert!(!Error::from(unavailable(m)).is_unsent(), "{m}");
        }
        assert!(!may_have_applied(&unavailable("tcp connect error: refused")));
    }
}
