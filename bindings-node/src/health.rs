//! A core `Health` as the plain object every handle's `health()` returns (lib/types.js `Health`).

use etcdlock::Health;
use napi::bindgen_prelude::BigInt;
use napi_derive::napi;

/// One call's view of a hold (core `Health`): what a readiness probe answers.
#[napi(object)]
pub struct NativeHealth {
    /// `held`, `lost`, `released` or `idle`.
    pub state: String,
    /// Why it was lost, when `state` is `lost`.
    pub lost_reason: Option<String>,
    pub name: String,
    pub fencing_token: BigInt,
    pub lease_id: BigInt,
    /// Milliseconds, from when the view was taken, that no other client can hold it; null when
    /// another may hold it already or it was released.
    pub exclusive_for_ms: Option<f64>,
    /// Held, and its exclusivity not in doubt.
    pub ok: bool,
}

pub fn to_js(h: Health) -> NativeHealth {
    NativeHealth {
        ok: h.is_ok(),
        state: h.state.as_str().to_string(),
        lost_reason: h.lost_reason().map(|r| r.as_str().to_string()),
        exclusive_for_ms: h.exclusive_for().map(|d| d.as_secs_f64() * 1e3),
        fencing_token: BigInt::from(h.fencing_token),
        lease_id: BigInt::from(h.lease_id),
        name: h.name,
    }
}
