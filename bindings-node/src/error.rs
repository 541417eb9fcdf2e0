//! Core errors as JS `Error` objects with core's stable `code` (and `compactRevision`).

use napi::bindgen_prelude::*;
use napi::{Env, Status};

/// Builds the JS error on the JS thread and hands it to napi as the rejection value.
pub fn to_js(env: &Env, e: etcdlock::Error) -> napi::Error {
    let build = || -> napi::Result<napi::Error> {
        let mut obj = env.create_error(napi::Error::new(Status::GenericFailure, e.message().to_string()))?;
        obj.set_named_property("code", e.kind().code())?;
        if let Some(rev) = e.compact_revision() {
            obj.set_named_property("compactRevision", BigInt::from(rev))?;
        }
        Ok(napi::Error::from(obj.to_unknown()))
    };
    build().unwrap_or_else(|err| err)
}
