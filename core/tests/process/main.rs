//! Tests of process-wide state (the shared runtime, the application's tracing subscriber, the
//! bindings' log sink), in one test binary whose every test runs alone in a process of its own:
//! the test, run in the usual way, runs this binary again for itself only (`alone!`). One binary,
//! not one per file: each test binary links the whole dependency set again (20-30 s of a fresh
//! release build apiece).
//!
//! A new test here starts with `alone!(its_name);`.

#[path = "../common/mod.rs"]
mod common;

mod clock;
mod events;
mod log_sink;
mod pause;
mod runtime;
mod spans;
mod spans_groups;

/// Set in the child process that runs one test alone.
const CHILD: &str = "ETCDLOCK_TEST_ALONE";

/// In a test: runs the test again, alone, in a child process (this binary with the test's
/// name, `--exact`), and returns from it with the child's verdict; in that child, goes on to
/// the test's body.
macro_rules! alone {
    ($test:ident) => {
        if crate::run_alone(module_path!(), stringify!($test)) {
            return;
        }
    };
}
pub(crate) use alone;

/// `true` (after checking the child's verdict) in the parent, `false` in the child.
pub fn run_alone(module: &str, test: &str) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return false;
    }
    // libtest names a test by its path below the crate: `events::a_release_...`.
    let name = format!("{}::{test}", module.split_once("::").map_or(module, |(_, m)| m));
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([name.as_str(), "--exact", "--nocapture", "--test-threads", "1"])
        .env(CHILD, "1")
        .output()
        .expect("run the test binary again");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    print!("{stdout}");
    eprint!("{stderr}");
    // A name that matched nothing would pass with no test run.
    assert!(out.status.success() && stdout.contains("test result: ok. 1 passed"), "{name} failed in its own process");
    true
}
