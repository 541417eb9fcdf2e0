//! The core's log events for Python's `logging`: a core sink queues each record on the
//! process's callback-thread bridge (id 0), and that Python thread hands it to the logger
//! `etcdlock` (`_log.py`). No runtime thread ever waits for the GIL.

use crate::bridge::Bridge;
use etcdlock::runtime::log::{self as core_log, LogLevel, LogRecord, LogValue, SinkId};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Records queued and not yet handed to Python: past this many, new ones are dropped (a
/// stalled callback thread must not grow memory without bound).
const MAX_PENDING: usize = 10_000;

static PENDING: AtomicUsize = AtomicUsize::new(0);
static CURRENT: Mutex<Option<SinkId>> = Mutex::new(None);

/// `(python level, area, message, text, fields)`, built on the Python thread.
fn convert(r: LogRecord) -> crate::op::Convert {
    Box::new(move |py| {
        PENDING.fetch_sub(1, Ordering::Relaxed);
        let fields = PyDict::new(py);
        for (k, v) in &r.fields {
            match v {
                LogValue::U64(n) => fields.set_item(*k, *n)?,
                LogValue::I64(n) => fields.set_item(*k, *n)?,
                LogValue::Bool(b) => fields.set_item(*k, *b)?,
                LogValue::Str(s) => fields.set_item(*k, s)?,
            }
        }
        let level = match r.level {
            LogLevel::Error => 40,
            LogLevel::Warn => 30,
            LogLevel::Info => 20,
            LogLevel::Debug => 10,
            LogLevel::Trace => 5,
        };
        Ok((level, r.area, r.message.clone(), r.text(), fields).into_pyobject(py)?.into_any().unbind())
    })
}

fn level_of(n: i64) -> Option<LogLevel> {
    LogLevel::from_number(n)
}

/// Sends the core's events at `level` (1 = error ... 5 = trace, 0 = none) and above to
/// `bridge` as outcomes with id 0, replacing an earlier registration (after a fork).
#[pyfunction]
pub fn _log_start(bridge: &Bridge, level: i64) -> PyResult<()> {
    let mut current = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(id) = current.take() {
        let _ = core_log::remove_sink(id);
    }
    let shared = bridge.sink_factory();
    let sink = Arc::new(move |r: &LogRecord| {
        if PENDING.fetch_add(1, Ordering::Relaxed) >= MAX_PENDING {
            PENDING.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        shared(0).send(Ok(convert(r.clone())));
    });
    let id = core_log::add_sink(LogLevel::Error, sink).map_err(crate::errors::to_py)?;
    core_log::set_level(id, level_of(level)).map_err(crate::errors::to_py)?;
    *current = Some(id);
    Ok(())
}

/// The most verbose level the logger `etcdlock` wants now (0: none).
#[pyfunction]
pub fn _log_level(level: i64) -> PyResult<()> {
    if let Some(id) = *CURRENT.lock().unwrap_or_else(|p| p.into_inner()) {
        core_log::set_level(id, level_of(level)).map_err(crate::errors::to_py)?;
    }
    Ok(())
}
