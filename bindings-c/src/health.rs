//! One call's view of a hold (core `Health`), as the struct every `etcdlock_*_health` fills.

use crate::callback;
use crate::ffi::{self, invalid, FfiResult};
use etcdlock::{Health, HoldState};
use std::os::raw::c_int;

/// Held (for a leadership: leading) and not known lost.
pub const ETCDLOCK_HEALTH_HELD: c_int = 1;
/// Lost: another client may hold it now (`lost_reason` says why).
pub const ETCDLOCK_HEALTH_LOST: c_int = 2;
/// Ended by this process: released, resigned, acked, nacked or done.
pub const ETCDLOCK_HEALTH_RELEASED: c_int = 3;

/// One call's view of a hold, filled by etcdlock_lock_health and its kin: what a readiness
/// probe answers (200 while `ok`). Taken from the very state the lost callback is fired from,
/// so once that callback ran, `ok` is false. Local reads only: nothing is sent to etcd. (The
/// name is not in it: it is the one the handle was acquired with.)
#[repr(C)]
pub struct etcdlock_health {
    /// ETCDLOCK_HEALTH_HELD, ETCDLOCK_HEALTH_LOST or ETCDLOCK_HEALTH_RELEASED.
    pub state: c_int,
    /// An ETCDLOCK_LOST_* reason when `state` is ETCDLOCK_HEALTH_LOST, else 0.
    pub lost_reason: c_int,
    /// Safe to act as the holder now: held, and its exclusivity not in doubt.
    pub ok: bool,
    /// The hold's fencing token.
    pub fencing_token: i64,
    /// The lease the hold lives on.
    pub lease_id: i64,
    /// Milliseconds, from when the view was taken, that no other client can hold it; -1 when
    /// another may hold it already or it was released.
    pub exclusive_for_ms: i64,
}

/// Writes `h` to `out` (checked for NULL first: nothing written then).
pub(crate) fn fill(out: *mut etcdlock_health, h: impl FnOnce() -> FfiResult<Health>) -> c_int {
    ffi::status(|| {
        if out.is_null() {
            return Err(invalid("out must not be NULL"));
        }
        let h = h()?;
        let state = match h.state {
            HoldState::Held => ETCDLOCK_HEALTH_HELD,
            HoldState::Lost(_) => ETCDLOCK_HEALTH_LOST,
            // A C handle exists only once acquired: never idle.
            HoldState::Released | HoldState::Idle => ETCDLOCK_HEALTH_RELEASED,
        };
        let view = etcdlock_health {
            state,
            lost_reason: h.lost_reason().map_or(0, callback::reason_code),
            ok: h.is_ok(),
            fencing_token: h.fencing_token,
            lease_id: h.lease_id,
            exclusive_for_ms: h.exclusive_for().map_or(-1, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
        };
        // SAFETY: checked non-NULL above; points to writable memory (caller's contract).
        unsafe { out.write(view) };
        Ok(())
    })
}
