//! A core `Health` as the immutable `io.etcdlock.Health` every holding's `health()` returns.

use crate::boundary::JResult;
use etcdlock::Health;
use jni::objects::{JObject, JValue};
use jni::sys::jobject;
use jni::JNIEnv;

/// `Health.of(state, lostReason or null, name, fencingToken, leaseId, exclusiveForMs or -1, ok)`.
pub(crate) fn to_java(env: &mut JNIEnv, h: Health) -> JResult<jobject> {
    let state = env.new_string(h.state.as_str())?;
    let reason = match h.lost_reason() {
        Some(r) => JObject::from(env.new_string(r.as_str())?),
        None => JObject::null(),
    };
    let name = env.new_string(&h.name)?;
    let exclusive_ms = h.exclusive_for().map_or(-1, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let args = [
        JValue::Object(&state),
        JValue::Object(&reason),
        JValue::Object(&name),
        JValue::Long(h.fencing_token),
        JValue::Long(h.lease_id),
        JValue::Long(exclusive_ms),
        JValue::Bool(h.is_ok() as u8),
    ];
    let sig = "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;JJJZ)Lio/etcdlock/Health;";
    Ok(env.call_static_method("io/etcdlock/Health", "of", sig, &args)?.l()?.into_raw())
}
