//! ETCDLOCK_FENCE and `etcdlock fence check` as processes.

use crate::common::*;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

// covers: CLI-FENCE-001
#[test]
fn a_command_gets_its_fence_and_it_checks_only_while_held() {
    let (dir, lock) = (Dir::new("fence"), name("fence"));
    let file = dir.file("fence");
    let bin = env!("CARGO_BIN_EXE_etcdlock");
    let cmd = format!("echo \"$ETCDLOCK_FENCE\" > {file}; {bin} fence check \"$ETCDLOCK_FENCE\"");
    let out = output(&["run", &lock, "--", "sh", "-c", &cmd], LIMIT);
    assert_eq!(code(&out), 0, "the holder's own fence did not check: {}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("holds"));
    let fence = dir.read("fence").trim().to_string();
    assert!(fence.starts_with("etcdlock-fence.v1.q."), "{fence}");
    let after = output(&["fence", "check", &fence], LIMIT);
    assert_eq!(code(&after), 1, "a released acquisition's fence checked: {}", String::from_utf8_lossy(&after.stdout));
    let bad = output(&["fence", "check", "not-a-fence"], LIMIT);
    assert_eq!(code(&bad), 2);
    assert_eq!(stderr(&bad).trim().lines().count(), 1, "{}", stderr(&bad));
}
