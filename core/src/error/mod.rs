//! The one error type every binding maps: a small, closed set of kinds plus a message.

pub(crate) mod fate;

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
    /// A request's deadline passed before etcd answered (`request_timeout`, or the deadline
    /// a call was given): the request may or may not have been applied.
    Timeout,
    /// The lock was not acquired within the timeout the caller gave the acquire.
    LockTimeout,
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
            ErrorKind::Timeout => "TIMEOUT",
            ErrorKind::LockTimeout => "LOCK_TIMEOUT",
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
    /// An error of `kind` with `message`. The library makes its own; this is for code that
    /// wraps etcdlock and wants to return the same type (a binding, a test double of its own
    /// caller), e.g. `Error::new(ErrorKind::InvalidArgument, "lock name is empty")`.
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

    /// What went wrong, to branch on (retry on [`ErrorKind::Unavailable`], stop writing on
    /// [`ErrorKind::LockLost`], ...). The message is for people; match on this instead.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The human-readable detail, without the kind's code that [`Display`](fmt::Display)
    /// puts in front (`"LOCK_LOST: ..."`). etcd's own words are kept in it (prefixed
    /// `etcd: `) when the error came from the server. Not stable: do not parse it.
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
        etcd_says(&self.message) == Some(Says::StaleToken)
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

/// Whether etcd refused a request for the user's credentials or permissions (not for a stale
/// token, which a refresh cures).
pub(crate) fn denied(e: &etcd_client::Error) -> bool {
    let e = convert(e);
    e.kind() == ErrorKind::Auth && !e.is_stale_token()
}

/// Whether a request that failed this way may still have been applied (its reply was lost).
pub(crate) fn may_have_applied(e: &etcd_client::Error) -> bool {
    !convert(e).is_unsent()
}

/// What an answer of etcd's means beyond its gRPC code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Says {
    /// The auth token expired, or predates a change of users or roles: nothing was done.
    StaleToken,
    /// A wrong user or password, or a permission the user lacks.
    Auth,
    /// The requested revision is no longer in etcd's history.
    Compacted,
    /// The member knows no leader; etcd answers so before the request reaches its handler, so
    /// nothing was proposed.
    NoLeader,
    /// Raft refused the proposal (e.g. while leadership moves to another member): it never
    /// entered the log, so it cannot be applied.
    ProposalDropped,
    /// A lease of the requested ID exists already.
    LeaseExists,
    /// No lease of the requested ID (anymore).
    LeaseNotFound,
}

/// etcd's answers that its gRPC code does not tell apart, by the description etcd gives them
/// (the strings etcd's own Go client compares, `rpctypes.ErrorDesc`, mostly without their
/// "etcdserver: " prefix, which a watch's cancel reason may not carry), and all etcd gives a
/// watch's cancel reason, which has no code. Every string match on an answer of etcd's is here.
const ETCD_SAYS: [(&str, Says); 12] = [
    ("invalid auth token", Says::StaleToken),
    ("revision of auth store is old", Says::StaleToken),
    ("revision in header is old", Says::StaleToken),
    ("authentication failed", Says::Auth),
    ("permission denied", Says::Auth),
    ("user name is empty", Says::Auth),
    ("user name not found", Says::Auth),
    ("required revision has been compacted", Says::Compacted),
    ("etcdserver: no leader", Says::NoLeader),
    ("raft proposal dropped", Says::ProposalDropped),
    ("lease already exists", Says::LeaseExists),
    ("lease not found", Says::LeaseNotFound),
];

/// What `message` (an error's, or a watch's cancel reason) says, per [`ETCD_SAYS`].
pub(crate) fn etcd_says(message: &str) -> Option<Says> {
    ETCD_SAYS.iter().find(|(m, _)| message.contains(m)).map(|(_, says)| *says)
}

/// What a failed connection attempt reports: a timeout there means etcd could not be reached.
pub(crate) fn unreachable(e: Error) -> Error {
    match e.kind() {
        ErrorKind::Timeout | ErrorKind::Unavailable => {
            Error::new(ErrorKind::Unavailable, format!("cannot reach etcd: {}", e.message()))
        }
        _ => e,
    }
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

/// Whether an Unavailable answer says that the request was not applied and never will be: the
/// KV channel marks a request that never left ([`crate::error::fate`]), tonic's channel (the
/// streams') fails a call that way with these words before anything is written, and a member
/// that knows no leader says so before the request reaches its handler. etcd's handlers report
/// a proposal that failed otherwise ("leader changed", "request timed out"), and those may still
/// be applied.
fn never_proposed(status: &tonic::Status) -> bool {
    const TONIC_UNSENT: [&str; 2] = ["tcp connect error", "error trying to connect"];
    crate::error::fate::of(status).unsent()
        || TONIC_UNSENT.iter().any(|m| status.message().contains(m))
        || matches!(etcd_says(status.message()), Some(Says::NoLeader | Says::ProposalDropped))
}

fn from_status(status: &tonic::Status) -> Error {
    use tonic::Code;
    let msg = format!("etcd: {}", status.message());
    let says = etcd_says(status.message());
    // etcd reports some auth failures as InvalidArgument or FailedPrecondition.
    if matches!(says, Some(Says::Auth | Says::StaleToken)) {
        return Error::new(ErrorKind::Auth, msg);
    }
    match status.code() {
        // etcd answers "leader changed", "no leader" and "request timed out" with Unavailable;
        // connection failures surface as Unavailable or Unknown from the transport.
        Code::Unavailable | Code::Aborted | Code::ResourceExhausted | Code::Unknown => {
            let mut e = Error::new(ErrorKind::Unavailable, msg);
            e.unsent = never_proposed(status);
            e.permanent = crate::error::fate::of(status).permanent();
            e
        }
        Code::DeadlineExceeded => Error::new(ErrorKind::Timeout, msg),
        Code::Cancelled => Error::new(ErrorKind::Unavailable, msg),
        Code::Unauthenticated | Code::PermissionDenied => Error::new(ErrorKind::Auth, msg),
        Code::OutOfRange if says == Some(Says::Compacted) => Error::new(ErrorKind::Compacted, msg),
        Code::InvalidArgument | Code::OutOfRange | Code::FailedPrecondition => Error::invalid(msg),
        // etcd's only NotFound is "lease not found": whatever used the lease has lost it.
        Code::NotFound => Error::new(ErrorKind::LockLost, msg),
        _ => Error::new(ErrorKind::Internal, msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::{Code, Status};

    fn unavailable(message: &str) -> etcd_client::Error {
        etcd_client::Error::GRpcStatus(tonic::Status::unavailable(message))
    }

    fn kind(code: Code, message: &str) -> ErrorKind {
        Error::from(etcd_client::Error::GRpcStatus(Status::new(code, message))).kind()
    }

    #[test]
    fn etcds_answers_map_by_code_and_description() {
        // With the codes etcd sends them (etcd's api/v3rpc/rpctypes).
        let cases = [
            (Code::Unauthenticated, "etcdserver: invalid auth token", ErrorKind::Auth),
            (Code::InvalidArgument, "etcdserver: revision of auth store is old", ErrorKind::Auth),
            (Code::InvalidArgument, "etcdserver: authentication failed, invalid user ID or password", ErrorKind::Auth),
            (Code::PermissionDenied, "etcdserver: permission denied", ErrorKind::Auth),
            (Code::InvalidArgument, "etcdserver: user name is empty", ErrorKind::Auth),
            (Code::FailedPrecondition, "etcdserver: user name not found", ErrorKind::Auth),
            (Code::OutOfRange, "etcdserver: mvcc: required revision has been compacted", ErrorKind::Compacted),
            (Code::Unavailable, "etcdserver: no leader", ErrorKind::Unavailable),
            (Code::FailedPrecondition, "etcdserver: lease already exists", ErrorKind::InvalidArgument),
            (Code::NotFound, "etcdserver: requested lease not found", ErrorKind::LockLost),
            (Code::DeadlineExceeded, "context deadline exceeded", ErrorKind::Timeout),
            (Code::InvalidArgument, "etcdserver: key is not provided", ErrorKind::InvalidArgument),
        ];
        for (code, message, expected) in cases {
            assert_eq!(kind(code, message), expected, "{message}");
        }
        // Every entry of the table is reached by its own string.
        for (message, says) in ETCD_SAYS {
            assert_eq!(etcd_says(message), Some(says), "{message}");
        }
        assert!(Error::new(ErrorKind::Auth, "etcdserver: invalid auth token").is_stale_token());
        assert!(!Error::new(ErrorKind::Auth, "etcdserver: permission denied").is_stale_token());
    }

    #[test]
    fn the_kv_channels_marks_say_unsent_and_permanent() {
        use crate::error::fate::{self, Fate};
        let unsent = Error::from(etcd_client::Error::GRpcStatus(fate::status(Fate::Unsent, "no connection")));
        assert!(unsent.is_unsent() && unsent.is_transient());
        let tls = Error::from(etcd_client::Error::GRpcStatus(fate::status(Fate::UnsentForGood, "bad certificate")));
        assert!(tls.is_unsent() && !tls.is_transient());
        // Unmarked, with words that once meant either: neither.
        let plain = Error::from(unavailable("TLS handshake failed: etcd connection failed"));
        assert!(!plain.is_unsent() && plain.is_transient());
    }

    #[test]
    fn no_leader_was_never_proposed_and_may_be_sent_again() {
        let e = Error::from(unavailable("etcdserver: no leader"));
        assert_eq!(e.kind(), ErrorKind::Unavailable);
        assert!(e.is_unsent());
        assert!(!may_have_applied(&unavailable("etcdserver: no leader")));
    }

    #[test]
    fn a_dropped_proposal_was_never_applied_and_may_be_sent_again() {
        // etcd's ErrGRPCProposalDropped carries gRPC code Unknown.
        let dropped = || etcd_client::Error::GRpcStatus(tonic::Status::new(tonic::Code::Unknown, "etcdserver: raft proposal dropped"));
        let e = Error::from(dropped());
        assert_eq!(e.kind(), ErrorKind::Unavailable);
        assert!(e.is_unsent() && e.is_transient());
        assert!(!may_have_applied(&dropped()));
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
