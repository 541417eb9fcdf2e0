//! The service registry: a registration kept by the core (its events pumped to a Java sink),
//! one-off reads of a service's instances, and the `Instances` objects discoveries return too.

use crate::boundary::{self, entry, JResult};
use crate::callback;
use crate::client::ClientHandle;
use etcdlock::{CancellationToken, Instances, RegisterOptions, Registration, RegistrationEvent};
use jni::objects::{JByteArray, JClass, JObject, JString, JValue};
use jni::sys::{jboolean, jbyteArray, jlong, jobject};
use jni::JNIEnv;
use std::sync::Arc;

pub(crate) struct RegistrationHandle {
    reg: Arc<Registration>,
    /// Stops the events pump (close, free).
    closed: CancellationToken,
}

impl Drop for RegistrationHandle {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

/// Registers `<service>/<instance>` = `value` on a lease of `ttl_s` of its own (taking the name
/// over with `replace`), and returns once registered. Its events go to `sink.event(kind,
/// reason, lease)` on a runtime thread: `("lost", reason, 0)`, `("restored", null, lease)`,
/// `("taken_over", null, 0)`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_io_etcdlock_Native_register<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    client: jlong,
    service: JString<'l>,
    instance: JString<'l>,
    value: JByteArray<'l>,
    ttl_s: jlong,
    replace: jboolean,
    sink: JObject<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let client = boundary::handle::<ClientHandle>(client, "client")?.client.clone();
        let service = boundary::string(env, &service, "service")?;
        let instance = boundary::string(env, &instance, "instance")?;
        let value = boundary::bytes(env, &value)?;
        if sink.is_null() {
            return Err(boundary::invalid("sink must not be null"));
        }
        let sink = env.new_global_ref(&sink)?;
        let opts = RegisterOptions { ttl: ttl_s, replace: replace != 0 };
        let reg = boundary::block(async move { client.register_with(service, instance, value, opts).await })?;
        // Subscribed before anything can happen to it: no event is missed.
        let mut events = reg.events();
        let closed = CancellationToken::new();
        let stop = closed.clone();
        etcdlock::runtime::spawn(async move {
            loop {
                let event = tokio::select! {
                    biased;
                    _ = stop.cancelled() => return,
                    e = events.next() => e,
                };
                let Some(event) = event else { return };
                let (kind, reason, lease) = match &event {
                    RegistrationEvent::Lost(r) => ("lost", Some(r.as_str()), 0),
                    RegistrationEvent::Restored { lease } => ("restored", None, *lease),
                    RegistrationEvent::TakenOver => ("taken_over", None, 0),
                };
                callback::call(|env| {
                    let kind = env.new_string(kind)?;
                    let reason: JObject = match reason {
                        Some(r) => env.new_string(r)?.into(),
                        None => JObject::null(),
                    };
                    let args = [JValue::Object(&kind), JValue::Object(&reason), JValue::Long(lease)];
                    env.call_method(&sink, "event", "(Ljava/lang/String;Ljava/lang/String;J)V", &args)?;
                    Ok(())
                });
            }
        });
        Ok(boundary::into_handle(RegistrationHandle { reg: Arc::new(reg), closed }))
    })
}

fn registration<'a>(h: jlong) -> JResult<&'a RegistrationHandle> {
    boundary::handle::<RegistrationHandle>(h, "registration")
}

/// `<service>/<instance>`.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_registrationKey<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| Ok(env.byte_array_from_slice(registration(h)?.reg.key())?.into_raw()))
}

/// The lease the key is on now; 0 while registering again, and once ended.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_registrationLeaseId<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jlong {
    entry(&mut env, 0, |_| Ok(registration(h)?.reg.lease_id().unwrap_or(0)))
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_registrationIsRegistered<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jboolean {
    entry(&mut env, 0, |_| Ok(registration(h)?.reg.is_registered() as jboolean))
}

/// Replaces the registered value; the write's revision (NOT_HELD while registering again).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_registrationUpdate<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, value: JByteArray<'l>) -> jlong {
    entry(&mut env, 0, |env| {
        let reg = registration(h)?.reg.clone();
        let value = boundary::bytes(env, &value)?;
        boundary::block(async move { reg.update(value).await })
    })
}

/// Deregisters: the key deleted and the lease revoked when this returns. Idempotent.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_registrationClose<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let r = registration(h)?;
        r.closed.cancel();
        let reg = r.reg.clone();
        boundary::block(async move { reg.close().await })
    })
}

/// Frees the handle; a registration nobody closed is deregistered in the background.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_registrationFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        drop(boundary::take_handle::<RegistrationHandle>(h));
        Ok(())
    })
}

/// The instances of `service` now (one read), as `Instances`.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_instances<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, client: jlong, service: JString<'l>) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let client = boundary::handle::<ClientHandle>(client, "client")?.client.clone();
        let service = boundary::string(env, &service, "service")?;
        let set = boundary::block(async move { client.instances(service).await })?;
        Ok(instances_object(env, &set)?.into_raw())
    })
}

/// `Instances.of(revision, Instance[])`.
pub(crate) fn instances_object<'l>(env: &mut JNIEnv<'l>, set: &Instances) -> JResult<JObject<'l>> {
    let array = env.new_object_array(set.instances.len() as i32, "io/etcdlock/Instance", JObject::null())?;
    for (i, inst) in set.instances.iter().enumerate() {
        env.with_local_frame(8, |env| -> JResult<()> {
            let name = env.byte_array_from_slice(&inst.name)?;
            let value = env.byte_array_from_slice(&inst.value)?;
            let args = [JValue::Object(&name), JValue::Object(&value), JValue::Long(inst.lease), JValue::Long(inst.mod_revision)];
            let o = env.call_static_method("io/etcdlock/Instance", "of", "([B[BJJ)Lio/etcdlock/Instance;", &args)?.l()?;
            env.set_object_array_element(&array, i as i32, o)?;
            Ok(())
        })?;
    }
    let args = [JValue::Long(set.revision), JValue::Object(&array)];
    Ok(env.call_static_method("io/etcdlock/Instances", "of", "(J[Lio/etcdlock/Instance;)Lio/etcdlock/Instances;", &args)?.l()?)
}
