//! `etcdlock status` during contention, and `etcdlock elect` with `etcdctl elect`.

use crate::common::*;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

// covers: CLI-STATUS-001
#[test]
fn status_shows_the_holder_and_the_waiters_in_order() {
    let (name, dir) = (name("status"), Dir::new("status"));
    let out = output(&["status", &name], LIMIT);
    assert_eq!(code(&out), 1, "free: {}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("free"));

    // One holds until told; two wait, queued one after the other.
    let script = format!("echo $ETCDLOCK_KEY >> {}; while [ ! -e {} ]; do sleep 0.02; done; rm {}", dir.file("keys"), dir.file("go"), dir.file("go"));
    let mut runs: Vec<Child> = Vec::new();
    for n in 1..=3 {
        runs.push(spawn(&["run", &name, "--shell", "--", &script]));
        assert!(eventually(LIMIT, || keys_under(&format!("{name}/")).len() == n), "run {n} never queued");
    }
    assert!(eventually(LIMIT, || !dir.read("keys").is_empty()));
    let out = output(&["status", "--json", &name], LIMIT);
    assert_eq!(code(&out), 0, "held: {}", stderr(&out));
    let json = String::from_utf8_lossy(&out.stdout).into_owned();
    let holder_key = dir.read("keys").trim().to_string();
    assert!(json.contains(&format!(r#""holders":[{{"position":0,"holds":true,"key":"{holder_key}""#)), "{json}");
    assert_eq!(json.matches(r#""position":"#).count(), 3, "{json}");
    assert!(json.contains(r#""seconds":"#) && !json.contains(r#""seconds":null"#), "every key records its times: {json}");
    // Tokens in queue order.
    let tokens: Vec<i64> = json.split(r#""fencing_token":"#).skip(1).map(|s| s.split(',').next().unwrap().parse().unwrap()).collect();
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
    let table = output(&["status", &name], LIMIT);
    let text = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(text.contains("held, 2 waiting") && text.contains("holding") && text.contains("waiting"), "{text}");

    // The queue moves: each release hands on to the next, and status follows.
    for left in (0..3).rev() {
        std::fs::write(dir.file("go"), "").unwrap();
        assert!(eventually(LIMIT, || keys_under(&format!("{name}/")).len() == left));
    }
    for run in runs {
        assert_eq!(code(&wait_output(run, LIMIT)), 0);
    }
    assert_eq!(code(&output(&["status", &name], LIMIT)), 1);

    // A semaphore of 2 with 3 runs: two hold, one waits.
    let slots = crate::common::name("status-slots");
    let script = format!("while [ ! -e {} ]; do sleep 0.02; done", dir.file("slots-go"));
    let runs: Vec<Child> = (0..3).map(|_| spawn(&["run", "--permits", "2", &slots, "--shell", "--", &script])).collect();
    assert!(eventually(LIMIT, || keys_under(&format!("{slots}/")).len() == 3), "the runs never queued");
    let out = output(&["status", &slots], LIMIT);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("held by 2, 1 waiting"), "{text}");
    let rows: Vec<&str> = text.lines().skip(2).collect();
    let count = |word: &str| rows.iter().filter(|r| r.contains(word)).count();
    assert_eq!((count(" holding "), count(" waiting "), count(" permits=2 ")), (2, 1, 3), "{text}");
    std::fs::write(dir.file("slots-go"), "").unwrap();
    for run in runs {
        assert_eq!(code(&wait_output(run, LIMIT)), 0);
    }
}

/// Lines of `child`'s stdout, read on a thread.
fn lines(child: &mut Child) -> mpsc::Receiver<String> {
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Waits up to 10 s for a line equal to `want`.
fn expect_line(rx: &mpsc::Receiver<String>, want: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) if line == want => return,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("no line {want:?} within 10 s");
}

fn etcdctl_elect(args: &[&str]) -> Child {
    let mut all = vec!["elect"];
    all.extend_from_slice(args);
    etcdctl_cmd(&endpoint(), &all).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap()
}

// covers: CLI-ELECT-001
#[test]
fn elect_queues_with_etcdctl_elect_both_ways_and_observe_follows() {
    let (name, dir) = (name("elect"), Dir::new("elect"));
    let mut observer = spawn(&["elect", "--observe", &name]);
    let seen = lines(&mut observer);
    expect_line(&seen, "-");

    // etcdctl leads; ours waits, then runs its command once etcdctl resigns.
    let mut ctl = etcdctl_elect(&[&name, "from-etcdctl"]);
    let ctl_out = lines(&mut ctl);
    expect_line(&ctl_out, "from-etcdctl");
    expect_line(&seen, "from-etcdctl");
    let ours = spawn(&["elect", &name, "from-etcdlock", "--shell", "--", &format!("echo $ETCDLOCK_FENCING_TOKEN > {}; sleep 0.3", dir.file("led"))]);
    assert!(eventually(LIMIT, || keys_under(&format!("{name}/")).len() == 2), "ours never campaigned");
    std::thread::sleep(Duration::from_millis(300));
    assert!(dir.read("led").is_empty(), "ours ran while etcdctl led");
    signal(ctl.id(), libc::SIGINT); // etcdctl elect resigns on SIGINT
    let _ = ctl.wait();
    expect_line(&seen, "from-etcdlock");
    let out = wait_output(ours, LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(dir.read("led").trim().parse::<i64>().unwrap() > 0);
    expect_line(&seen, "-");

    // Ours leads (no command: it prints its key and proposal, like etcdctl); etcdctl waits.
    let mut leader = spawn(&["elect", &name, "ours"]);
    let led = lines(&mut leader);
    expect_line(&led, "ours");
    let mut listen = etcdctl_elect(&["-l", &name]);
    expect_line(&lines(&mut listen), "ours");
    let mut next = etcdctl_elect(&[&name, "next"]);
    let next_out = lines(&mut next);
    std::thread::sleep(Duration::from_millis(300));
    assert!(next_out.try_recv().is_err(), "etcdctl led beside ours");
    signal(leader.id(), libc::SIGTERM); // resigns, exits 0
    let out = wait_output(leader, LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    expect_line(&next_out, "next");
    expect_line(&seen, "next");
    for c in [&mut next, &mut listen] {
        signal(c.id(), libc::SIGINT);
        let _ = c.wait();
    }
    signal(observer.id(), libc::SIGINT);
    assert_eq!(code(&wait_output(observer, LIMIT)), 130);
    assert!(eventually(LIMIT, || keys_under(&format!("{name}/")).is_empty()));
}
