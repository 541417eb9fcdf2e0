//! The core's log events for Node: one core sink hands each record to every JS environment
//! that called `initLog`, through a weak threadsafe function (never keeps the process alive),
//! so the JS callback (`log.js`) runs on that environment's thread and publishes it on
//! `diagnostics_channel` / `NODE_DEBUG=etcdlock`.

use etcdlock::runtime::log::{self as core_log, LogLevel, LogRecord, LogValue, SinkId};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use std::sync::{Arc, Mutex};

#[napi(object)]
pub struct LogField {
    pub key: String,
    /// The value as text (always set).
    pub text: String,
    /// Set for numbers that a JS number holds exactly.
    pub number: Option<f64>,
    /// Set for flags.
    pub flag: Option<bool>,
}

#[napi(object)]
pub struct LogEntry {
    /// 'error' | 'warn' | 'info' | 'debug' | 'trace'
    pub level: String,
    /// 'lock' | 'lease' | 'watch' | 'connection'
    pub area: String,
    pub message: String,
    /// The message, then `name=value` for each field.
    pub text: String,
    pub fields: Vec<LogField>,
}

pub type LogCallback = ThreadsafeFunction<LogEntry, Unknown<'static>, LogEntry, Status, false, true>;

struct Env {
    id: u32,
    cb: LogCallback,
    debug: bool,
}

struct State {
    envs: Vec<Env>,
    next: u32,
    sink: Option<SinkId>,
}

static STATE: Mutex<State> = Mutex::new(State { envs: Vec::new(), next: 1, sink: None });

fn entry(r: &LogRecord) -> LogEntry {
    let fields = r
        .fields
        .iter()
        .map(|(k, v)| {
            let (number, flag) = match v {
                LogValue::U64(n) if *n <= (1 << 53) => (Some(*n as f64), None),
                LogValue::I64(n) if n.unsigned_abs() <= (1 << 53) => (Some(*n as f64), None),
                LogValue::Bool(b) => (None, Some(*b)),
                _ => (None, None),
            };
            LogField { key: k.to_string(), text: v.to_string(), number, flag }
        })
        .collect();
    LogEntry { level: r.level.as_str().into(), area: r.area.into(), message: r.message.clone(), text: r.text(), fields }
}

fn deliver(r: &LogRecord) {
    let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
    // An environment that is gone (its thread ended) is dropped from the list.
    state.envs.retain(|e| {
        if r.level == LogLevel::Debug && !e.debug || r.level == LogLevel::Trace {
            return true;
        }
        e.cb.call(entry(r), ThreadsafeFunctionCallMode::NonBlocking) != Status::Closing
    });
}

/// Serialises level changes. Lock order: UPDATE, then STATE, released before the core's sink
/// list is written (a sink running `deliver` holds that list's read lock and takes STATE).
static UPDATE: Mutex<()> = Mutex::new(());

/// Info for every environment, Debug while one of them wants it (subscribers or NODE_DEBUG).
fn update_level(change: impl FnOnce(&mut State)) -> Result<()> {
    let _serial = UPDATE.lock().unwrap_or_else(|p| p.into_inner());
    let (sink, level) = {
        let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
        change(&mut state);
        let level = if state.envs.iter().any(|e| e.debug) { LogLevel::Debug } else { LogLevel::Info };
        (state.sink, level)
    };
    let sink = match sink {
        Some(id) => id,
        None => {
            let id = core_log::add_sink(level, Arc::new(deliver)).map_err(|e| Error::from_reason(e.to_string()))?;
            STATE.lock().unwrap_or_else(|p| p.into_inner()).sink = Some(id);
            id
        }
    };
    core_log::set_level(sink, Some(level)).map_err(|e| Error::from_reason(e.to_string()))
}

/// Sends this environment the core's events (WARN and INFO, DEBUG after `setLogDebug`);
/// returns its id for `setLogDebug`.
#[napi]
pub fn init_log(cb: LogCallback) -> Result<u32> {
    let mut id = 0;
    update_level(|state| {
        id = state.next;
        state.next += 1;
        state.envs.push(Env { id, cb, debug: false });
    })?;
    Ok(id)
}

/// Whether environment `id` wants DEBUG events (each acquisition and release).
#[napi]
pub fn set_log_debug(id: u32, on: bool) -> Result<()> {
    update_level(|state| {
        if let Some(e) = state.envs.iter_mut().find(|e| e.id == id) {
            e.debug = on;
        }
    })
}
