//! For tests (the fault tool kit): stop the next step of this process that reaches a named
//! point until the test resumes it, so that an interleaving which otherwise lies between two
//! instructions on different threads happens every time. Unarmed, a point costs one atomic load.
//!
//! Points: `"acquired"` — a lock's wait has completed and the guard is built, before the
//! acquire's last checks (cancelled, closed) decide whether the caller gets it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

static ARMED: AtomicBool = AtomicBool::new(false);
static PAUSE: Mutex<Option<Arc<Pause>>> = Mutex::new(None);

/// A pause armed by [`pause_at_for_tests`]: the first step to reach its point waits there.
pub struct Pause {
    point: &'static str,
    reached: Semaphore,
    resume: Semaphore,
}

impl Pause {
    /// Waits until a step has reached the point (and is waiting there).
    pub async fn reached(&self) {
        let _ = self.reached.acquire().await.map(|p| p.forget());
    }

    /// Lets the step that waits at the point go on.
    pub fn resume(&self) {
        self.resume.add_permits(1);
    }
}

/// Arms a pause at `point` for the next step (of any client in this process) that reaches it.
/// Process-wide: use it in a test process of its own.
#[doc(hidden)]
pub fn pause_at_for_tests(point: &'static str) -> Arc<Pause> {
    let pause = Arc::new(Pause { point, reached: Semaphore::new(0), resume: Semaphore::new(0) });
    *PAUSE.lock().unwrap_or_else(|e| e.into_inner()) = Some(pause.clone());
    ARMED.store(true, Ordering::Release);
    pause
}

/// A point where an armed pause stops the step that reaches it first.
pub(crate) async fn at(point: &'static str) {
    if !ARMED.load(Ordering::Acquire) {
        return;
    }
    let pause = {
        let mut armed = PAUSE.lock().unwrap_or_else(|e| e.into_inner());
        match armed.as_ref() {
            Some(p) if p.point == point => {
                ARMED.store(false, Ordering::Release);
                armed.take()
            }
            _ => None,
        }
    };
    if let Some(p) = pause {
        p.reached.add_permits(1);
        let _ = p.resume.acquire().await.map(|p| p.forget());
    }
}
