//! Key-value calls on a client: put (plain or on a lease), get, delete.

use crate::boundary::{self, entry};
use crate::client::ClientHandle;
use crate::lease::LeaseHandle;
use jni::objects::{JByteArray, JClass};
use jni::sys::{jboolean, jbyteArray, jlong};
use jni::JNIEnv;

/// Writes `value` at `key` (attached to the lease `lease` unless 0); the revision written.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_put<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    key: JByteArray<'l>,
    value: JByteArray<'l>,
    lease: jlong,
) -> jlong {
    entry(&mut env, 0, |env| {
        let client = boundary::handle::<ClientHandle>(h, "client")?.client.clone();
        let (key, value) = (boundary::bytes(env, &key)?, boundary::bytes(env, &value)?);
        let lease = match lease {
            0 => None,
            l => Some(boundary::handle::<LeaseHandle>(l, "lease")?.lease.clone()),
        };
        boundary::block(async move { client.put(&key, &value, lease.as_ref()).await })
    })
}

/// The value at `key` (linearizable read), or null when there is none.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_get<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, key: JByteArray<'l>) -> jbyteArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let client = boundary::handle::<ClientHandle>(h, "client")?.client.clone();
        let key = boundary::bytes(env, &key)?;
        match boundary::block(async move { client.get(&key).await })? {
            None => Ok(std::ptr::null_mut()),
            Some(kv) => Ok(env.byte_array_from_slice(&kv.value)?.into_raw()),
        }
    })
}

/// Deletes `key`; whether it existed.
#[no_mangle]
pub extern "system" fn Java_io_etcdlock_Native_delete<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, h: jlong, key: JByteArray<'l>) -> jboolean {
    entry(&mut env, 0, |env| {
        let client = boundary::handle::<ClientHandle>(h, "client")?.client.clone();
        let key = boundary::bytes(env, &key)?;
        Ok(boundary::block(async move { client.delete(&key).await })? as jboolean)
    })
}
