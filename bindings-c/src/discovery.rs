//! A service's instances: one read, a discovery that follows them (one set per
//! etcdlock_discovery_next), and the value etcd's Go gRPC resolver reads. Conversions only.

use crate::client::etcdlock_client;
use crate::ffi;
use crate::follow::Followed;
use etcdlock::{Discovery, Error, ErrorKind, Instances};
use std::ffi::CString;
use std::os::raw::{c_char, c_int};

/// One registered instance. Pointers are valid until its etcdlock_instance_set is freed.
#[repr(C)]
pub struct etcdlock_instance {
    /// The instance's name: its key after `<service>/` (`name_len` bytes, not NUL-terminated).
    pub name: *const u8,
    /// The length of `name` in bytes.
    pub name_len: usize,
    /// What it registered (`value_len` bytes, not NUL-terminated; may be empty). For a Go gRPC
    /// resolver: etcdlock_grpc_endpoint's value (etcdlock_grpc_endpoint_addr reads it back).
    pub value: *const u8,
    /// The length of `value` in bytes.
    pub value_len: usize,
    /// The lease its key is bound to (0 for a key put without one, e.g. by hand).
    pub lease: i64,
    /// The revision of its latest put (registration or update).
    pub mod_revision: i64,
}

/// A service's instances at one revision, ordered by name (bytewise). Free with
/// etcdlock_instance_set_free.
#[repr(C)]
pub struct etcdlock_instance_set {
    /// The instances, `n_instances` of them.
    pub instances: *const etcdlock_instance,
    /// How many entries `instances` points to.
    pub n_instances: usize,
    /// The etcd revision this set is the state at.
    pub revision: i64,
}

/// What etcdlock_instances and etcdlock_discovery_next hand out: the C view first, then the
/// storage it points into.
#[repr(C)]
struct OwnedSet {
    view: etcdlock_instance_set,
    entries: Vec<etcdlock_instance>,
    data: Instances,
}

fn set_out(data: Instances) -> *mut etcdlock_instance_set {
    let entries: Vec<etcdlock_instance> = data
        .instances
        .iter()
        .map(|i| etcdlock_instance {
            name: i.name.as_ptr(),
            name_len: i.name.len(),
            value: i.value.as_ptr(),
            value_len: i.value.len(),
            lease: i.lease,
            mod_revision: i.mod_revision,
        })
        .collect();
    let view = etcdlock_instance_set { instances: entries.as_ptr(), n_instances: entries.len(), revision: data.revision };
    // Moving the Vecs into the box keeps their heap buffers where the view points.
    Box::into_raw(Box::new(OwnedSet { view, entries, data })).cast::<etcdlock_instance_set>()
}

/// Reads the instances of `service` (a NUL-terminated lock name) now, whoever registered them
/// (this library, etcd's Go endpoints manager): the keys directly under `<service>/`, one
/// linearizable read. Writes the set to `*out` (free it with etcdlock_instance_set_free; it
/// may be empty). A bad name is ETCDLOCK_E_INVALID_ARGUMENT before anything is sent, a closed
/// client ETCDLOCK_E_CLOSED.
///
///     etcdlock_instance_set *set = NULL;
///     if (etcdlock_instances(client, "svc/api", &set) == ETCDLOCK_OK) {
///         for (size_t i = 0; i < set->n_instances; i++)
///             printf("%.*s = %.*s\n", (int)set->instances[i].name_len, (const char *)set->instances[i].name,
///                    (int)set->instances[i].value_len, (const char *)set->instances[i].value);
///         etcdlock_instance_set_free(set);
///     }
#[no_mangle]
pub unsafe extern "C" fn etcdlock_instances(client: *mut etcdlock_client, service: *const c_char, out: *mut *mut etcdlock_instance_set) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let service = unsafe { ffi::cstr(service, "service") }?.to_vec();
        let client = c.client.clone();
        let set = ffi::block(async move { client.instances(service).await })?;
        unsafe { *out = set_out(set) };
        Ok(())
    })
}

/// Frees what etcdlock_instances or etcdlock_discovery_next wrote. NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_instance_set_free(set: *mut etcdlock_instance_set) {
    ffi::void(|| {
        if !set.is_null() {
            // SAFETY: from set_out, where it is the first field of a boxed OwnedSet.
            drop(unsafe { Box::from_raw(set.cast::<OwnedSet>()) });
        }
    })
}

/// Follows a service's instances: the current set first, then the whole set after each change,
/// one per etcdlock_discovery_next. One thread at a time should call next (concurrent calls
/// queue up); etcdlock_discovery_close may be called from any thread.
pub struct etcdlock_discovery(Followed<Discovery>);

/// Discovers the service `service` (a NUL-terminated lock name) and writes the discovery to
/// `*out` (free it with etcdlock_discovery_free). Sends nothing until the first
/// etcdlock_discovery_next. A bad name is ETCDLOCK_E_INVALID_ARGUMENT and a closed client
/// ETCDLOCK_E_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_discover(client: *mut etcdlock_client, service: *const c_char, out: *mut *mut etcdlock_discovery) -> c_int {
    ffi::status(|| {
        let c = unsafe { ffi::arg(client, "client") }?;
        let out = ffi::out(out, "out")?;
        let service = unsafe { ffi::cstr(service, "service") }?;
        let discovery = c.client.discover(service)?;
        if c.client.is_closed() {
            return Err(Error::new(ErrorKind::Closed, "the client is closed").into());
        }
        let handle = etcdlock_discovery(Followed::new(discovery, "the discovery"));
        unsafe { *out = ffi::into_raw(handle) };
        Ok(())
    })
}

/// Waits up to `timeout_ms` (0 = only what has arrived, ETCDLOCK_WAIT_FOREVER) for the next
/// instance set: the first call gives the current one (possibly empty), each later call the
/// set after the next change (a registration, an update, a deregistration or an expiry; changes
/// that arrive together come as one set, every set is the state at its `revision`, and none is
/// skipped that a change made visible). Writes it to `*out` (free it with
/// etcdlock_instance_set_free). ETCDLOCK_E_TIMEOUT when nothing changed in time: nothing is
/// lost, a change that was arriving is reported by a later call. A watch cut off by a
/// disconnect or a compaction resumes by itself. ETCDLOCK_E_CLOSED once the client or the
/// discovery (etcdlock_discovery_close) is closed; ETCDLOCK_E_AUTH when etcd refuses it.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_discovery_next(discovery: *mut etcdlock_discovery, timeout_ms: i64, out: *mut *mut etcdlock_instance_set) -> c_int {
    ffi::status(|| {
        let d = unsafe { ffi::arg(discovery, "discovery") }?;
        let out = ffi::out(out, "out")?;
        let set = d.0.next(ffi::wait(timeout_ms)?)?;
        unsafe { *out = set_out(set) };
        Ok(())
    })
}

/// Ends the discovery: a etcdlock_discovery_next waiting on another thread returns
/// ETCDLOCK_E_CLOSED, and so does every later one. Idempotent; NULL is a no-op. Free it after.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_discovery_close(discovery: *mut etcdlock_discovery) {
    ffi::void(|| {
        // SAFETY: NULL or a live discovery.
        if let Some(d) = unsafe { discovery.as_ref() } {
            d.0.close();
        }
    })
}

/// Stops the discovery and frees it. No other thread may be inside a call on it. NULL is a
/// no-op.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_discovery_free(discovery: *mut etcdlock_discovery) {
    ffi::void(|| drop(unsafe { ffi::from_raw(discovery) }))
}

/// Writes to `*out` the value that makes an instance resolvable by etcd's Go gRPC resolver
/// (`naming/resolver`, target `etcd:///<service>`) when registered as `<service>/<instance>`:
/// the JSON etcd's Go endpoints manager writes for `addr` (a NUL-terminated UTF-8 `host:port`),
/// `{"Op":0,"Addr":"<addr>","Metadata":null}`, NUL-terminated. Free it with
/// etcdlock_string_free. Sends nothing.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_grpc_endpoint(addr: *const c_char, out: *mut *mut c_char) -> c_int {
    ffi::status(|| {
        let addr = unsafe { ffi::utf8(addr, "addr") }?;
        let out = ffi::out(out, "out")?;
        // JSON escapes every control character: the value holds no NUL.
        let text = CString::new(etcdlock::grpc_endpoint(addr))
            .map_err(|_| ffi::Failure { status: crate::status::ETCDLOCK_E_INTERNAL, message: "INTERNAL: the endpoint value holds a NUL".into() })?;
        unsafe { *out = text.into_raw() };
        Ok(())
    })
}

/// Reads the address back from an endpoint value (`value_len` bytes; one written by
/// etcdlock_grpc_endpoint or by etcd's Go endpoints manager, with or without metadata) and
/// writes it to `*out` as a NUL-terminated string (free it with etcdlock_string_free), or NULL
/// when the value is not an endpoint (another value, a delete update, an address holding a
/// NUL), returning ETCDLOCK_OK.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_grpc_endpoint_addr(value: *const u8, value_len: usize, out: *mut *mut c_char) -> c_int {
    ffi::status(|| {
        let value = unsafe { ffi::bytes(value, value_len, "value") }?;
        let out = ffi::out(out, "out")?;
        let addr = etcdlock::grpc_endpoint_addr(value).and_then(|a| CString::new(a).ok());
        unsafe { *out = addr.map_or(std::ptr::null_mut(), CString::into_raw) };
        Ok(())
    })
}

