//! `--health-addr` of `run` and `elect`: /healthz says 200 only while the process holds or
//! leads, 503 while it waits, at once after a loss, and once its command ended; /metrics the
//! Prometheus text. Each etcdlock under test listens on port 0 and names its address on stderr.

use crate::common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

/// `etcdlock ARGS` (through `proxy`'s endpoint if given), its health address, and its stderr
/// lines as they come, each with the moment it was read.
fn start(proxy: Option<&proxy::Proxy>, args: &[&str]) -> (Child, String, Receiver<(Instant, String)>) {
    let mut cmd = etcdlock(args);
    if let Some(p) = proxy {
        cmd.env("ETCDLOCK_ENDPOINTS", p.endpoint());
    }
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("run etcdlock");
    let (tx, lines) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send((Instant::now(), l));
        }
    });
    let deadline = Instant::now() + LIMIT;
    let addr = loop {
        let (_, line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())).expect("etcdlock never named its health address");
        if let Some(rest) = line.split("health endpoints on http://").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    (child, addr, lines)
}

/// `GET path` on `addr`: the status and the body; `None` if nothing answers (the process is gone).
fn get(addr: &str, path: &str) -> Option<(u16, String)> {
    let mut conn = TcpStream::connect(addr).ok()?;
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    conn.write_all(format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).ok()?;
    let mut text = String::new();
    conn.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, body.to_string()))
}

fn healthz(addr: &str) -> Option<(u16, String)> {
    get(addr, "/healthz").map(|(c, b)| (c, b.trim().to_string()))
}

/// Polls /healthz every 10 ms until it answers `code`, at most `limit`.
fn until(addr: &str, code: u16, limit: Duration) -> bool {
    eventually(limit, || healthz(addr).is_some_and(|(c, _)| c == code))
}

/// Polls /healthz every 10 ms until it answers anything but 200 (or stops answering), at most
/// LIMIT; every answer with the moment its request was sent.
fn poll_until_not_ok(addr: &str) -> Vec<(Instant, Option<(u16, String)>)> {
    let (deadline, mut seen) = (Instant::now() + LIMIT, Vec::new());
    while Instant::now() < deadline {
        let sent = Instant::now();
        let answer = healthz(addr);
        let done = !matches!(answer, Some((200, _)));
        seen.push((sent, answer));
        if done {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("/healthz on {addr} still answered 200 after {LIMIT:?}");
}

/// The moment the first stderr line containing `word` was read (waiting up to LIMIT for it).
fn logged(lines: &Receiver<(Instant, String)>, word: &str) -> Instant {
    loop {
        let (at, line) = lines.recv_timeout(LIMIT).unwrap_or_else(|_| panic!("etcdlock never logged {word:?}"));
        if line.contains(word) {
            return at;
        }
    }
}

/// No 200 came from a request sent after the loss was logged: the flip is no later than the loss.
fn no_ok_after(seen: &[(Instant, Option<(u16, String)>)], lost_at: Instant) {
    for (sent, answer) in seen {
        if matches!(answer, Some((200, _))) {
            assert!(*sent < lost_at, "200 for a request sent {:?} after the loss was logged", *sent - lost_at);
        }
    }
    let first_503 = seen.iter().find(|(_, a)| !matches!(a, Some((200, _)))).unwrap();
    let after = first_503.0.saturating_duration_since(lost_at);
    eprintln!("the first answer after the loss: {:?}, for a request sent {after:?} after the loss was logged", first_503.1);
}

// covers: CLI-HEALTH-001
#[test]
fn healthz_follows_the_leadership_as_a_second_candidate_takes_over() {
    // A leads through a proxy; B waits. A's link goes silent: A loses at its local deadline
    // (TTL 2) and says 503 at once, B leads once etcd expires A's lease and says 200.
    let name = name("health-elect");
    let proxy = proxy::Proxy::start(shared().members[0].client_port);
    let (a, a_addr, a_log) = start(Some(&proxy), &["elect", "--verbose", "--ttl", "2", "--request-timeout", "2", "--health-addr", "127.0.0.1:0", &name, "a"]);
    assert!(until(&a_addr, 200, LIMIT), "A never led: {:?}", healthz(&a_addr));
    let (b, b_addr, _b_log) = start(None, &["elect", "--ttl", "2", "--health-addr", "127.0.0.1:0", &name, "b"]);
    assert!(eventually(LIMIT, || keys_under(&format!("{name}/")).len() == 2), "B never campaigned");
    assert_eq!(healthz(&b_addr), Some((503, "waiting".into())));
    assert_eq!(healthz(&a_addr), Some((200, "ok".into())));
    let (status, metrics) = get(&a_addr, "/metrics").unwrap();
    assert_eq!(status, 200);
    assert!(metrics.contains("\netcdlock_cli_active 1\n") && metrics.contains("# TYPE etcdlock_lock_wait_seconds histogram"), "{metrics}");
    assert!(get(&b_addr, "/metrics").unwrap().1.contains("\netcdlock_cli_active 0\n"));

    proxy.set(proxy::Mode::Blackhole);
    let seen = poll_until_not_ok(&a_addr);
    let lost_at = logged(&a_log, "lost");
    assert_eq!(seen.last().unwrap().1, Some((503, "lost".into())), "A after its loss");
    no_ok_after(&seen, lost_at);

    assert!(until(&b_addr, 200, LIMIT), "B never led: {:?}", healthz(&b_addr));
    assert!(healthz(&a_addr).is_none_or(|(c, _)| c == 503), "A said 200 beside B");
    proxy.set(proxy::Mode::Pass);
    assert_eq!(code(&wait_output(a, LIMIT)), 75, "A lost its leadership");
    signal(b.id(), libc::SIGTERM); // resigns: exit 0
    assert_eq!(code(&wait_output(b, LIMIT)), 0);
    assert!(eventually(LIMIT, || keys_under(&format!("{name}/")).is_empty()));
}

// covers: CLI-HEALTH-002
// covers: METRICS-LABEL-001 (the client's series under its name in /metrics)
#[test]
fn healthz_of_run_is_503_while_waiting_200_while_holding_503_after_a_loss_or_the_end() {
    let (name, dir) = (name("health-run"), Dir::new("health-run"));
    let holder = spawn(&["run", &name, "--shell", "--", &format!("while [ ! -e {} ]; do sleep 0.02; done", dir.file("go"))]);
    assert!(eventually(LIMIT, || keys_under(&format!("{name}/")).len() == 1));

    // Waits behind the holder, then holds; its link goes silent: lost at its deadline (TTL 2).
    let proxy = proxy::Proxy::start(shared().members[0].client_port);
    let (run, addr, log) = start(Some(&proxy), &["run", "--verbose", "--ttl", "2", "--request-timeout", "2", "--health-addr", "127.0.0.1:0", &name, "--", "sleep", "60"]);
    assert!(eventually(LIMIT, || keys_under(&format!("{name}/")).len() == 2), "never queued");
    assert_eq!(healthz(&addr), Some((503, "waiting".into())));
    let metrics = get(&addr, "/metrics").unwrap().1;
    assert!(metrics.contains("\netcdlock_cli_active 0\n") && metrics.contains("etcdlock_lock_acquisitions_total{client=\"etcdlock-1\"} 0\n"), "{metrics}");
    std::fs::write(dir.file("go"), "").unwrap();
    assert_eq!(code(&wait_output(holder, LIMIT)), 0);
    assert!(until(&addr, 200, LIMIT), "never held: {:?}", healthz(&addr));
    assert_eq!(healthz(&addr), Some((200, "ok".into())));
    let metrics = get(&addr, "/metrics").unwrap().1;
    assert!(metrics.contains("\netcdlock_cli_active 1\n") && metrics.contains("etcdlock_lock_acquisitions_total{client=\"etcdlock-1\"} 1\n"), "{metrics}");
    proxy.set(proxy::Mode::Blackhole);
    let seen = poll_until_not_ok(&addr);
    let lost_at = logged(&log, "lost");
    assert_eq!(seen.last().unwrap().1, Some((503, "lost".into())));
    no_ok_after(&seen, lost_at);
    proxy.set(proxy::Mode::Pass);
    assert_eq!(code(&wait_output(run, LIMIT)), 75);

    // Holds; its link goes silent (TTL 10: no loss for 9 s) and its command ends: 503 at once,
    // while the release still waits for etcd.
    let proxy = proxy::Proxy::start(shared().members[0].client_port);
    let script = format!("while [ ! -e {} ]; do sleep 0.02; done", dir.file("end"));
    let (run, addr, _log) = start(Some(&proxy), &["run", "--ttl", "10", "--request-timeout", "2", "--health-addr", "127.0.0.1:0", &name, "--shell", "--", &script]);
    assert!(until(&addr, 200, LIMIT), "never held: {:?}", healthz(&addr));
    proxy.set(proxy::Mode::Blackhole);
    std::fs::write(dir.file("end"), "").unwrap();
    let seen = poll_until_not_ok(&addr);
    assert_eq!(seen.last().unwrap().1, Some((503, "ended".into())), "after the command ended, before the release");
    proxy.set(proxy::Mode::Pass);
    let out = wait_output(run, LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(eventually(LIMIT, || keys_under(&format!("{name}/")).is_empty()));
}

// covers: CLI-HEALTH-USAGE-001
#[test]
fn a_bad_or_busy_health_address_is_a_usage_error_before_connecting() {
    let name = name("health-usage");
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = busy.local_addr().unwrap().to_string();
    // Nobody listens at the endpoint: a 2 (not 69) shows nothing was sent first.
    let nowhere = ["--endpoints", "http://127.0.0.1:1", "--connect-timeout", "10"];
    for (addr, says) in [("nope", "not HOST:PORT"), (":70000", "0 to 65535"), ("127.0.0.1", "no port"), (busy.as_str(), "cannot listen")] {
        for sub in [&["run", &name][..], &["elect", &name, "p"][..]] {
            let mut args = sub.to_vec();
            args.extend(["--health-addr", addr]);
            args.extend(nowhere);
            if sub[0] == "run" {
                args.extend(["--", "true"]);
            }
            let started = Instant::now();
            let out = output(&args, LIMIT);
            assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
            assert!(started.elapsed() < Duration::from_secs(5), "{args:?} took {:?}", started.elapsed());
            assert_eq!(stderr(&out).trim().lines().count(), 1, "{}", stderr(&out));
            assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        }
    }
    let out = wait_output(etcdlock(&["run", &name, "--", "true"]).env("ETCDLOCK_HEALTH_ADDR", "nope").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap(), LIMIT);
    assert_eq!(code(&out), 2, "from the environment: {}", stderr(&out));
    // An observer neither holds nor leads: the option is refused, the variable ignored.
    let out = output(&["elect", "--observe", "--health-addr", "127.0.0.1:0", &name], LIMIT);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let mut observer = etcdlock(&["elect", "--observe", &name]).env("ETCDLOCK_HEALTH_ADDR", "127.0.0.1:0").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    assert_eq!(stdout_lines(&mut observer).recv_timeout(LIMIT).ok().as_deref(), Some("-"), "the observer's first line");
    signal(observer.id(), libc::SIGINT);
    let out = wait_output(observer, LIMIT);
    assert_eq!(code(&out), 130, "{}", stderr(&out));
    assert!(!stderr(&out).contains("health"), "{}", stderr(&out));
    assert!(keys_under(&format!("{name}/")).is_empty());
}
