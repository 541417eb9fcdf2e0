//! The core's `tracing` spans (target `etcdlock`): one per acquire (the wait included), hold,
//! release, campaign, leadership, task claim and ack, and registration. Their names and fields
//! are stable, for dashboards and trace queries to rely on:
//!
//! | span | from … to | `etcdlock.outcome` |
//! |---|---|---|
//! | `etcdlock.acquire` | a lock's (semaphore's, rwlock side's) acquire call, wait included | `acquired`, `timeout`, `cancelled`, `error` |
//! | `etcdlock.hold` | the acquisition … its release, loss or drop | `released`, `lost`, `dropped` |
//! | `etcdlock.release` | a release call | `released`, `error` |
//! | `etcdlock.campaign` | an election's campaign call, wait included | as `etcdlock.acquire` |
//! | `etcdlock.lead` | winning … resigning, losing or dropping the leadership | as `etcdlock.hold` |
//! | `etcdlock.task.claim` | a task queue's claim call, wait included | as `etcdlock.acquire` |
//! | `etcdlock.task.ack` | a task's ack call | `acked`, `error` |
//! | `etcdlock.register` | a registry's register call | `registered`, `error` |
//!
//! A pool's acquire and a lock set's have the same `etcdlock.acquire`, `etcdlock.hold` and
//! `etcdlock.release` spans: a pool's `etcdlock.name` is the pool's name and `etcdlock.slots` the
//! slots held (comma-joined, once known); a lock set's `etcdlock.name` is its members' names,
//! comma-joined, in the set's order. Their fencing token is the acquisition's (the pool's queue
//! turn, the set's one revision). Their hold ends at release or drop, or when the lease they live
//! on is lost (`lost`, with its reason).
//!
//! Fields: `etcdlock.name` (the lock, election, queue or `<service>/<instance>` key),
//! `etcdlock.fencing_token` (once known), `etcdlock.outcome`, and `etcdlock.error_kind` (the
//! [`ErrorKind::code`], e.g. `LOCK_TIMEOUT`, when the outcome is `timeout`, `cancelled` or
//! `error`; `LOCK_LOST` for `lost`), and on a hold or leadership that was lost
//! `etcdlock.lost_reason` (the [`LostReason`], e.g. `key_deleted`, `revoked`). A task's
//! spans carry `etcdlock.task_id` too. In a wait's span (acquire, campaign, claim)
//! `timeout` covers a zero-timeout try that found the lock busy too (`WOULD_BLOCK`); other
//! spans say `error` for every error. Spans are at level INFO.
//!
//! A hold span is created when the acquire call returns, in the caller's current span (not
//! inside the acquire span, which has ended), and follows from the acquire span. It lives in the
//! guard's shared state and is ended (dropped) at release, loss or drop, so nothing a tracer
//! keeps outlives the hold. With no subscriber interested (every program without one, and the
//! bindings' log bridge, which takes events only), a span costs a check of its callsite.
//!
//! To OpenTelemetry, through the `tracing-opentelemetry` crate (not a dependency of this one;
//! any `tracing` subscriber gets the same spans):
//!
//! ```text
//! use tracing_subscriber::prelude::*;
//! let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
//!     .with_batch_exporter(opentelemetry_otlp::SpanExporter::builder().with_tonic().build()?)
//!     .build();
//! let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "my-service");
//! tracing_subscriber::registry()
//!     .with(tracing_subscriber::filter::Targets::new().with_target("etcdlock", tracing::Level::INFO))
//!     .with(tracing_opentelemetry::layer().with_tracer(tracer))
//!     .init();
//! // `etcdlock.hold` etc. are now OpenTelemetry spans; their fields are the spans' attributes.
//! ```
//!
//! The repository's `core/examples/opentelemetry.rs` runs this setup with the SDK's in-memory
//! exporter and checks the spans it reads back (the test command runs it).

use crate::error::{Error, ErrorKind};
use crate::lease::lost::LostReason;
use tracing::field::Empty;
use tracing::Span;

/// The span names, for filters and trace queries (the spans themselves name them literally, as
/// `tracing` needs).
/// An acquire call of a mutex, a semaphore or a read-write lock side, its wait included.
pub const ACQUIRE: &str = "etcdlock.acquire";
/// A held lock, from the acquisition to its release, loss or drop.
pub const HOLD: &str = "etcdlock.hold";
/// A release call.
pub const RELEASE: &str = "etcdlock.release";
/// An election's campaign call, its wait included.
pub const CAMPAIGN: &str = "etcdlock.campaign";
/// A leadership, from winning to resigning, losing or dropping it.
pub const LEAD: &str = "etcdlock.lead";
/// A task queue's claim call, its wait included.
pub const TASK_CLAIM: &str = "etcdlock.task.claim";
/// A task's ack call.
pub const TASK_ACK: &str = "etcdlock.task.ack";
/// A registry's register call.
pub const REGISTER: &str = "etcdlock.register";

/// What a lock acquisition is, for its spans' names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Traced {
    /// `etcdlock.acquire`, then `etcdlock.hold`.
    Lock,
    /// `etcdlock.campaign`, then `etcdlock.lead`.
    Campaign,
    /// No spans: a lock the library takes for itself (a task's claim, a queue's turn), inside
    /// a span of its own.
    Quiet,
}

/// The span of an acquisition's wait.
pub(crate) fn acquire(traced: Traced, name: &[u8]) -> Span {
    let name = String::from_utf8_lossy(name);
    match traced {
        Traced::Lock => tracing::info_span!(target: "etcdlock", "etcdlock.acquire", etcdlock.name = %name, etcdlock.fencing_token = Empty, etcdlock.outcome = Empty, etcdlock.error_kind = Empty),
        Traced::Campaign => tracing::info_span!(target: "etcdlock", "etcdlock.campaign", etcdlock.name = %name, etcdlock.fencing_token = Empty, etcdlock.outcome = Empty, etcdlock.error_kind = Empty),
        Traced::Quiet => Span::none(),
    }
}

/// The span of a hold that began with `token`, following from its acquisition's `waited`.
pub(crate) fn hold(traced: Traced, name: &[u8], token: i64, waited: &Span) -> Span {
    let name = String::from_utf8_lossy(name);
    let span = match traced {
        Traced::Lock => tracing::info_span!(target: "etcdlock", "etcdlock.hold", etcdlock.name = %name, etcdlock.fencing_token = token, etcdlock.outcome = Empty, etcdlock.error_kind = Empty, etcdlock.lost_reason = Empty),
        Traced::Campaign => tracing::info_span!(target: "etcdlock", "etcdlock.lead", etcdlock.name = %name, etcdlock.fencing_token = token, etcdlock.outcome = Empty, etcdlock.error_kind = Empty, etcdlock.lost_reason = Empty),
        Traced::Quiet => return Span::none(),
    };
    span.follows_from(waited);
    span
}

/// The span of a release call.
pub(crate) fn release(name: &[u8], token: i64) -> Span {
    tracing::info_span!(target: "etcdlock", "etcdlock.release", etcdlock.name = %String::from_utf8_lossy(name), etcdlock.fencing_token = token, etcdlock.outcome = Empty, etcdlock.error_kind = Empty)
}

/// The span of a task queue's claim call.
pub(crate) fn claim(queue: &[u8]) -> Span {
    tracing::info_span!(target: "etcdlock", "etcdlock.task.claim", etcdlock.name = %String::from_utf8_lossy(queue), etcdlock.task_id = Empty, etcdlock.fencing_token = Empty, etcdlock.outcome = Empty, etcdlock.error_kind = Empty)
}

/// The span of a task's ack call.
pub(crate) fn ack(queue: &[u8], id: &str, token: i64) -> Span {
    tracing::info_span!(target: "etcdlock", "etcdlock.task.ack", etcdlock.name = %String::from_utf8_lossy(queue), etcdlock.task_id = id, etcdlock.fencing_token = token, etcdlock.outcome = Empty, etcdlock.error_kind = Empty)
}

/// The span of a register call.
pub(crate) fn register(key: &[u8]) -> Span {
    tracing::info_span!(target: "etcdlock", "etcdlock.register", etcdlock.name = %String::from_utf8_lossy(key), etcdlock.outcome = Empty, etcdlock.error_kind = Empty)
}

/// The span of a pool's (`slots` recorded once known) or a lock set's acquire.
pub(crate) fn group_acquire(name: &str) -> Span {
    tracing::info_span!(target: "etcdlock", "etcdlock.acquire", etcdlock.name = name, etcdlock.slots = Empty, etcdlock.fencing_token = Empty, etcdlock.outcome = Empty, etcdlock.error_kind = Empty)
}

/// The hold span of a pool's holding (its `slots`) or a lock set's (`None`), following from
/// its acquire's `waited`.
pub(crate) fn group_hold(name: &str, slots: Option<&str>, token: i64, waited: &Span) -> Span {
    let span = tracing::info_span!(target: "etcdlock", "etcdlock.hold", etcdlock.name = name, etcdlock.slots = slots, etcdlock.fencing_token = token, etcdlock.outcome = Empty, etcdlock.error_kind = Empty, etcdlock.lost_reason = Empty);
    span.follows_from(waited);
    span
}

/// The span of a pool's or a lock set's release call.
pub(crate) fn group_release(name: &str, slots: Option<&str>, token: i64) -> Span {
    tracing::info_span!(target: "etcdlock", "etcdlock.release", etcdlock.name = name, etcdlock.slots = slots, etcdlock.fencing_token = token, etcdlock.outcome = Empty, etcdlock.error_kind = Empty)
}

/// A pool's or a lock set's open hold span: ended by [`LeaseHold::end`] (release), by its drop
/// (`dropped`), or by the loss of what it holds (a task waits for that signal, and stops when
/// the hold ends otherwise). Nothing at all when the span is disabled.
#[derive(Debug, Default)]
pub(crate) struct LeaseHold {
    span: std::sync::Arc<std::sync::Mutex<Option<Span>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl LeaseHold {
    /// Opens `span` until an end, or `lost` fires (then `lost`, with its reason).
    pub(crate) fn start(span: Span, lost: crate::lease::lost::LostSignal) -> LeaseHold {
        if span.is_disabled() {
            return LeaseHold::default();
        }
        if let Some(reason) = lost.reason() {
            end_lost(span, reason);
            return LeaseHold::default();
        }
        let cell = std::sync::Arc::new(std::sync::Mutex::new(Some(span)));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (c, wait) = (cell.clone(), lost.wait());
        crate::runtime::spawn(async move {
            tokio::select! {
                reason = wait => {
                    if let Some(s) = c.lock().unwrap_or_else(|e| e.into_inner()).take() {
                        end_lost(s, reason);
                    }
                }
                _ = stopped => {}
            }
        });
        LeaseHold { span: cell, stop: Some(stop) }
    }

    /// Ends the hold (if still open) with `outcome`; `lost` with its reason if it was lost by then.
    pub(crate) fn end(&self, outcome: &str, lost: Option<LostReason>) {
        let span = self.span.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(span) = span {
            match lost {
                Some(reason) => end_lost(span, reason),
                None => end_hold(span, outcome),
            }
        }
    }
}

impl Drop for LeaseHold {
    fn drop(&mut self) {
        self.end("dropped", None);
        drop(self.stop.take()); // the loss watcher ends
    }
}

/// Records a wait's result: `success` (`acquired`) and the token, or the error's outcome
/// (`timeout` for `LOCK_TIMEOUT` and `WOULD_BLOCK`).
pub(crate) fn waited<T>(span: &Span, r: &Result<T, Error>, success: &str, token: impl Fn(&T) -> Option<i64>) {
    if span.is_disabled() {
        return;
    }
    match r {
        Ok(v) => {
            span.record("etcdlock.outcome", success);
            if let Some(t) = token(v) {
                span.record("etcdlock.fencing_token", t);
            }
        }
        Err(e) => failed(span, e, true),
    }
}

/// Records a call's result: `success`, or the error's outcome and kind.
pub(crate) fn ended<T>(span: &Span, r: &Result<T, Error>, success: &str) {
    match r {
        Ok(_) => {
            span.record("etcdlock.outcome", success);
        }
        Err(e) => failed(span, e, false),
    }
}

/// Records `e`: its outcome (`timeout` for a `wait`, `cancelled` or `error`) and its kind.
fn failed(span: &Span, e: &Error, wait: bool) {
    let outcome = match e.kind() {
        ErrorKind::LockTimeout | ErrorKind::WouldBlock if wait => "timeout",
        ErrorKind::Cancelled => "cancelled",
        _ => "error",
    };
    span.record("etcdlock.outcome", outcome);
    span.record("etcdlock.error_kind", e.kind().code());
}

/// Ends a hold span: `released` or `dropped`.
pub(crate) fn end_hold(span: Span, outcome: &str) {
    span.record("etcdlock.outcome", outcome);
}

/// Ends a hold span lost for `reason`.
pub(crate) fn end_lost(span: Span, reason: LostReason) {
    span.record("etcdlock.outcome", "lost");
    span.record("etcdlock.error_kind", ErrorKind::LockLost.code());
    span.record("etcdlock.lost_reason", tracing::field::display(reason));
}
