//! The core's log records for SLF4J. A core sink only queues each record (sinks run on the
//! thread that emitted the event, maybe inside the library's own locks: no JNI call there);
//! one Java daemon thread (`io.etcdlock.Logging`) takes them with `logDrain` and hands each to
//! the logger `etcdlock` through `Logging.deliver`, called here on that thread.

use crate::boundary::{entry, JResult};
use etcdlock::runtime::log::{self as core_log, LogLevel, LogRecord, LogValue, SinkId};
use jni::objects::{JClass, JObject, JValue};
use jni::sys::{jint, jlong};
use jni::JNIEnv;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Records queued and not yet taken: past this many, new ones are dropped (a stalled logging
/// thread must not grow memory without bound), as the Python binding does.
const MAX_PENDING: usize = 10_000;

static QUEUE: Mutex<VecDeque<LogRecord>> = Mutex::new(VecDeque::new());
static READY: Condvar = Condvar::new();
static SINK: Mutex<Option<SinkId>> = Mutex::new(None);

fn queue(r: &LogRecord) {
    let mut q = QUEUE.lock().unwrap_or_else(|p| p.into_inner());
    if q.len() < MAX_PENDING {
        q.push_back(r.clone());
        READY.notify_one();
    }
}

/// Sends the core's records at `level` (1 = error ... 5 = trace) and above to the queue; 0
/// sends none. The first call registers the sink.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_logLevel<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, level: jint) {
    entry(&mut env, (), |_| {
        let level = LogLevel::from_number(level as i64);
        let mut sink = SINK.lock().unwrap_or_else(|p| p.into_inner());
        let id = match *sink {
            Some(id) => id,
            None => *sink.insert(core_log::add_sink(LogLevel::Error, Arc::new(queue))?),
        };
        core_log::set_level(id, level)?;
        Ok(())
    })
}

/// Waits up to `timeout_ms` for records, then hands each queued one to
/// `Logging.deliver(level, area, message, text, keys[], values[], kinds)`; how many.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_logDrain<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, timeout_ms: jlong) -> jint {
    entry(&mut env, 0, |env| {
        let taken: Vec<LogRecord> = {
            let q = QUEUE.lock().unwrap_or_else(|p| p.into_inner());
            let wait = Duration::from_millis(timeout_ms.max(0) as u64);
            let (mut q, _) = READY.wait_timeout_while(q, wait, |q| q.is_empty()).unwrap_or_else(|p| p.into_inner());
            q.drain(..).collect()
        };
        for r in &taken {
            env.with_local_frame(16, |env| deliver(env, r))?;
        }
        Ok(taken.len() as jint)
    })
}

fn deliver(env: &mut JNIEnv, r: &LogRecord) -> JResult<()> {
    let area = env.new_string(r.area)?;
    let message = env.new_string(&r.message)?;
    let text = env.new_string(r.text())?;
    let n = r.fields.len() as i32;
    let keys = env.new_object_array(n, "java/lang/String", JObject::null())?;
    let values = env.new_object_array(n, "java/lang/String", JObject::null())?;
    // 0 text, 1 signed, 2 unsigned, 3 flag: Java makes Long / Boolean of the text.
    let mut kinds = Vec::with_capacity(r.fields.len());
    for (i, (k, v)) in r.fields.iter().enumerate() {
        let k = env.new_string(k)?;
        env.set_object_array_element(&keys, i as i32, &k)?;
        let s = env.new_string(v.to_string())?;
        env.set_object_array_element(&values, i as i32, &s)?;
        env.delete_local_ref(k)?;
        env.delete_local_ref(s)?;
        kinds.push(match v {
            LogValue::Str(_) => 0i8,
            LogValue::I64(_) => 1,
            LogValue::U64(_) => 2,
            LogValue::Bool(_) => 3,
        });
    }
    let kinds_array = env.new_byte_array(n)?;
    env.set_byte_array_region(&kinds_array, 0, &kinds)?;
    env.call_static_method(
        "io/etcdlock/Logging",
        "deliver",
        "(ILjava/lang/String;Ljava/lang/String;Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/String;[B)V",
        &[
            JValue::Int(r.level as jint),
            JValue::Object(&area),
            JValue::Object(&message),
            JValue::Object(&text),
            JValue::Object(&keys),
            JValue::Object(&values),
            JValue::Object(&kinds_array),
        ],
    )?;
    Ok(())
}
