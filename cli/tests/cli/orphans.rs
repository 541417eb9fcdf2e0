//! The command never outlives the lock, whatever happens to etcdlock itself: killed (SIGKILL),
//! frozen (SIGSTOP), or stopped from the terminal (SIGTSTP) while another `etcdlock run` waits
//! for the lock. The first command writes a timestamp every 20 ms; the second records its
//! interval under the lock; no timestamp of the first may fall inside it, and nothing of the
//! first may be left running. Also: a command is killed half the lease's margin after a loss by
//! expiry, and never starts on a lock lost before its spawn.

use crate::common::*;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

/// The first run and its command; on drop (a failed test too) both are killed, so that a
/// command the fix under test failed to stop does not run on after the test.
struct Ticking {
    run: Option<std::process::Child>,
    group: i32,
}

impl Drop for Ticking {
    fn drop(&mut self) {
        if self.group > 0 {
            // SAFETY: signals only the processes this test started.
            unsafe { libc::killpg(self.group, libc::SIGKILL) };
        }
        if let Some(run) = self.run.as_mut() {
            let _ = run.kill();
            let _ = run.wait();
        }
    }
}

/// `etcdlock run --ttl 2 NAME` of a command that ticks into `dir/ticks` (its pid, also its
/// group's id, in `dir/pid`), once its first tick is written.
fn ticking(name: &str, dir: &Dir) -> Ticking {
    let script = format!(
        "echo $$ > {pid}; while true; do date +%s%N >> {ticks}; sleep 0.02; done",
        pid = dir.file("pid"),
        ticks = dir.file("ticks")
    );
    let run = spawn(&["run", "--ttl", "2", name, "--shell", "--", &script]);
    let mut t = Ticking { run: Some(run), group: 0 };
    assert!(eventually(LIMIT, || dir.read("pid").ends_with('\n') && dir.read("ticks").ends_with('\n')), "the command never ticked");
    t.group = dir.read("pid").trim().parse().unwrap();
    t
}

impl Ticking {
    fn pid(&self) -> u32 {
        self.run.as_ref().expect("running").id()
    }

    /// etcdlock's exit, within LIMIT.
    fn output(&mut self) -> std::process::Output {
        wait_output(self.run.take().expect("running"), LIMIT)
    }
}

/// A second `etcdlock run NAME` that records when it held the lock: (start ns, end ns).
fn second_holder(name: &str, dir: &Dir) -> (i64, i64) {
    let script = format!("date +%s%N > {s}; sleep 1; date +%s%N > {e}", s = dir.file("start"), e = dir.file("end"));
    let out = wait_output(spawn(&["run", "--timeout", "20", name, "--shell", "--", &script]), LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    (dir.read("start").trim().parse().unwrap(), dir.read("end").trim().parse().unwrap())
}

/// The first command's ticks inside `(start, end)`.
fn ticks_inside(dir: &Dir, (start, end): (i64, i64)) -> Vec<i64> {
    dir.read("ticks").lines().filter_map(|l| l.trim().parse().ok()).filter(|t| (start..=end).contains(t)).collect()
}

/// Whether a live process is left in process group `group` (a zombie, dead but not yet
/// reaped by its stopped parent, is not).
fn group_alive(group: i32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else { return false };
    dir.flatten().filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok()).any(|stat| {
        // pid (comm) state ppid pgrp ...
        let Some((_, rest)) = stat.rsplit_once(')') else { return false };
        let f: Vec<&str> = rest.split_whitespace().collect();
        f.len() > 2 && f[0] != "Z" && f[2].parse() == Ok(group)
    })
}

// covers: CLI-RUN-ORPHAN-001
#[test]
fn a_killed_etcdlock_takes_its_command_with_it() {
    let (name, dir) = (name("orphan-kill"), Dir::new("orphan-kill"));
    let mut first = ticking(&name, &dir);
    let group = first.group;
    let killed = Instant::now();
    signal(first.pid(), libc::SIGKILL);
    let _ = first.run.as_mut().map(std::process::Child::wait);
    assert!(eventually(Duration::from_secs(2), || !group_alive(group)), "the command ran on after etcdlock was killed");
    eprintln!("command's group gone {:?} after the SIGKILL", killed.elapsed());
    let held = second_holder(&name, &dir);
    assert_eq!(ticks_inside(&dir, held), Vec::<i64>::new(), "the orphaned command wrote while another held the lock");
}

// covers: CLI-RUN-ORPHAN-002
#[test]
fn a_frozen_etcdlock_has_its_command_killed_before_another_can_hold() {
    let (name, dir) = (name("orphan-stop"), Dir::new("orphan-stop"));
    let mut first = ticking(&name, &dir);
    let group = first.group;
    // Only etcdlock freezes (a debugger, a frozen cgroup of its own): the command would run on.
    signal(first.pid(), libc::SIGSTOP);
    let held = second_holder(&name, &dir);
    assert!(!group_alive(group), "the command still runs");
    assert_eq!(ticks_inside(&dir, held), Vec::<i64>::new(), "the command wrote while another held the lock");
    signal(first.pid(), libc::SIGCONT);
    let out = first.output();
    assert_eq!(code(&out), 75, "{}", stderr(&out));
    assert!(keys_under(&format!("{name}/")).is_empty());
}

// covers: CLI-RUN-ORPHAN-003
#[test]
fn ctrl_z_stops_the_command_first_and_it_runs_on_only_while_the_lock_is_held() {
    let (name, dir) = (name("orphan-tstp"), Dir::new("orphan-tstp"));
    let mut first = ticking(&name, &dir);
    let group = first.group;
    // A short stop: the command stops with etcdlock and goes on when etcdlock is continued.
    signal(first.pid(), libc::SIGTSTP);
    std::thread::sleep(Duration::from_millis(300));
    let stopped = dir.read("ticks").len();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(dir.read("ticks").len(), stopped, "the command ran while etcdlock was stopped");
    signal(first.pid(), libc::SIGCONT);
    assert!(eventually(Duration::from_secs(5), || dir.read("ticks").len() > stopped), "the command did not go on");
    // A long one, past the TTL: another holds the lock meanwhile; continued, etcdlock ends
    // the command without letting it run again.
    signal(first.pid(), libc::SIGTSTP);
    let held = second_holder(&name, &dir);
    assert_eq!(ticks_inside(&dir, held), Vec::<i64>::new(), "the command wrote while another held the lock");
    let before = dir.read("ticks").len();
    signal(first.pid(), libc::SIGCONT);
    let out = first.output();
    assert_eq!(code(&out), 75, "{}", stderr(&out));
    assert!(!group_alive(group), "the command still runs");
    assert_eq!(dir.read("ticks").len(), before, "the command ran on after its lock was lost");
    assert!(keys_under(&format!("{name}/")).is_empty());
}

/// `etcdlock ARGS` through `proxy`, and its log (stderr), line by line as it comes, each with
/// the wall-clock nanoseconds it came at.
fn logged_through(proxy: &proxy::Proxy, args: &[&str]) -> (std::process::Child, std::sync::mpsc::Receiver<(i64, String)>) {
    let mut cmd = etcdlock(args);
    cmd.env("ETCDLOCK_ENDPOINTS", proxy.endpoint()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut run = cmd.spawn().unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    let err = run.stderr.take().unwrap();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for l in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i64;
            let _ = tx.send((now, l));
        }
    });
    (run, lines)
}

// covers: CLI-RUN-PRESPAWN-001
#[test]
fn a_lock_lost_between_the_acquire_and_the_spawn_never_starts_the_command() {
    // etcdlock's link is slow (700 ms each way): once it logs that it holds the lock, its fenced
    // write of the hold time (step 1 of docs/design.md's command line) reaches etcd 0.7 s later,
    // and its key is deleted in between. The command must then not start.
    let (name, dir) = (name("prespawn"), Dir::new("prespawn"));
    let proxy = proxy::Proxy::start(shared().members[0].client_port);
    let holder = spawn(&["run", &name, "--", "sleep", "1"]);
    assert!(eventually(LIMIT, || keys_under(&format!("{name}/")).len() == 1));
    let holders = keys_under(&format!("{name}/"));
    let script = format!("touch {}", dir.file("started"));
    let (mut run, lines) = logged_through(&proxy, &["run", "--verbose", &name, "--shell", "--", &script]);
    assert!(eventually(LIMIT, || keys_under(&format!("{name}/")).len() == 2), "etcdlock never queued");
    let key = keys_under(&format!("{name}/")).into_iter().find(|k| !holders.contains(k)).unwrap();
    proxy.delay(Duration::from_millis(700));
    let mut log = Vec::new();
    while !log.iter().any(|l: &String| l.contains("lock acquired")) {
        log.push(lines.recv_timeout(LIMIT).expect("etcdlock never logged the acquisition").1);
    }
    assert!(shared().etcdctl(&["del", &key]).status.success());
    assert_eq!(code(&wait_output(holder, LIMIT)), 0);
    let status = run.wait().unwrap();
    // The reader thread may not have passed on the last lines yet: read until it ends (at the
    // pipe's end of file), not only what has come.
    while let Ok((_, l)) = lines.recv_timeout(LIMIT) {
        log.push(l);
    }
    proxy.set(proxy::Mode::Pass);
    let log = log.join("\n");
    assert_eq!(status.code(), Some(75), "{log}");
    assert!(log.contains("before the command started"), "{log}");
    assert!(!std::path::Path::new(&dir.file("started")).exists(), "the command started on a lost lock: {log}");
}

// covers: CLI-RUN-KILLTIME-001
#[test]
fn a_command_that_ignores_sigterm_is_killed_half_the_margin_after_an_expiry() {
    // --ttl 10: the local deadline is 9 s after the last acknowledged keepalive, and etcd may
    // expire the lease 1 s (the margin) after it. etcdlock's link goes silent; the loss is
    // logged at the local deadline, and the command, which ignores SIGTERM, must be killed half
    // the margin (0.5 s) after it, leaving the other half, not at the end of the margin.
    let (name, dir) = (name("killtime"), Dir::new("killtime"));
    let proxy = proxy::Proxy::start(shared().members[0].client_port);
    let script = format!("trap '' TERM; while true; do date +%s%N >> {}; sleep 0.01; done", dir.file("ticks"));
    let (mut run, lines) = logged_through(&proxy, &["run", "--verbose", "--ttl", "10", "--kill-grace", "30", &name, "--shell", "--", &script]);
    assert!(eventually(LIMIT, || dir.read("ticks").ends_with('\n')), "the command never ticked");
    proxy.set(proxy::Mode::Blackhole);
    let lost_at = loop {
        let (at, line) = lines.recv_timeout(LIMIT).expect("etcdlock never logged the loss");
        if line.contains("lock lost") {
            break at;
        }
    };
    let status = run.wait().unwrap();
    proxy.set(proxy::Mode::Pass);
    assert_eq!(status.code(), Some(75));
    let last = numbers(&dir.read("ticks")).into_iter().flatten().max().unwrap();
    let after = Duration::from_nanos((last - lost_at).max(0) as u64);
    eprintln!("the command's last tick came {after:?} after the loss was logged");
    assert!(after < Duration::from_millis(750), "killed {after:?} after the loss: later than half the 1 s margin");
}
