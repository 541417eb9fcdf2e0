//! The service registry's registrations: kept registered (again on a new lease when one is
//! lost), with their events. Reading and following instances is in discovery.rs. Conversions
//! only: the behaviour is the core's.

use crate::callback::reason_code;
use crate::client::etcdlock_client;
use crate::ffi::{self, invalid};
use etcdlock::{CancellationToken, Client, Error, ErrorKind, RegisterOptions, Registration, RegistrationEvent, RegistrationEvents};
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// etcdlock_register flag: take the name over if another registrant holds it (that registrant
/// gets ETCDLOCK_REGISTRATION_TAKEN_OVER). Without it a held name is ETCDLOCK_E_WOULD_BLOCK.
pub const ETCDLOCK_REGISTER_REPLACE: u32 = 1;

/// A registration event: the instance is not registered any more (`reason` says why, an
/// ETCDLOCK_LOST_* code); the library is registering it again.
pub const ETCDLOCK_REGISTRATION_LOST: c_int = 1;
/// A registration event: registered again, on the new lease `lease`.
pub const ETCDLOCK_REGISTRATION_RESTORED: c_int = 2;
/// A registration event: another registrant took the name over (etcdlock_register with
/// ETCDLOCK_REGISTER_REPLACE). The registration has ended: it is not registered again.
pub const ETCDLOCK_REGISTRATION_TAKEN_OVER: c_int = 3;

/// How often a waiting etcdlock_registration_next_event looks whether its client was closed.
const CLIENT_CLOSED_POLL: Duration = Duration::from_millis(100);

/// One event of a registration, written by etcdlock_registration_next_event.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct etcdlock_registration_event {
    /// ETCDLOCK_REGISTRATION_LOST, _RESTORED or _TAKEN_OVER.
    pub kind: c_int,
    /// For ETCDLOCK_REGISTRATION_LOST: why, an ETCDLOCK_LOST_* code (expired, revoked,
    /// key_deleted). 0 otherwise.
    pub reason: c_int,
    /// For ETCDLOCK_REGISTRATION_RESTORED: the new lease's ID. 0 otherwise.
    pub lease: i64,
}

/// An instance kept registered: `<service>/<instance>` in etcd, on a lease of its own kept
/// alive in the background, registered again on a new lease when that one is lost, until
/// etcdlock_registration_close, etcdlock_registration_free, another registrant taking the name
/// over, or its client closing. Its accessors, update and close may be called from any thread
/// (close also while another thread waits in etcdlock_registration_next_event); it must not be
/// freed while another thread is inside a call on it.
pub struct etcdlock_registration {
    reg: Arc<Registration>,
    // Subscribed as soon as the registration exists, so that no event is missed before the
    // first next_event. Behind an async mutex so that a `next` future can own it.
    events: Arc<tokio::sync::Mutex<RegistrationEvents>>,
    client: Client,
    /// etcdlock_registration_close was called.
    closed: CancellationToken,
    /// ETCDLOCK_REGISTRATION_TAKEN_OVER was handed out: no event comes after it.
    ended: AtomicBool,
}

/// Registers the instance `instance` of the service `service` (both NUL-terminated strings:
/// `service` a valid lock name, not ending in '/'; `instance` not empty and without '/') with
/// `value` (`value_len` bytes, at most 4096; NULL with length 0 for an empty one), as the key
/// `<service>/<instance>` on a new lease of `ttl_s` seconds kept alive in the background (the
/// layout etcd's Go endpoints manager writes: register etcdlock_grpc_endpoint's value for Go gRPC
/// clients resolving `etcd:///<service>`). When the lease is lost (expired, revoked, the key
/// deleted) the library registers the instance again on a new lease as soon as etcd allows,
/// reporting both (etcdlock_registration_next_event).
///
/// `flags`: 0, or ETCDLOCK_REGISTER_REPLACE to take over a name another registrant holds
/// (without it that is ETCDLOCK_E_WOULD_BLOCK, with nothing left in etcd). Unknown flags, NULL
/// pointers, bad names, a longer value and `ttl_s` <= 0 are ETCDLOCK_E_INVALID_ARGUMENT before
/// anything is sent; a closed client is ETCDLOCK_E_CLOSED. On every failure nothing is left in
/// etcd (the new lease is revoked before this returns). On success writes the registration to
/// `*out` (free it with etcdlock_registration_free, after etcdlock_registration_close).
///
///     etcdlock_registration *reg = NULL;
///     char *v = NULL;
///     etcdlock_grpc_endpoint("10.0.0.7:50051", &v);
///     int rc = etcdlock_register(client, "svc/api", "node-1", (const uint8_t *)v, strlen(v), 10, 0, &reg);
///     etcdlock_string_free(v);
#[no_mangle]
pub unsafe extern "C" fn etcdlock_register(
    client: *mut etcdlock_client,
    service: *const c_char,
    instance: *const c_char,
    value: *const u8,
    value_len: usize,
    ttl_s: i64,
    flags: u32,
    out: *mut *mut etcdlock_registration,
) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let service = unsafe { ffi::cstr(service, "service") }?.to_vec();
        let instance = unsafe { ffi::cstr(instance, "instance") }?.to_vec();
        let value = unsafe { crate::lock::lock_value(value, value_len) }?;
        // The upper bound is core's to check.
        if ttl_s <= 0 {
            return Err(invalid(format!("ttl_s must be a positive number of seconds, got {ttl_s}")));
        }
        if flags & !ETCDLOCK_REGISTER_REPLACE != 0 {
            return Err(invalid(format!("unknown flags {flags:#x} (only ETCDLOCK_REGISTER_REPLACE is defined)")));
        }
        let opts = RegisterOptions { ttl: ttl_s, replace: flags & ETCDLOCK_REGISTER_REPLACE != 0 };
        let client = c.client.clone();
        let (reg, events) = ffi::block(async move {
            let reg = client.register_with(service, instance, value, opts).await?;
            let events = reg.events();
            Ok((reg, events))
        })?;
        let handle = etcdlock_registration {
            reg: Arc::new(reg),
            events: Arc::new(tokio::sync::Mutex::new(events)),
            client: c.client.clone(),
            closed: CancellationToken::new(),
            ended: AtomicBool::new(false),
        };
        unsafe { *out = ffi::into_raw(handle) };
        Ok(())
    })
}

/// The registration's key, `<service>/<instance>`, `*len` bytes, not NUL-terminated; valid
/// until the registration is freed. NULL for NULL (`len` may be NULL).
#[no_mangle]
pub unsafe extern "C" fn etcdlock_registration_key(reg: *const etcdlock_registration, len: *mut usize) -> *const u8 {
    ffi::value(std::ptr::null(), || {
        let key = unsafe { ffi::arg(reg, "registration") }?.reg.key();
        if let Some(len) = unsafe { len.as_mut() } {
            *len = key.len();
        }
        Ok(key.as_ptr())
    })
}

/// The ID of the lease the key is on now; 0 while it is being registered again, once it has
/// ended (closed, taken over), or for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_registration_lease_id(reg: *const etcdlock_registration) -> i64 {
    ffi::value(0, || Ok(unsafe { ffi::arg(reg, "registration") }?.reg.lease_id().unwrap_or(0)))
}

/// Cheap local check: whether the instance is registered now as far as this process knows
/// (its lease alive; not being registered again, closed or taken over). false for NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_registration_is_registered(reg: *const etcdlock_registration) -> bool {
    ffi::value(false, || Ok(unsafe { ffi::arg(reg, "registration") }?.reg.is_registered()))
}

/// Replaces the registered value with `value` (at most 4096 bytes; NULL with length 0 for an
/// empty one), also for every later registration. Written only while the key is on this
/// registration's lease (checked by etcd atomically with the write):
/// ETCDLOCK_E_NOT_HELD otherwise, with nothing written: while it is being registered again
/// (the value is kept for the new registration), after ETCDLOCK_REGISTRATION_TAKEN_OVER, and
/// once closed. On success writes the write's revision to `*revision` if it is not NULL.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_registration_update(reg: *mut etcdlock_registration, value: *const u8, value_len: usize, revision: *mut i64) -> c_int {
    ffi::status(|| {
        let r = unsafe { ffi::arg(reg, "registration") }?;
        let value = unsafe { crate::lock::lock_value(value, value_len) }?;
        if r.closed.is_cancelled() {
            return Err(Error::new(ErrorKind::NotHeld, "the registration was closed").into());
        }
        let reg = r.reg.clone();
        let rev = ffi::block(async move { reg.update(value).await })?;
        // SAFETY: NULL or a writable int64_t.
        if let Some(out) = unsafe { revision.as_mut() } {
            *out = rev;
        }
        Ok(())
    })
}

/// Waits up to `timeout_ms` (0 = only what has arrived, ETCDLOCK_WAIT_FOREVER) for the
/// registration's next event and writes it to `*out`: ETCDLOCK_REGISTRATION_LOST (with its
/// reason), then ETCDLOCK_REGISTRATION_RESTORED (with the new lease) once registered again, or
/// ETCDLOCK_REGISTRATION_TAKEN_OVER (the last event). Events are kept from etcdlock_register
/// on, in order, until read (a reader more than 64 behind skips to the oldest kept).
/// ETCDLOCK_E_TIMEOUT when none came in time (nothing is lost: it is read by a later call);
/// ETCDLOCK_E_CLOSED once the registration is closed, after its TAKEN_OVER event, or once the
/// client is closed (noticed within 100 ms). One thread at a time should call this.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_registration_next_event(reg: *mut etcdlock_registration, timeout_ms: i64, out: *mut etcdlock_registration_event) -> c_int {
    ffi::status(|| {
        let r = unsafe { ffi::arg(reg, "registration") }?;
        if out.is_null() {
            return Err(invalid("out must not be NULL"));
        }
        let timeout = ffi::wait(timeout_ms)?;
        let closed_err = || Error::new(ErrorKind::Closed, "the registration was closed");
        let client_closed_err = || Error::new(ErrorKind::Closed, "the client is closed");
        if r.closed.is_cancelled() {
            return Err(closed_err().into());
        }
        if r.ended.load(Ordering::Acquire) {
            return Err(Error::new(ErrorKind::Closed, "the registration has ended: another registrant took the name over").into());
        }
        if r.client.is_closed() {
            return Err(client_closed_err().into());
        }
        let (events, closed, client) = (r.events.clone(), r.closed.clone(), r.client.clone());
        let event = ffi::block(async move {
            let next = async {
                // RegistrationEvents::next is cancel-safe: an event not taken when the timeout
                // or a close wins stays for the next call.
                let mut events = events.lock().await;
                events.next().await.ok_or_else(closed_err)
            };
            let limited = async {
                match timeout {
                    None => next.await,
                    Some(t) => tokio::time::timeout(t, next)
                        .await
                        .map_err(|_| Error::new(ErrorKind::Timeout, "no registration event before the timeout"))?,
                }
            };
            // The core says nothing to a registration's events when its client closes.
            let client_closed = async {
                while !client.is_closed() {
                    tokio::time::sleep(CLIENT_CLOSED_POLL).await;
                }
            };
            tokio::select! {
                biased;
                _ = closed.cancelled() => Err(closed_err()),
                e = limited => e,
                _ = client_closed => Err(client_closed_err()),
            }
        })?;
        let view = match event {
            RegistrationEvent::Lost(reason) => etcdlock_registration_event { kind: ETCDLOCK_REGISTRATION_LOST, reason: reason_code(reason), lease: 0 },
            RegistrationEvent::Restored { lease } => etcdlock_registration_event { kind: ETCDLOCK_REGISTRATION_RESTORED, reason: 0, lease },
            RegistrationEvent::TakenOver => {
                r.ended.store(true, Ordering::Release);
                etcdlock_registration_event { kind: ETCDLOCK_REGISTRATION_TAKEN_OVER, reason: 0, lease: 0 }
            }
        };
        // SAFETY: checked non-NULL; a writable etcdlock_registration_event.
        unsafe { *out = view };
        Ok(())
    })
}

/// Deregisters: stops keeping the instance registered, deletes its key if it is still this
/// registration's (not a taker's) and revokes its lease, both done when this returns unless
/// etcd is unreachable (then the lease is revoked in the background, or expires). A waiting
/// etcdlock_registration_next_event returns ETCDLOCK_E_CLOSED. Idempotent (ETCDLOCK_OK again).
/// Once its client is closed (which revoked the lease: nothing is left) this is ETCDLOCK_OK, or
/// ETCDLOCK_E_CLOSED if the registration had not noticed the close yet. Free the registration
/// after.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_registration_close(reg: *mut etcdlock_registration) -> c_int {
    ffi::status(|| {
        let r = unsafe { ffi::arg(reg, "registration") }?;
        let reg = r.reg.clone();
        let result = ffi::block(async move { reg.close().await });
        // From a library thread nothing was done: the registration goes on.
        if !matches!(&result, Err(f) if f.status == crate::status::ETCDLOCK_E_WRONG_THREAD) {
            r.closed.cancel();
        }
        result
    })
}

/// Frees the registration. One not closed is deregistered in the background (its lease
/// revoked, which deletes the key): call etcdlock_registration_close first to know it is gone
/// when that returns. No other thread may be inside a call on it. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_registration_free(reg: *mut etcdlock_registration) {
    ffi::void(|| drop(unsafe { ffi::from_raw(reg) }))
}

