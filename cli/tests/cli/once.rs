//! `etcdlock run --once-per DURATION NAME -- CMD` as processes: triggers of one period run the
//! command once, a failed or killed run leaves the period to the next trigger, bad input.

use crate::common::*;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// `sh -c` appending a line to `file`.
fn record(file: &str) -> String {
    format!("echo \"$ETCDLOCK_PERIOD_SLOT $ETCDLOCK_FENCING_TOKEN\" >> {file}")
}

/// `sh -c` appending a line to `file`, then exiting `code`.
fn append(file: &str, code: i32) -> String {
    format!("{}; exit {code}", record(file))
}

// covers: CLI-ONCE-001
#[test]
fn triggers_of_one_period_run_the_command_once() {
    let (dir, job) = (Dir::new("once"), name("once"));
    let file = dir.file("runs");
    let cmd = append(&file, 0);
    let runs: Vec<_> = (0..3).map(|_| spawn(&["run", "--once-per", "1h", &job, "--", "sh", "-c", &cmd])).collect();
    for r in runs {
        let out = wait_output(r, LIMIT);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    assert_eq!(dir.read("runs").lines().count(), 1, "ran {:?}", dir.read("runs"));
    let later = output(&["run", "--once-per", "1h", &job, "--", "sh", "-c", &cmd], LIMIT);
    assert_eq!(code(&later), 0);
    assert!(stderr(&later).contains("done or under way elsewhere"), "{}", stderr(&later));
    let told = output(&["run", "--once-per", "1h", "--conflict-exit-code", "7", &job, "--", "sh", "-c", &cmd], LIMIT);
    assert_eq!(code(&told), 7);
    assert_eq!(dir.read("runs").lines().count(), 1);
    // Only the period's done mark is left (it expires by itself).
    let left = keys_under(&format!("{job}/"));
    assert!(left.len() == 1 && left[0].starts_with(&format!("{job}/done/")), "{left:?}");
}

// covers: CLI-ONCE-002
#[test]
fn a_failed_or_killed_run_leaves_the_period_to_the_next_trigger() {
    let (dir, job) = (Dir::new("once-retry"), name("once-retry"));
    let file = dir.file("runs");
    let failed = output(&["run", "--once-per", "1h", &job, "--", "sh", "-c", &append(&file, 3)], LIMIT);
    assert_eq!(code(&failed), 3, "the command's status is passed on");
    let killed = spawn(&["run", "--once-per", "1h", "--ttl", "2", &job, "--", "sh", "-c", &format!("{}; sleep 60", record(&file))]);
    assert!(eventually(Duration::from_secs(10), || dir.read("runs").lines().count() == 2), "the second trigger did not run");
    signal(killed.id(), libc::SIGKILL);
    let mut killed = killed;
    let _ = killed.wait();
    // Its claim goes with its lease (TTL 2): a trigger after that runs the job.
    let ran = eventually(Duration::from_secs(10), || {
        let again = output(&["run", "--once-per", "1h", &job, "--", "sh", "-c", &append(&file, 0)], LIMIT);
        assert_eq!(code(&again), 0, "{}", stderr(&again));
        dir.read("runs").lines().count() == 3
    });
    assert!(ran, "no trigger ran the killed run's job: {}", dir.read("runs"));
    let tokens: Vec<i64> = dir.read("runs").lines().map(|l| l.split(' ').nth(1).unwrap().parse().unwrap()).collect();
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "tokens {tokens:?}");
    let done = output(&["run", "--once-per", "1h", &job, "--", "sh", "-c", &append(&file, 0)], LIMIT);
    assert_eq!(code(&done), 0);
    assert_eq!(dir.read("runs").lines().count(), 3, "ran after the period was done");
}

// covers: CLI-ONCE-USAGE-001
#[test]
fn bad_once_per_input_is_refused() {
    let job = name("once-usage");
    for args in [
        vec!["run", "--once-per", "soon", job.as_str(), "--", "true"],
        vec!["run", "--once-per", "500ms", job.as_str(), "--", "true"],
        vec!["run", "--once-per", "1h", "--permits", "2", job.as_str(), "--", "true"],
        vec!["run", "--once-per", "1h", "--timeout", "5", job.as_str(), "--", "true"],
    ] {
        let out = output(&args, LIMIT);
        assert_ne!(code(&out), 0, "{args:?}");
        assert_eq!(stderr(&out).trim().lines().count(), 1, "{args:?}: {}", stderr(&out));
    }
    assert!(keys_under(&job).is_empty());
}
