//! The one bridge from the core's `tracing` events (target `etcdlock`) to the language
//! bindings' log systems: Python's `logging`, Node's `diagnostics_channel`, a C callback.
//!
//! A binding registers a *sink* with [`add_sink`]; the first registration installs a small
//! `tracing` subscriber as this library copy's global default, which hands every `etcdlock`
//! event at or above a sink's level to that sink as a [`LogRecord`]: level, area (`lock`,
//! `lease`, `watch` or `connection`), message and structured fields. Rust programs never call
//! this: they install their own subscriber and get the events from `tracing` directly (a
//! subscriber already installed makes [`add_sink`] fail, and is left alone).
//!
//! Sinks run on the thread that emitted the event: one of the runtime's threads, or a caller's
//! thread inside a library call. They must not block, and must not call into the library: an
//! event may be emitted while the library holds one of its own locks. Events emitted by a
//! sink's own thread while it runs are dropped (no recursion), and a sink's panic is caught.
//! When [`remove_sink`] or [`set_level`] return, no call of the sink they changed is still in
//! progress with the old setting, so whatever the sink refers to may be freed.
//!
//! ```
//! use etcdlock::runtime::log::{add_sink, remove_sink, LogLevel};
//! use std::sync::Arc;
//! let id = add_sink(LogLevel::Warn, Arc::new(|r: &etcdlock::runtime::log::LogRecord| {
//!     eprintln!("{}", r.text()); // e.g. "lock lost: ... lock=jobs token=42 reason=key_deleted held_ms=1500"
//! }))?;
//! remove_sink(id)?;
//! # Ok::<(), etcdlock::Error>(())
//! ```

use crate::error::{Error, ErrorKind, Result};
use std::cell::Cell;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use tracing::field::{Field, Visit};

/// The target of every event the core emits.
pub const TARGET: &str = "etcdlock";

/// An event's severity, most severe first. The numbers are the C API's (`ETCDLOCK_LOG_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum LogLevel {
    /// Something failed and was not retried.
    Error = 1,
    /// A user may need to act: a lock lost, a lease expired, a watch ended, a key left behind.
    Warn = 2,
    /// A reconnection or a move to another member: the library coped.
    Info = 3,
    /// Each acquisition and release, token refreshes, background retries.
    Debug = 4,
    /// Finer detail (none emitted today).
    Trace = 5,
}

impl LogLevel {
    /// `"error"`, `"warn"`, `"info"`, `"debug"` or `"trace"`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }

    /// The level numbered `n` (1 = Error … 5 = Trace), or `None` for 0 (off) and above 5.
    pub fn from_number(n: i64) -> Option<LogLevel> {
        Some(match n {
            1 => LogLevel::Error,
            2 => LogLevel::Warn,
            3 => LogLevel::Info,
            4 => LogLevel::Debug,
            5 => LogLevel::Trace,
            _ => return None,
        })
    }

    fn of(level: &tracing::Level) -> LogLevel {
        match *level {
            tracing::Level::ERROR => LogLevel::Error,
            tracing::Level::WARN => LogLevel::Warn,
            tracing::Level::INFO => LogLevel::Info,
            tracing::Level::DEBUG => LogLevel::Debug,
            _ => LogLevel::Trace,
        }
    }
}

/// A field's value, typed where the event gave a number or a flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogValue {
    /// An unsigned number: a duration in milliseconds (`held_ms`), a count.
    U64(u64),
    /// A signed number: a fencing token, a revision (etcd's are signed 64-bit).
    I64(i64),
    /// A flag.
    Bool(bool),
    /// Text: a lock name, a lease ID in hex, a reason such as `key_deleted`, an error, or any
    /// other value as it prints, so that a sink never loses a field for its type.
    Str(String),
}

impl fmt::Display for LogValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogValue::U64(v) => write!(f, "{v}"),
            LogValue::I64(v) => write!(f, "{v}"),
            LogValue::Bool(v) => write!(f, "{v}"),
            LogValue::Str(v) => f.write_str(v),
        }
    }
}

/// One event, as a sink gets it.
#[derive(Debug, Clone)]
pub struct LogRecord {
    /// Its severity; a sink only gets events at or above the level it was registered with.
    pub level: LogLevel,
    /// What it is about: `"lock"`, `"lease"`, `"watch"` or `"connection"`.
    pub area: &'static str,
    /// The event's fixed message, e.g. `"lock lost: it may be held by another client now"`.
    pub message: String,
    /// Its structured fields in order, e.g. `lock`, `token`, `reason`, `held_ms`.
    pub fields: Vec<(&'static str, LogValue)>,
}

impl LogRecord {
    /// The message followed by `name=value` for each field: one line for plain-text logs.
    pub fn text(&self) -> String {
        let mut s = self.message.clone();
        for (k, v) in &self.fields {
            s.push_str(&format!(" {k}={v}"));
        }
        s
    }

    /// The value of field `name`.
    pub fn field(&self, name: &str) -> Option<&LogValue> {
        self.fields.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }
}

/// What [`add_sink`] returns, to change or remove that sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinkId(u64);

/// A sink: called with each record at or above its level.
pub type LogSink = Arc<dyn Fn(&LogRecord) + Send + Sync>;

struct Entry {
    id: u64,
    level: Option<LogLevel>,
    sink: LogSink,
}

static SINKS: RwLock<Vec<Entry>> = RwLock::new(Vec::new());
/// The most verbose level any sink wants (0: none), read on every event before anything else.
static MAX: AtomicU8 = AtomicU8::new(0);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread is running sinks: its own events are dropped, and sinks cannot be changed.
    static IN_SINK: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is running a sink now (where sinks cannot be changed).
pub fn in_sink() -> bool {
    IN_SINK.try_with(Cell::get).unwrap_or(true)
}

fn refused_in_sink() -> Error {
    Error::new(ErrorKind::WrongContext, "log sinks cannot be changed from inside a log sink")
}

fn recompute_max(sinks: &[Entry]) {
    let max = sinks.iter().filter_map(|e| e.level).max().map_or(0, |l| l as u8);
    MAX.store(max, Ordering::Release);
}

/// Registers `sink` for the events at `level` and above, and installs the bridge subscriber
/// on first use. Fails with `Internal` when another global `tracing` subscriber was installed
/// first (a Rust program's own: it gets the events), `WrongContext` inside a sink.
pub fn add_sink(level: LogLevel, sink: LogSink) -> Result<SinkId> {
    if in_sink() {
        return Err(refused_in_sink());
    }
    install()?;
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let mut sinks = SINKS.write().unwrap_or_else(|p| p.into_inner());
    sinks.push(Entry { id, level: Some(level), sink });
    recompute_max(&sinks);
    Ok(SinkId(id))
}

/// Changes a sink's level (`None`: it gets nothing, and stays registered).
pub fn set_level(id: SinkId, level: Option<LogLevel>) -> Result<()> {
    if in_sink() {
        return Err(refused_in_sink());
    }
    let mut sinks = SINKS.write().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = sinks.iter_mut().find(|e| e.id == id.0) {
        e.level = level;
    }
    recompute_max(&sinks);
    Ok(())
}

/// Unregisters a sink (removing one twice is no error).
pub fn remove_sink(id: SinkId) -> Result<()> {
    if in_sink() {
        return Err(refused_in_sink());
    }
    let mut sinks = SINKS.write().unwrap_or_else(|p| p.into_inner());
    sinks.retain(|e| e.id != id.0);
    recompute_max(&sinks);
    Ok(())
}

fn install() -> Result<()> {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    if *INSTALLED.get_or_init(|| tracing::subscriber::set_global_default(Bridge).is_ok()) {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::Internal, "another tracing subscriber is installed in this process: the etcdlock events go to it"))
    }
}

/// The area of an event, from the module that emitted it.
fn area(module: Option<&str>) -> &'static str {
    let m = module.unwrap_or("");
    let layer = m.strip_prefix("etcdlock::").unwrap_or(m).split("::").next().unwrap_or("");
    match layer {
        "sync" => "lock",
        "lease" => "lease",
        "watch" => "watch",
        _ => "connection",
    }
}

struct Fields {
    message: String,
    fields: Vec<(&'static str, LogValue)>,
}

impl Fields {
    fn push(&mut self, field: &Field, value: LogValue) {
        if field.name() == "message" {
            self.message = value.to_string();
        } else {
            self.fields.push((field.name(), value));
        }
    }
}

impl Visit for Fields {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.push(field, LogValue::U64(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.push(field, LogValue::I64(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.push(field, LogValue::Bool(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, LogValue::Str(value.to_string()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.push(field, LogValue::Str(format!("{value:?}")));
    }
}

/// The subscriber the first [`add_sink`] installs. It takes events only: the core's spans
/// (`sync/spans.rs`) are for an application's own subscriber, and cost nothing here.
struct Bridge;

impl tracing::Subscriber for Bridge {
    fn register_callsite(&self, meta: &'static tracing::Metadata<'static>) -> tracing::subscriber::Interest {
        if meta.target() == TARGET && meta.is_event() {
            tracing::subscriber::Interest::sometimes()
        } else {
            tracing::subscriber::Interest::never()
        }
    }
    fn enabled(&self, meta: &tracing::Metadata<'_>) -> bool {
        meta.target() == TARGET && (LogLevel::of(meta.level()) as u8) <= MAX.load(Ordering::Acquire)
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if in_sink() {
            return;
        }
        let meta = event.metadata();
        let mut f = Fields { message: String::new(), fields: Vec::new() };
        event.record(&mut f);
        let record = LogRecord { level: LogLevel::of(meta.level()), area: area(meta.module_path()), message: f.message, fields: f.fields };
        let sinks = SINKS.read().unwrap_or_else(|p| p.into_inner());
        let _ = IN_SINK.try_with(|c| c.set(true));
        for e in sinks.iter().filter(|e| e.level.is_some_and(|l| record.level <= l)) {
            let _ = catch_unwind(AssertUnwindSafe(|| (e.sink)(&record)));
        }
        let _ = IN_SINK.try_with(|c| c.set(false));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_follow_the_layers() {
        assert_eq!(area(Some("etcdlock::sync::guard")), "lock");
        assert_eq!(area(Some("etcdlock::lease::keepalive")), "lease");
        assert_eq!(area(Some("etcdlock::watch")), "watch");
        assert_eq!(area(Some("etcdlock::transport::paths")), "connection");
        assert_eq!(area(Some("etcdlock::client::call")), "connection");
    }

    #[test]
    fn text_is_the_message_then_the_fields() {
        let r = LogRecord {
            level: LogLevel::Warn,
            area: "lock",
            message: "lock lost".into(),
            fields: vec![("lock", LogValue::Str("jobs".into())), ("token", LogValue::U64(42))],
        };
        assert_eq!(r.text(), "lock lost lock=jobs token=42");
        assert_eq!(r.field("token"), Some(&LogValue::U64(42)));
    }
}
