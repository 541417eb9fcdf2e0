//! The service registry (core `sync::registry`): a registration kept alive (and registered
//! again) by core, its events forwarded to JS, instance sets read once or followed
//! (`Discovery`), and the gRPC endpoint value helpers.

use crate::follow::Followed;
use crate::promise;
use etcdlock::{CancellationToken, Discovery, ErrorKind, Instances, Registration, RegistrationEvent, RegistrationEvents};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Env;
use napi_derive::napi;
use std::sync::{Arc, Mutex};

/// One registered instance, as etcd has it.
#[napi(object)]
pub struct NativeInstance {
    /// The key after `<service>/`.
    pub name: Buffer,
    pub value: Buffer,
    /// 0 for a key put without a lease.
    pub lease: BigInt,
    pub mod_revision: BigInt,
}

/// A service's instances at one revision, ordered by name.
#[napi(object)]
pub struct NativeInstances {
    pub instances: Vec<NativeInstance>,
    pub revision: BigInt,
}

pub fn instances_to_js(set: Instances) -> NativeInstances {
    NativeInstances {
        instances: set
            .instances
            .into_iter()
            .map(|i| NativeInstance { name: i.name.into(), value: i.value.into(), lease: BigInt::from(i.lease), mod_revision: BigInt::from(i.mod_revision) })
            .collect(),
        revision: BigInt::from(set.revision),
    }
}

/// A registration event: `type` is `'lost'` (with `reason`), `'restored'` (with `lease`, the
/// new lease) or `'takenOver'`.
#[napi(object, use_nullable = true)]
pub struct NativeRegistrationEvent {
    pub r#type: String,
    pub reason: Option<String>,
    pub lease: Option<BigInt>,
}

fn event_to_js(e: RegistrationEvent) -> NativeRegistrationEvent {
    match e {
        RegistrationEvent::Lost(r) => NativeRegistrationEvent { r#type: "lost".into(), reason: Some(r.as_str().into()), lease: None },
        RegistrationEvent::Restored { lease } => NativeRegistrationEvent { r#type: "restored".into(), reason: None, lease: Some(BigInt::from(lease)) },
        RegistrationEvent::TakenOver => NativeRegistrationEvent { r#type: "takenOver".into(), reason: None, lease: None },
    }
}

/// `(event) => void`, weak: a pending event never keeps the process alive.
pub type EventCallback = ThreadsafeFunction<NativeRegistrationEvent, Unknown<'static>, NativeRegistrationEvent, Status, false, true>;

#[napi]
pub struct NativeRegistration {
    reg: Arc<Registration>,
    /// Subscribed when the registration was made (on the runtime), so that no event is missed
    /// before the wrapper calls `onEvents`; taken by it.
    events: Mutex<Option<RegistrationEvents>>,
    /// Stops the event forwarder once closed (or garbage-collected).
    stop: CancellationToken,
}

impl Drop for NativeRegistration {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl NativeRegistration {
    pub fn new(reg: Registration, events: RegistrationEvents) -> Self {
        NativeRegistration { reg: Arc::new(reg), events: Mutex::new(Some(events)), stop: CancellationToken::new() }
    }
}

#[napi]
impl NativeRegistration {
    /// `<service>/<instance>`.
    #[napi(getter)]
    pub fn key(&self) -> Buffer {
        self.reg.key().to_vec().into()
    }

    /// The lease the key is on now; null while registering again and once ended.
    #[napi(getter)]
    pub fn lease_id(&self) -> Option<BigInt> {
        self.reg.lease_id().map(BigInt::from)
    }

    #[napi]
    pub fn is_registered(&self) -> bool {
        self.reg.is_registered()
    }

    /// Calls `cb(event)` on the JS thread for each event, in order, from the registration on
    /// (the first call only; later ones do nothing). Never keeps the process alive.
    #[napi(ts_args_type = "cb: (event: NativeRegistrationEvent) => void")]
    pub fn on_events(&self, cb: EventCallback) {
        let Some(mut events) = self.events.lock().unwrap_or_else(|p| p.into_inner()).take() else { return };
        let stop = self.stop.clone();
        etcdlock::runtime::spawn(async move {
            loop {
                let e = tokio::select! {
                    biased;
                    _ = stop.cancelled() => return,
                    e = events.next() => e,
                };
                let Some(e) = e else { return };
                cb.call(event_to_js(e), ThreadsafeFunctionCallMode::NonBlocking);
            }
        });
    }

    /// Replaces the value; `NOT_HELD` while registering again or once taken over. Resolves
    /// to the write's revision.
    #[napi]
    pub fn update<'env>(&self, env: &'env Env, value: &[u8]) -> Result<PromiseRaw<'env, BigInt>> {
        let (reg, value) = (self.reg.clone(), value.to_vec());
        promise::spawn(env, async move { reg.update(value).await }, |_, rev| Ok(BigInt::from(rev)))
    }

    /// Deregisters (deletes the key if still ours, revokes the lease); idempotent. No event
    /// is forwarded after it.
    #[napi]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        self.stop.cancel();
        let reg = self.reg.clone();
        promise::spawn(env, async move { reg.close().await }, |_, ()| Ok(()))
    }
}

#[napi]
pub struct NativeDiscovery(Followed<Discovery>);

impl NativeDiscovery {
    pub fn new(d: Discovery) -> Self {
        NativeDiscovery(Followed::new(d))
    }
}

#[napi]
impl NativeDiscovery {
    /// The next set (the current one first), or `null` once closed (this discovery or the
    /// client).
    #[napi]
    pub fn next<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, Option<NativeInstances>>> {
        promise::spawn(env, self.0.next(), |_, set: Option<Instances>| Ok(set.map(instances_to_js)))
    }

    /// Ends the discovery and drops its watch; a pending `next()` resolves `null`.
    #[napi]
    pub fn close(&self) {
        self.0.close();
    }
}

/// Core checks a service name as a lock name and a registered value as a lock's value, and its
/// messages say "lock name"/"lock value"; here they are prefixed with what was checked.
pub fn check_service(service: &[u8]) -> etcdlock::Result<()> {
    etcdlock::check_lock_name(service).map_err(|e| {
        let name = String::from_utf8_lossy(service);
        etcdlock::Error::new(ErrorKind::InvalidArgument, format!("invalid service name {name:?} (checked as a lock name: {})", e.message()))
    })
}

pub fn check_value(value: &[u8]) -> etcdlock::Result<()> {
    etcdlock::check_lock_value(value)
        .map_err(|e| etcdlock::Error::new(ErrorKind::InvalidArgument, format!("invalid registration value (checked as a lock value: {})", e.message())))
}

/// Checks a service name as `register`, `instances` and `discover` do (the wrapper's
/// synchronous `client.discover()` throws before anything is sent).
#[napi]
pub fn check_service_name(env: Env, service: &[u8]) -> Result<()> {
    check_service(service).map_err(|e| crate::error::to_js(&env, e))
}

/// The value etcd's Go endpoints manager writes for a gRPC server at `addr` (JSON text).
#[napi]
pub fn grpc_endpoint(addr: String) -> String {
    // JSON made from a `&str`: valid UTF-8.
    String::from_utf8_lossy(&etcdlock::grpc_endpoint(&addr)).into_owned()
}

/// The address in an endpoint value written by Go's endpoints manager or `grpcEndpoint`, or null.
#[napi]
pub fn grpc_endpoint_addr(value: &[u8]) -> Option<String> {
    etcdlock::grpc_endpoint_addr(value)
}
