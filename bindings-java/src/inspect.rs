//! A lock's queue (core `Client::inspect`) and a client's metrics (core `Metrics::entries`), as
//! Java objects: `LockState`/`QueueEntry` made by their static factories, and the metrics fed
//! one entry at a time to a Java collector that builds the `Metrics` record by name.

use crate::boundary::{self, entry, JResult};
use crate::client::ClientHandle;
use etcdlock::{MetricValue, QueueEntry};
use jni::objects::{JClass, JObject, JObjectArray, JString, JValue};
use jni::sys::{jlong, jobject};
use jni::JNIEnv;

/// The queue of lock `name` as a `LockState` (one read at one revision, then the leases' TTLs).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_inspect<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, name: JString<'l>) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let client = boundary::handle::<ClientHandle>(h, "client")?.client.clone();
        let name = boundary::string(env, &name, "name")?;
        etcdlock::check_lock_name(name.as_bytes())?;
        let state = boundary::block(async move { client.inspect(name).await })?;
        let holders = entries(env, &state.holders)?;
        let waiters = entries(env, &state.waiters)?;
        let s = env
            .call_static_method(
                "io/etcdlock/LockState",
                "of",
                "([Lio/etcdlock/QueueEntry;[Lio/etcdlock/QueueEntry;J)Lio/etcdlock/LockState;",
                &[JValue::Object(&holders), JValue::Object(&waiters), JValue::Long(state.revision)],
            )?
            .l()?;
        Ok(s.into_raw())
    })
}

fn entries<'l>(env: &mut JNIEnv<'l>, list: &[QueueEntry]) -> JResult<JObjectArray<'l>> {
    let array = env.new_object_array(list.len() as i32, "io/etcdlock/QueueEntry", JObject::null())?;
    for (i, q) in list.iter().enumerate() {
        env.with_local_frame(8, |env| -> JResult<()> {
            let key = env.byte_array_from_slice(&q.key)?;
            let value = env.byte_array_from_slice(&q.value)?;
            let mode = env.new_string(&q.mode)?;
            let e = env
                .call_static_method(
                    "io/etcdlock/QueueEntry",
                    "of",
                    "([BJJJ[BLjava/lang/String;)Lio/etcdlock/QueueEntry;",
                    &[
                        JValue::Object(&key),
                        JValue::Long(q.fencing_token),
                        JValue::Long(q.lease),
                        // -1: the lease is gone (the core's None).
                        JValue::Long(q.ttl.unwrap_or(-1)),
                        JValue::Object(&value),
                        JValue::Object(&mode),
                    ],
                )?
                .l()?;
            env.set_object_array_element(&array, i as i32, e)?;
            Ok(())
        })?;
    }
    Ok(array)
}

/// Feeds the client's metrics to `sink` (an `io.etcdlock.Metrics.Collector`), one call per
/// value: `counter(name, n)`, `gauge(name, n)`, `labeled(name, label, n)` per label value,
/// `histogram(name, count, sum, bounds[], cumulative counts[])`. Reads memory, sends nothing.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_clientMetrics<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, sink: JObject<'l>) {
    entry(&mut env, (), |env| {
        let metrics = boundary::handle::<ClientHandle>(h, "client")?.client.metrics();
        if sink.is_null() {
            return Err(boundary::invalid("sink must not be null"));
        }
        for e in metrics.entries() {
            env.with_local_frame(12, |env| -> JResult<()> {
                let name = env.new_string(e.name)?;
                // The family as Prometheus names it (MetricFamily, for the Micrometer binder).
                let (kind, label) = match e.value {
                    MetricValue::Counter(_) => ("counter", None),
                    MetricValue::Gauge(_) => ("gauge", None),
                    MetricValue::Labeled { label, .. } => ("counter", Some(label)),
                    MetricValue::Histogram(_) => ("histogram", None),
                };
                let prometheus = env.new_string(format!("etcdlock_{}", e.prometheus))?;
                let help = env.new_string(e.help)?;
                let kind = env.new_string(kind)?;
                let label = match label {
                    Some(l) => env.new_string(l)?.into(),
                    None => JObject::null(),
                };
                let args = [JValue::Object(&name), JValue::Object(&prometheus), JValue::Object(&help), JValue::Object(&kind), JValue::Object(&label)];
                env.call_method(&sink, "describe", "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)V", &args)?;
                match e.value {
                    MetricValue::Counter(n) => {
                        env.call_method(&sink, "counter", "(Ljava/lang/String;J)V", &[JValue::Object(&name), JValue::Long(n as i64)])?;
                    }
                    MetricValue::Gauge(n) => {
                        env.call_method(&sink, "gauge", "(Ljava/lang/String;J)V", &[JValue::Object(&name), JValue::Long(n)])?;
                    }
                    MetricValue::Labeled { values, .. } => {
                        for (label, n) in values {
                            let label = env.new_string(label)?;
                            let args = [JValue::Object(&name), JValue::Object(&label), JValue::Long(*n as i64)];
                            env.call_method(&sink, "labeled", "(Ljava/lang/String;Ljava/lang/String;J)V", &args)?;
                            env.delete_local_ref(label)?;
                        }
                    }
                    MetricValue::Histogram(hist) => {
                        let bounds: Vec<f64> = hist.buckets.iter().map(|(le, _)| *le).collect();
                        let counts: Vec<i64> = hist.buckets.iter().map(|(_, n)| *n as i64).collect();
                        let b = env.new_double_array(bounds.len() as i32)?;
                        env.set_double_array_region(&b, 0, &bounds)?;
                        let c = env.new_long_array(counts.len() as i32)?;
                        env.set_long_array_region(&c, 0, &counts)?;
                        let args = [JValue::Object(&name), JValue::Long(hist.count as i64), JValue::Double(hist.sum), JValue::Object(&b), JValue::Object(&c)];
                        env.call_method(&sink, "histogram", "(Ljava/lang/String;JD[D[J)V", &args)?;
                    }
                }
                Ok(())
            })?;
        }
        Ok(())
    })
}
