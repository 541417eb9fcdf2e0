//! `etcdlock run` as a process against a real etcd: exclusion, exit statuses, signals, and the
//! command stopped when the lock is lost.

use crate::common::*;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

/// A shell command that records its interval under the lock in `file`: "start TOKEN NS" and
/// "end TOKEN NS".
fn recorder(file: &str, hold: &str) -> String {
    format!(
        r#"echo "start $ETCDLOCK_FENCING_TOKEN $(date +%s%N)" >> {file}; sleep {hold}; echo "end $ETCDLOCK_FENCING_TOKEN $(date +%s%N)" >> {file}"#
    )
}

/// (token, start ns, end ns) of each recorded interval, in start order.
fn intervals(text: &str) -> Vec<(i64, i64, i64)> {
    let mut starts = std::collections::HashMap::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let (token, at): (i64, i64) = (w[1].parse().unwrap(), w[2].parse().unwrap());
        match w[0] {
            "start" => {
                starts.insert(token, at);
            }
            _ => out.push((token, starts[&token], at)),
        }
    }
    out.sort_by_key(|i| i.1);
    out
}

// covers: CLI-RUN-001
#[test]
fn two_runs_on_one_name_never_overlap_and_go_in_token_order() {
    let (name, dir) = (name("overlap"), Dir::new("overlap"));
    let script = recorder(&dir.file("log"), "0.2");
    let runs: Vec<_> = (0..4).map(|_| spawn(&["run", &name, "--shell", "--", &script])).collect();
    for run in runs {
        let out = wait_output(run, LIMIT);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let iv = intervals(&dir.read("log"));
    assert_eq!(iv.len(), 4, "{iv:?}");
    for pair in iv.windows(2) {
        assert!(pair[0].2 <= pair[1].1, "two commands ran at once: {pair:?}");
        assert!(pair[0].0 < pair[1].0, "tokens out of order: {pair:?}");
    }
    assert!(keys_under(&format!("{name}/")).is_empty());
}

// covers: CLI-RUN-ENV-001
#[test]
fn the_command_sees_its_lock_and_its_exit_status_is_passed_on() {
    let (name, dir) = (name("env"), Dir::new("env"));
    let script = format!(
        r#"echo "$ETCDLOCK_NAME $ETCDLOCK_KEY $ETCDLOCK_FENCING_TOKEN $ETCDLOCK_LEASE $ETCD_LOCK_KEY $ETCD_LOCK_REV $ETCDLOCK_ENDPOINTS" > {}; exit 7"#,
        dir.file("env")
    );
    let out = output(&["run", &name, "--shell", "--", &script], LIMIT);
    assert_eq!(code(&out), 7, "{}", stderr(&out));
    let env = dir.read("env");
    let w: Vec<&str> = env.split_whitespace().collect();
    assert_eq!(w.len(), 7, "{env:?}");
    assert_eq!(w[0], name);
    assert!(w[1].starts_with(&format!("{name}/")) && w[1].ends_with(w[3]), "{env:?}");
    assert!(w[2].parse::<i64>().unwrap() > 0);
    assert_eq!((w[4], w[5]), (w[1], w[2]), "etcdctl's variables: the key and its create revision");
    assert_eq!(w[6], endpoint());
    // Without --shell the arguments go as they are; a missing program is 127, nothing left.
    let out = output(&["run", &name, "--", "sh", "-c", "exit 3"], LIMIT);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    let out = output(&["run", &name, "--", "/nonexistent/program"], LIMIT);
    assert_eq!(code(&out), 127, "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot run"), "{}", stderr(&out));
    assert!(keys_under(&format!("{name}/")).is_empty());
}

// covers: CLI-RUN-LEFTOVER-001
#[test]
fn what_the_command_leaves_running_stops_before_the_lock_is_released() {
    let (name, dir) = (name("leftover"), Dir::new("leftover"));
    // A background process that ignores SIGTERM outlives the command.
    let bg_file = dir.file("bg");
    let script = format!("sh -c 'trap \"\" TERM; echo $$ > {bg_file}; while true; do sleep 0.05; done' & while [ ! -s {bg_file} ]; do sleep 0.01; done");
    let started = Instant::now();
    let out = output(&["run", "--kill-grace", "0.5", &name, "--shell", "--", &script], LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let bg: i32 = dir.read("bg").trim().parse().unwrap();
    assert!(dead(bg), "the background process outlived the lock");
    assert!(started.elapsed() >= Duration::from_millis(500), "SIGKILL only after the grace");
    assert!(keys_under(&format!("{name}/")).is_empty());
}

/// A run (with `extra` options) that holds `name` until the file `release` exists; returns
/// once it holds.
fn holder(name: &str, dir: &Dir, extra: &[&str]) -> std::process::Child {
    let script = format!("echo $ETCDLOCK_KEY > {}; while [ ! -e {} ]; do sleep 0.02; done", dir.file("holder"), dir.file("release"));
    let mut args = vec!["run"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[name, "--shell", "--", &script]);
    let child = spawn(&args);
    assert!(eventually(LIMIT, || !dir.read("holder").is_empty()), "the holder never ran");
    child
}

fn release(dir: &Dir) {
    std::fs::write(dir.file("release"), "").unwrap();
}

// covers: CLI-RUN-BUSY-001
#[test]
fn a_busy_lock_exits_with_the_conflict_code_and_leaves_no_key() {
    let (name, dir) = (name("busy"), Dir::new("busy"));
    let held = holder(&name, &dir, &[]);
    let started = Instant::now();
    let out = output(&["run", "--timeout", "0", "--conflict-exit-code", "9", &name, "--", "true"], LIMIT);
    assert_eq!(code(&out), 9, "{}", stderr(&out));
    assert!(stderr(&out).contains("is busy"), "{}", stderr(&out));
    let out = output(&["run", "--timeout", "0.3", &name, "--", "true"], LIMIT);
    assert_eq!(code(&out), 1, "the default conflict code; {}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(keys_under(&format!("{name}/")).len(), 1, "only the holder's key");
    release(&dir);
    assert_eq!(code(&wait_output(held, LIMIT)), 0);
}

// covers: CLI-RUN-SIGWAIT-001
#[test]
fn a_signal_while_waiting_leaves_the_queue() {
    let (name, dir) = (name("sigwait"), Dir::new("sigwait"));
    let held = holder(&name, &dir, &[]);
    for (sig, status) in [(libc::SIGTERM, 143), (libc::SIGINT, 130), (libc::SIGHUP, 129)] {
        let waiting = spawn(&["run", &name, "--", "touch", &dir.file("ran")]);
        assert!(eventually(LIMIT, || keys_under(&format!("{name}/")).len() == 2), "the waiter never queued");
        signal(waiting.id(), sig);
        let out = wait_output(waiting, LIMIT);
        assert_eq!(code(&out), status, "{}", stderr(&out));
        assert_eq!(keys_under(&format!("{name}/")).len(), 1, "the waiter's key is gone");
    }
    release(&dir);
    assert_eq!(code(&wait_output(held, LIMIT)), 0);
    assert!(dir.read("ran").is_empty() && !std::path::Path::new(&dir.file("ran")).exists(), "an interrupted waiter ran its command");
}

// covers: CLI-RUN-SIGHOLD-001
#[test]
fn a_signal_while_holding_goes_to_the_command_and_the_lock_is_released_after_it() {
    let (name, dir) = (name("sighold"), Dir::new("sighold"));
    let script = format!("trap 'echo got TERM > {}; exit 3' TERM; echo up > {}; while true; do sleep 0.02; done", dir.file("trap"), dir.file("up"));
    let run = spawn(&["run", &name, "--shell", "--", &script]);
    assert!(eventually(LIMIT, || !dir.read("up").is_empty()));
    signal(run.id(), libc::SIGTERM);
    let out = wait_output(run, LIMIT);
    assert_eq!(code(&out), 3, "the command's own status; {}", stderr(&out));
    assert_eq!(dir.read("trap").trim(), "got TERM");
    assert!(keys_under(&format!("{name}/")).is_empty());
}

// covers: CLI-RUN-LOST-001
#[test]
fn a_deleted_lock_stops_the_whole_process_group_within_a_second() {
    let (name, dir) = (name("lost"), Dir::new("lost"));
    // sh, a background grandchild that ignores nothing, and one that ignores SIGTERM.
    let script = format!(
        "sleep 100 & echo $! > {g1}; sh -c 'trap \"\" TERM; echo $$ > {g2}; while true; do sleep 0.05; done' & echo $$ > {sh}; echo $ETCDLOCK_KEY > {key}; wait",
        g1 = dir.file("g1"),
        g2 = dir.file("g2"),
        sh = dir.file("sh"),
        key = dir.file("key")
    );
    let run = spawn(&["run", "--kill-grace", "30", &name, "--shell", "--", &script]);
    assert!(eventually(LIMIT, || ["g1", "g2", "sh", "key"].iter().all(|f| dir.read(f).ends_with('\n'))));
    let pids: Vec<i32> = ["g1", "g2", "sh"].iter().map(|f| dir.read(f).trim().parse().unwrap()).collect();
    let deleted = shared().etcdctl(&["del", dir.read("key").trim()]);
    assert!(deleted.status.success());
    let at = Instant::now();
    assert!(eventually(Duration::from_secs(1), || pids.iter().all(|&p| dead(p))), "still running 1 s after the delete: {pids:?}");
    let took = at.elapsed();
    let out = wait_output(run, LIMIT);
    assert_eq!(code(&out), 75, "{}", stderr(&out));
    assert!(stderr(&out).contains("key_deleted"), "{}", stderr(&out));
    eprintln!("group gone {took:?} after the delete");
}

// covers: CLI-RUN-PAUSE-001
#[test]
fn a_holder_frozen_past_its_ttl_kills_its_command_when_it_wakes_before_it_runs_on() {
    let (name, dir) = (name("pause"), Dir::new("pause"));
    // The command writes a tick every 20 ms, and one more if it gets to handle SIGTERM.
    let ticks_file = dir.file("ticks");
    let script = format!("trap 'echo t >> {ticks_file}; exit 1' TERM; echo $$ > {}; while true; do echo t >> {ticks_file}; sleep 0.02; done", dir.file("pid"));
    let run = spawn(&["run", "--ttl", "2", &name, "--shell", "--", &script]);
    assert!(eventually(LIMIT, || dir.read("pid").ends_with('\n') && !dir.read("ticks").is_empty()));
    let child: i32 = dir.read("pid").trim().parse().unwrap();
    // Freeze both, as a paused VM or container would be; past the TTL another takes the lock.
    signal(run.id(), libc::SIGSTOP);
    // SAFETY: stops the process group of the command this test started.
    assert_eq!(unsafe { libc::killpg(child, libc::SIGSTOP) }, 0);
    std::thread::sleep(Duration::from_millis(200));
    let ticks = dir.read("ticks").len();
    let next = spawn(&["run", "--timeout", "20", &name, "--", "true"]);
    assert_eq!(code(&wait_output(next, LIMIT)), 0, "another run took the lock after the TTL");
    // Only etcdlock wakes: it must kill the command before the command runs again.
    signal(run.id(), libc::SIGCONT);
    let out = wait_output(run, LIMIT);
    assert_eq!(code(&out), 75, "{}", stderr(&out));
    assert!(dead(child), "the command survived");
    assert_eq!(dir.read("ticks").len(), ticks, "the command ran on after waking with a stale lock");
    assert!(stderr(&out).contains("expired"), "{}", stderr(&out));
}

// covers: CLI-RUN-PERMITS-001
#[test]
fn permits_3_runs_at_most_3_commands_at_once() {
    let (name, dir) = (name("permits"), Dir::new("permits"));
    let script = recorder(&dir.file("log"), "0.5");
    let runs: Vec<_> = (0..6).map(|_| spawn(&["run", "--permits", "3", &name, "--shell", "--", &script])).collect();
    for run in runs {
        let out = wait_output(run, LIMIT);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let iv = intervals(&dir.read("log"));
    assert_eq!(iv.len(), 6);
    let most = iv.iter().map(|a| iv.iter().filter(|b| b.1 <= a.1 && a.1 < b.2).count()).max().unwrap();
    assert_eq!(most, 3, "at most 3 at once, and 3 reached: {iv:?}");
    // A participant that disagrees on N is told so and changes nothing.
    let held = holder(&name, &dir, &["--permits", "3"]);
    let out = output(&["run", "--permits", "2", &name, "--", "touch", &dir.file("ran")], LIMIT);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("3"), "names the count in use: {}", stderr(&out));
    assert_eq!(keys_under(&format!("{name}/")).len(), 1, "only the holder's key");
    release(&dir);
    assert_eq!(code(&wait_output(held, LIMIT)), 0);
    assert!(!std::path::Path::new(&dir.file("ran")).exists());
}

// covers: CLI-USAGE-001
#[test]
fn bad_input_is_one_line_and_a_distinct_status() {
    let name = name("usage");
    let cases: [(&[&str], i32, &str); 5] = [
        (&["run", "--ttl", "0", &name, "--", "true"], 2, "INVALID_ARGUMENT"),
        (&["run", &name], 2, "CMD"),
        (&["run", "--timeout=-1", &name, "--", "true"], 2, "seconds"),
        (&["run", "--user", "root", &name, "--", "true"], 2, "password"),
        (&["status", ""], 2, "INVALID_ARGUMENT"),
    ];
    for (args, status, says) in cases {
        let out = output(args, LIMIT);
        assert_eq!(code(&out), status, "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked") && !stderr(&out).contains("backtrace"), "{}", stderr(&out));
    }
    // Nobody listens there: unavailable within the connect timeout.
    let unreachable = format!("http://127.0.0.1:{}", free_port());
    let started = Instant::now();
    let out = output(&["run", "--endpoints", &unreachable, "--connect-timeout", "0.5", &name, "--", "true"], LIMIT);
    assert_eq!(code(&out), 69, "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(keys_under(&format!("{name}/")).is_empty());
}

// covers: CLI-AUTH-001
#[test]
fn a_user_and_password_from_the_environment_or_a_file_and_never_shown() {
    let etcd = Etcd::start(1);
    for args in [&["user", "add", "root:s3cret-pw"][..], &["user", "grant-role", "root", "root"], &["auth", "enable"]] {
        assert!(etcd.etcdctl(args).status.success(), "{args:?}");
    }
    let dir = Dir::new("auth");
    std::fs::write(dir.file("pw"), "s3cret-pw\n").unwrap();
    let with = |env: &[(&str, &str)], args: &[&str]| {
        let mut c = etcdlock(args);
        c.env("ETCDLOCK_ENDPOINTS", &etcd.endpoints()[0]).env("ETCDLOCK_USER", "root").env_remove("ETCDLOCK_PASSWORD");
        c.envs(env.iter().copied()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        wait_output(c.spawn().unwrap(), LIMIT)
    };
    let mut shown = Vec::new();
    let out = with(&[("ETCDLOCK_PASSWORD", "s3cret-pw")], &["run", "--verbose", "auth-lock", "--", "true"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // --verbose: the library's events, the same as every binding's logs.
    assert!(stderr(&out).contains("lock acquired") && stderr(&out).contains("lock released"), "{}", stderr(&out));
    shown.push(out);
    let out = with(&[("ETCDLOCK_PASSWORD_FILE", &dir.file("pw"))], &["run", "auth-lock", "--", "true"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = with(&[("ETCDLOCK_PASSWORD", "wrong-pw")], &["run", "--verbose", "auth-lock", "--", "true"]);
    assert_eq!(code(&out), 77, "{}", stderr(&out));
    assert!(stderr(&out).contains("AUTH"), "{}", stderr(&out));
    shown.push(out);
    shown.push(with(&[("ETCDLOCK_PASSWORD", "s3cret-pw")], &["run", "--help"]));
    for out in &shown {
        let text = format!("{}{}", stderr(out), String::from_utf8_lossy(&out.stdout));
        assert!(!text.contains("s3cret-pw") && !text.contains("wrong-pw"), "a password was shown: {text}");
    }
}
