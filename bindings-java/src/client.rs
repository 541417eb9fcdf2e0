//! Clients: connect (with options), close, free, metrics, and the process-wide shutdown.

use crate::boundary::{self, entry, invalid, JResult};
use etcdlock::{Client, ClientOptions, Pem, TlsOptions};
use jni::objects::{JClass, JObjectArray, JString};
use jni::sys::{jboolean, jlong, jstring};
use jni::JNIEnv;
use std::time::Duration;

/// A connection to an etcd cluster, shared by any number of Java threads.
pub(crate) struct ClientHandle {
    pub(crate) client: Client,
}

/// The TLS and credential arguments of clientConnect, as Java strings (each nullable): each
/// PEM as a file path or as PEM text (the Java builder sets one of the two), and the name to
/// check in the members' certificates.
struct Credentials<'a> {
    user: JString<'a>,
    password: JString<'a>,
    files: [JString<'a>; 3],
    pems: [JString<'a>; 3],
    server_name: JString<'a>,
}

fn options(env: &mut JNIEnv, connect_ms: i64, request_ms: i64, c: Credentials) -> JResult<ClientOptions> {
    let mut o = ClientOptions::default();
    // 0 keeps the core's default; the Java builder refuses negative durations first.
    if connect_ms > 0 {
        o.connect_timeout = Duration::from_millis(connect_ms as u64);
    }
    if request_ms > 0 {
        o.request_timeout = Duration::from_millis(request_ms as u64);
    }
    match (boundary::opt_string(env, &c.user)?, boundary::opt_string(env, &c.password)?) {
        (None, None) => {}
        (Some(u), Some(p)) => o.user = Some((u, p)),
        _ => return Err(invalid("user and password must be given together")),
    }
    let mut pems = [None, None, None];
    for (i, slot) in pems.iter_mut().enumerate() {
        // The core reads and checks them (a bad PEM is InvalidArgument naming the option,
        // never showing its text).
        *slot = match (boundary::opt_string(env, &c.files[i])?, boundary::opt_string(env, &c.pems[i])?) {
            (Some(path), _) => Some(Pem::File(path.into())),
            (None, Some(text)) => Some(Pem::Bytes(text.into_bytes())),
            (None, None) => None,
        };
    }
    let [ca, cert, key] = pems;
    let tls = TlsOptions { ca, cert, key, server_name: boundary::opt_string(env, &c.server_name)? };
    if tls != TlsOptions::default() {
        o.tls = Some(tls);
    }
    Ok(o)
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_io_etcdlock_Native_clientConnect<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    endpoints: JObjectArray<'l>,
    connect_ms: jlong,
    request_ms: jlong,
    user: JString<'l>,
    password: JString<'l>,
    ca: JString<'l>,
    cert: JString<'l>,
    key: JString<'l>,
    ca_pem: JString<'l>,
    cert_pem: JString<'l>,
    key_pem: JString<'l>,
    server_name: JString<'l>,
    name: JString<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let n = env.get_array_length(&endpoints)?;
        let mut eps = Vec::with_capacity(n as usize);
        for i in 0..n {
            let s = JString::from(env.get_object_array_element(&endpoints, i)?);
            eps.push(boundary::string(env, &s, "endpoint")?);
            env.delete_local_ref(s)?;
        }
        let mut opts = options(env, connect_ms, request_ms, Credentials { user, password, files: [ca, cert, key], pems: [ca_pem, cert_pem, key_pem], server_name })?;
        opts.name = boundary::opt_string(env, &name)?;
        let client = boundary::block(async move { Client::connect(eps, opts).await })?;
        Ok(boundary::into_handle(ClientHandle { client }))
    })
}

/// Closes the client (revokes its leases, fails its pending calls) without freeing it, so that
/// threads still inside calls on it finish with ClosedException. Idempotent.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_clientClose<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let client = boundary::handle::<ClientHandle>(h, "client")?.client.clone();
        if !client.is_closed() {
            boundary::block(async move {
                client.close().await;
                Ok(())
            })?;
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_clientIsClosed<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jboolean {
    entry(&mut env, 1, |_| Ok(boundary::handle::<ClientHandle>(h, "client")?.client.is_closed() as jboolean))
}

/// Frees the handle, closing the client first if it is open (a client nobody closed, freed by
/// the Cleaner): its leases are revoked as at close().
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_clientFree<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) {
    entry(&mut env, (), |_| {
        let Some(handle) = boundary::take_handle::<ClientHandle>(h) else { return Ok(()) };
        if !handle.client.is_closed() && boundary::may_block() {
            let c = handle.client.clone();
            let _ = etcdlock::runtime::block_on(async move { c.close().await });
        }
        Ok(())
    })
}

/// The client's metrics in the Prometheus text format (reads memory, sends nothing).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_clientMetricsText<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let text = boundary::handle::<ClientHandle>(h, "client")?.client.metrics().prometheus_text();
        Ok(env.new_string(text)?.into_raw())
    })
}

/// The client's name: the `client` label of its metrics.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_clientName<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let name = boundary::handle::<ClientHandle>(h, "client")?.client.name().to_string();
        Ok(env.new_string(name)?.into_raw())
    })
}

/// Closes every client of the process and stops the runtime (the JVM's shutdown hook).
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_shutdown<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, timeout_ms: jlong) {
    entry(&mut env, (), |_| {
        if etcdlock::runtime::runtime_started() {
            etcdlock::runtime::shutdown(Duration::from_millis(timeout_ms.max(0) as u64))?;
        }
        Ok(())
    })
}
