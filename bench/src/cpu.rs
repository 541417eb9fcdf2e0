//! The bench process's own CPU time, for the CPU-per-cycle column: a lock library's cost is also
//! the CPU it takes from the application, not only its latency.

use std::time::Duration;

/// User and system CPU time of this whole process so far (every thread: the runtime's workers
/// and the callers).
pub fn process_cpu() -> Duration {
    // SAFETY: getrusage fills the struct we own; RUSAGE_SELF is always valid.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// CPU time taken since `start` ([`process_cpu`]), in microseconds per cycle.
pub fn per_cycle(start: Duration, cycles: u64) -> Option<f64> {
    (cycles > 0).then(|| (process_cpu().saturating_sub(start)).as_secs_f64() * 1e6 / cycles as f64)
}
