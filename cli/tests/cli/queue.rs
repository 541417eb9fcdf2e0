//! `etcdlock queue put` and `etcdlock queue work` as processes against a real etcd: tasks in,
//! commands run with the payload and acked or nacked, a lost claim or a killed worker stopping
//! the command, signals, bad input, and `etcdlock status` of a queue.

use crate::common::*;
use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

/// `etcdlock queue put ARGS`: its id, once it succeeded.
fn put(args: &[&str]) -> String {
    let mut all = vec!["queue", "put"];
    all.extend_from_slice(args);
    let out = output(&all, LIMIT);
    assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!id.is_empty() && !id.contains('\n'), "one id: {id:?}");
    id
}

/// `etcdlock queue put ARGS` with `input` on its stdin.
fn put_stdin(args: &[&str], input: &[u8]) -> String {
    let mut all = vec!["queue", "put"];
    all.extend_from_slice(args);
    let mut c = etcdlock(&all);
    let mut child = c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = wait_output(child, LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `etcdlock queue work ARGS`, started.
fn work(args: &[&str]) -> Child {
    let mut all = vec!["queue", "work"];
    all.extend_from_slice(args);
    spawn(&all)
}

fn read_pid(dir: &Dir, file: &str) -> i32 {
    dir.read(file).trim().parse().unwrap_or_else(|_| panic!("no pid in {file}: {:?}", dir.read(file)))
}

/// CPU seconds (user + system) process `pid` used so far.
fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    // state is field 3; utime and stime are fields 14 and 15 (1-based), so 11 and 12 here.
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    // SAFETY: sysconf only reads a constant.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// A worker process killed if a test fails with it running, so that nothing runs on.
struct Worker(Option<Child>);

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Worker {
    fn id(&self) -> u32 {
        self.0.as_ref().expect("running").id()
    }
    fn output(&mut self) -> std::process::Output {
        wait_output(self.0.take().expect("running"), LIMIT)
    }
}

// covers: CLI-QUEUE-001
#[test]
fn put_then_work_runs_the_command_with_the_payload_and_acks() {
    let (name, dir) = (name("queue-basic"), Dir::new("queue-basic"));
    let first = put(&[&name, "--data", "hello\nworld"]);
    assert!(first.len() == 32 && first.chars().all(|c| c.is_ascii_hexdigit()), "a random id: {first:?}");
    let second = put_stdin(&[&name, "--id", "job-2", "--priority", "-3"], b"from stdin \x01\x02");
    assert_eq!(second, "job-2");
    // Each task: its payload (stdin) in a file named after its id, and its variables.
    let script = format!(
        r#"cat > {d}/"$ETCDLOCK_TASK_ID".in; echo "$ETCDLOCK_QUEUE $ETCDLOCK_TASK_ATTEMPT $ETCDLOCK_TASK_PRIORITY $ETCDLOCK_FENCING_TOKEN $ETCDLOCK_ENDPOINTS" > {d}/"$ETCDLOCK_TASK_ID".env; echo "$ETCDLOCK_TASK_ID" >> {d}/order"#,
        d = dir.0.display()
    );
    let started = Instant::now();
    let out = wait_output(work(&["--timeout", "1", &name, "--shell", "--", &script]), LIMIT);
    assert_eq!(code(&out), 0, "drained, then the timeout: {}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(dir.read("order"), format!("{first}\njob-2\n"), "the higher priority first");
    assert_eq!(std::fs::read(dir.file(&format!("{first}.in"))).unwrap(), b"hello\nworld");
    assert_eq!(std::fs::read(dir.file("job-2.in")).unwrap(), b"from stdin \x01\x02");
    let env = |id: &str| dir.read(&format!("{id}.env")).split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let (a, b) = (env(&first), env("job-2"));
    assert_eq!((a[0].as_str(), a[1].as_str(), a[2].as_str(), a[4].as_str()), (name.as_str(), "1", "0", endpoint().as_str()), "{a:?}");
    assert_eq!((b[1].as_str(), b[2].as_str()), ("1", "-3"), "{b:?}");
    let tokens: Vec<i64> = [&a[3], &b[3]].iter().map(|t| t.parse().unwrap()).collect();
    assert!(0 < tokens[0] && tokens[0] < tokens[1], "fencing tokens grow: {tokens:?}");
    assert!(keys_under(&format!("{name}/")).is_empty(), "acked tasks and the worker leave nothing: {:?}", keys_under(&format!("{name}/")));
}

// covers: CLI-QUEUE-NACK-001
#[test]
fn a_failing_command_nacks_and_the_next_delivery_is_attempt_2() {
    let (name, dir) = (name("queue-nack"), Dir::new("queue-nack"));
    put(&[&name, "--id", "t", "--data", "p"]);
    // Fails on its first delivery, succeeds on the second.
    let script = format!(r#"echo "$ETCDLOCK_TASK_ATTEMPT $(cat)" >> {}; [ "$ETCDLOCK_TASK_ATTEMPT" -ge 2 ]"#, dir.file("runs"));
    let out = wait_output(work(&["--timeout", "1", &name, "--shell", "--", &script]), LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(dir.read("runs"), "1 p\n2 p\n");
    assert!(stderr(&out).contains("exited with status 1; given back"), "{}", stderr(&out));
    assert!(keys_under(&format!("{name}/")).is_empty(), "acked on attempt 2");
    // With --once the exit is the command's; after --max-attempts deliveries, the dead letters.
    put(&[&name, "--id", "d", "--data", "p"]);
    for attempt in 1..=2 {
        let out = wait_output(work(&["--once", "--max-attempts", "2", &name, "--shell", "--", "exit 3"]), LIMIT);
        assert_eq!(code(&out), 3, "{}", stderr(&out));
        let after = if attempt == 1 { "given back" } else { "moved to the dead letters" };
        assert!(stderr(&out).contains(&format!("(attempt {attempt} of 2)")) && stderr(&out).contains(after), "{}", stderr(&out));
    }
    assert_eq!(keys_under(&format!("{name}/")), [format!("{name}/dead/d"), format!("{name}/id/d")]);
    // Nothing left to claim: --once with a timeout exits 1.
    let out = wait_output(work(&["--once", "--timeout", "0.5", &name, "--", "true"]), LIMIT);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("no task"), "{}", stderr(&out));
    // A command that cannot run: its task goes back and the worker stops (127), rather than
    // sending every task to the dead letters.
    put(&[&name, "--id", "m", "--data", "p"]);
    put(&[&name, "--id", "n", "--data", "p"]);
    let out = wait_output(work(&["--timeout", "5", &name, "--", "/nonexistent/program"]), LIMIT);
    assert_eq!(code(&out), 127, "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot run"), "{}", stderr(&out));
    let out = output(&["status", "--json", &name], LIMIT);
    let json = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(json.contains(r#""queue":{"pending":2,"#) && json.contains(r#""dead":1,"#), "{json}");
}

// covers: CLI-QUEUE-ID-001
#[test]
fn a_put_with_the_id_of_a_task_in_the_queue_changes_nothing() {
    let (name, dir) = (name("queue-id"), Dir::new("queue-id"));
    assert_eq!(put(&[&name, "--id", "j1", "--data", "first"]), "j1");
    assert_eq!(put(&[&name, "--id", "j1", "--data", "second", "--priority", "9"]), "j1");
    let out = output(&["status", "--json", &name], LIMIT);
    assert!(String::from_utf8_lossy(&out.stdout).contains(r#""queue":{"pending":1,"#), "{}", String::from_utf8_lossy(&out.stdout));
    let script = format!("cat >> {}; echo >> {}", dir.file("got"), dir.file("got"));
    let out = wait_output(work(&["--once", &name, "--shell", "--", &script]), LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(dir.read("got"), "first\n");
    // Acked: the id is free again.
    assert_eq!(put(&[&name, "--id", "j1", "--data", "third"]), "j1");
    let out = wait_output(work(&["--once", &name, "--shell", "--", &script]), LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(dir.read("got"), "first\nthird\n");
    // Without an id, two puts are two tasks.
    assert_ne!(put(&[&name, "--data", "x"]), put(&[&name, "--data", "x"]));
}

/// The lease of the one claim key under `name`'s claims, in hex.
fn claim_lease(name: &str) -> String {
    let out = shared().etcdctl(&["get", "--prefix", &format!("{name}/claim/"), "-w", "json"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let leases: Vec<i64> = text.split(r#""lease":"#).skip(1).map(|s| s.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()).collect();
    assert_eq!(leases.len(), 1, "one claim: {text}");
    format!("{:x}", leases[0])
}

// covers: CLI-QUEUE-LOST-001
#[test]
fn a_lost_claim_stops_the_whole_process_group_and_the_task_comes_again() {
    let (name, dir) = (name("queue-lost"), Dir::new("queue-lost"));
    put(&[&name, "--id", "L", "--data", "payload"]);
    // sh, a background grandchild, and one that ignores SIGTERM; a grace that would be long.
    let script = format!(
        "sleep 100 & echo $! > {g1}; sh -c 'trap \"\" TERM; echo $$ > {g2}; while true; do sleep 0.05; done' & echo $$ > {sh}; wait",
        g1 = dir.file("g1"),
        g2 = dir.file("g2"),
        sh = dir.file("sh")
    );
    let mut worker = Worker(Some(work(&["--once", "--kill-grace", "30", &name, "--shell", "--", &script])));
    assert!(eventually(LIMIT, || ["g1", "g2", "sh"].iter().all(|f| dir.read(f).ends_with('\n'))), "the command never started");
    let pids: Vec<i32> = ["g1", "g2", "sh"].iter().map(|f| read_pid(&dir, f)).collect();
    // The worker's lease ends (as when etcd expires it): the claim is gone.
    let revoked = shared().etcdctl(&["lease", "revoke", &claim_lease(&name)]);
    assert!(revoked.status.success(), "{}", String::from_utf8_lossy(&revoked.stderr));
    let at = Instant::now();
    assert!(eventually(Duration::from_secs(1), || pids.iter().all(|&p| dead(p))), "still running 1 s after the claim was lost: {pids:?}");
    eprintln!("group gone {:?} after the revoke", at.elapsed());
    let out = worker.output();
    assert_eq!(code(&out), 75, "{}", stderr(&out));
    assert!(stderr(&out).contains("lost the claim") && stderr(&out).contains("delivered again"), "{}", stderr(&out));
    // Delivered again, to the next worker.
    let script = format!(r#"echo "$ETCDLOCK_TASK_ID $ETCDLOCK_TASK_ATTEMPT $(cat)" > {}"#, dir.file("again"));
    let out = wait_output(work(&["--once", "--timeout", "10", &name, "--shell", "--", &script]), LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(dir.read("again"), "L 2 payload\n");
    assert!(keys_under(&format!("{name}/")).is_empty());
}

// covers: CLI-QUEUE-ORPHAN-001
#[test]
fn a_killed_worker_takes_its_command_with_it_and_the_task_goes_to_another() {
    let (name, dir) = (name("queue-orphan"), Dir::new("queue-orphan"));
    put(&[&name, "--id", "K", "--data", "payload"]);
    let script = format!("sleep 100 & echo $! > {g}; echo $$ > {sh}; wait", g = dir.file("g"), sh = dir.file("sh"));
    let ttl = 5;
    let mut worker = Worker(Some(work(&["--once", "--ttl", &ttl.to_string(), &name, "--shell", "--", &script])));
    assert!(eventually(LIMIT, || ["g", "sh"].iter().all(|f| dir.read(f).ends_with('\n'))), "the command never started");
    let pids: Vec<i32> = ["g", "sh"].iter().map(|f| read_pid(&dir, f)).collect();
    signal(worker.id(), libc::SIGKILL);
    let killed = Instant::now();
    let _ = worker.0.as_mut().map(Child::wait);
    worker.0 = None;
    // The guardian kills the group at once; the grandchild would outlive a PDEATHSIG.
    assert!(eventually(Duration::from_secs(2), || pids.iter().all(|&p| dead(p))), "the command ran on after its worker was killed: {pids:?}");
    eprintln!("command's group gone {:?} after the SIGKILL", killed.elapsed());
    // The dead worker's claim ends with its lease, within the TTL; then another worker has it.
    let script = format!(r#"echo "$ETCDLOCK_TASK_ID $ETCDLOCK_TASK_ATTEMPT $(cat)" > {}"#, dir.file("again"));
    let out = wait_output(work(&["--once", "--timeout", "20", &name, "--shell", "--", &script]), LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(dir.read("again"), "K 2 payload\n");
    let took = killed.elapsed();
    assert!(took < Duration::from_secs(ttl + 3), "delivered again {took:?} after the kill (TTL {ttl} s)");
    eprintln!("delivered again {took:?} after the SIGKILL");
    assert!(keys_under(&format!("{name}/")).is_empty());
}

// covers: CLI-QUEUE-SIGNAL-001
#[test]
fn an_idle_worker_waits_without_spinning_and_a_signal_nacks_the_running_task() {
    let (name, dir) = (name("queue-signal"), Dir::new("queue-signal"));
    // The command traps TERM and exits 0 all the same: an interrupted task goes back.
    let script = format!(
        "trap 'echo TERM > {trap}; exit 0' TERM; echo $ETCDLOCK_TASK_ATTEMPT > {up}; while true; do sleep 0.02; done",
        trap = dir.file("trap"),
        up = dir.file("up")
    );
    let mut worker = Worker(Some(work(&[&name, "--shell", "--", &script])));
    // Idle: it waits for a task without spending CPU.
    assert!(eventually(LIMIT, || keys_under(&format!("{name}/workers/")).len() == 1), "the worker never waited");
    let cpu = cpu_secs(worker.id());
    std::thread::sleep(Duration::from_secs(2));
    let spent = cpu_secs(worker.id()) - cpu;
    assert!(spent < 0.1, "an idle worker used {spent} s of CPU in 2 s");
    put(&[&name, "--id", "S", "--data", "p"]);
    assert!(eventually(LIMIT, || dir.read("up") == "1\n"), "the task put later never ran");
    signal(worker.id(), libc::SIGTERM);
    let out = worker.output();
    assert_eq!(code(&out), 143, "{}", stderr(&out));
    assert_eq!(dir.read("trap"), "TERM\n", "the command got the signal");
    // Given back: the next delivery is attempt 2; then, idle again, SIGINT exits 130.
    let again = work(&["--timeout", "20", &name, "--shell", "--", "echo $ETCDLOCK_TASK_ATTEMPT > \"$0\"", &dir.file("second")]);
    let mut again = Worker(Some(again));
    assert!(eventually(LIMIT, || dir.read("second") == "2\n"), "the nacked task never came again");
    assert!(eventually(LIMIT, || keys_under(&format!("{name}/items/")).is_empty() && keys_under(&format!("{name}/workers/")).len() == 1), "acked, then waiting");
    signal(again.id(), libc::SIGINT);
    let out = again.output();
    assert_eq!(code(&out), 130, "{}", stderr(&out));
    assert!(keys_under(&format!("{name}/")).is_empty(), "left: {:?}", keys_under(&format!("{name}/")));
}

// covers: CLI-QUEUE-USAGE-001
#[test]
fn bad_queue_input_is_one_line_exit_2_and_writes_nothing() {
    let name = name("queue-usage");
    let cases: [(&[&str], &str); 9] = [
        (&["queue", "put", &name, "--priority", "x", "--data", "p"], "--priority"),
        (&["queue", "put", &name, "--delay", "-1", "--data", "p"], "not a duration"),
        (&["queue", "put", &name, "--delay", "soon", "--data", "p"], "not a duration"),
        (&["queue", "put", "", "--data", "p"], "INVALID_ARGUMENT"),
        (&["queue", "put", &name, "--id", "", "--data", "p"], "--id"),
        (&["queue", "work", "--max-attempts", "0", &name, "--", "true"], "--max-attempts"),
        (&["queue", "work", "--ttl", "0", &name, "--", "true"], "INVALID_ARGUMENT"),
        (&["queue", "work", "", "--", "true"], "INVALID_ARGUMENT"),
        (&["queue", "work", &name], "CMD"),
    ];
    for (args, says) in cases {
        let out = output(args, LIMIT);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.stdout.is_empty(), "no id printed: {args:?}");
    }
    assert!(keys_under(&format!("{name}/")).is_empty() && keys_under("/items/").is_empty() && keys_under("/id/").is_empty(), "something was written");
}

// covers: CLI-QUEUE-STATUS-001
#[test]
fn status_of_a_queue_shows_its_counts_its_claims_and_waiting_workers() {
    let (name, dir) = (name("queue-status"), Dir::new("queue-status"));
    // One dead, then pending at two priorities, one delayed, one claimed.
    put(&[&name, "--id", "dead-one", "--priority", "9", "--data", "p"]);
    let out = wait_output(work(&["--once", "--max-attempts", "1", &name, "--", "false"]), LIMIT);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    put(&[&name, "--id", "busy", "--priority", "5", "--data", "p"]);
    put(&[&name, "--id", "p1", "--data", "p"]);
    put(&[&name, "--id", "p2", "--priority", "2", "--data", "p"]);
    put(&[&name, "--id", "p3", "--data", "p"]);
    put(&[&name, "--id", "later", "--delay", "1m", "--data", "p"]);
    let script = format!("echo $ETCDLOCK_TASK_ID > {}; sleep 100", dir.file("claimed"));
    let mut busy = Worker(Some(work(&["--once", &name, "--shell", "--", &script])));
    assert!(eventually(LIMIT, || dir.read("claimed") == "busy\n"), "the worker never claimed");
    let out = output(&["status", &name], LIMIT);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(code(&out), 0, "{text}{}", stderr(&out));
    assert!(text.contains(&format!("{name}: task queue, 3 pending, 1 delayed, 1 claimed, 1 dead")), "{text}");
    assert!(text.contains("pending by priority: 2: 1, 0: 2"), "{text}");
    let row = text.lines().find(|l| l.starts_with("busy ")).unwrap_or_else(|| panic!("no claim row: {text}"));
    assert!(row.contains(&format!(":{} ", busy.id())), "the worker's host:pid: {row}");
    let out = output(&["status", "--json", &name], LIMIT);
    let json = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        json.contains(r#""queue":{"pending":3,"pending_by_priority":{"2":1,"0":2},"delayed":1,"claimed":1,"dead":1,"#),
        "{json}"
    );
    assert!(json.contains(r#""claims":[{"id":"busy","worker":""#) && json.contains(&format!(r#":{}","fencing_token":"#, busy.id())), "{json}");
    signal(busy.id(), libc::SIGTERM);
    assert_eq!(code(&busy.output()), 143);
    // An empty queue with a worker waiting for a task.
    let idle_name = crate::common::name("queue-status-idle");
    let mut idle = Worker(Some(work(&["--once", &idle_name, "--", "true"])));
    assert!(eventually(LIMIT, || keys_under(&format!("{idle_name}/workers/")).len() == 1), "the worker never waited");
    let out = output(&["status", &idle_name], LIMIT);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(code(&out), 0, "{text}");
    assert!(text.contains("0 pending") && text.contains("1 waiting for a task: ") && text.contains(&format!(":{}", idle.id())), "{text}");
    put(&[&idle_name, "--data", "wake"]);
    assert_eq!(code(&idle.output()), 0);
    let out = output(&["status", &idle_name], LIMIT);
    assert_eq!(code(&out), 1, "nothing left: {}", String::from_utf8_lossy(&out.stdout));
}
