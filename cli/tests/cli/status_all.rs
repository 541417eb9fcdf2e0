//! `etcdlock status --prefix`: every name under a prefix and its kind, in one table and as JSON.

use crate::common::*;
use std::process::Child;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// The JSON object of `name` in `status --prefix --json`'s output.
fn entry<'a>(json: &'a str, name: &str) -> &'a str {
    let start = json.find(&format!(r#"{{"name":"{name}""#)).unwrap_or_else(|| panic!("{name} is not listed: {json}"));
    &json[start..start + json[start..].find('}').unwrap() + 1]
}

// covers: CLI-STATUS-002
#[test]
fn status_of_a_prefix_names_every_kind() {
    let (p, dir) = (name("survey"), Dir::new("survey"));
    let out = output(&["status", "--prefix", &format!("{p}/")], LIMIT);
    assert_eq!(code(&out), 1, "nothing yet: {}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing of etcdlock's"));

    let wait = format!("while [ ! -e {} ]; do sleep 0.02; done", dir.file("go"));
    let mut holders: Vec<Child> = vec![
        spawn(&["run", &format!("{p}/lock"), "--shell", "--", &wait]),
        spawn(&["run", &format!("{p}/lock"), "--shell", "--", &wait]),
        spawn(&["run", "--permits", "2", &format!("{p}/sem"), "--shell", "--", &wait]),
        spawn(&["run", "--pool", "--size", "2", &format!("{p}/pool"), "--shell", "--", &wait]),
        spawn(&["elect", &format!("{p}/leader"), "me"]),
    ];
    for id in ["t1", "t2"] {
        let put = output(&["queue", "put", &format!("{p}/q"), "--id", id, "--data", "x"], LIMIT);
        assert_eq!(code(&put), 0, "{}", stderr(&put));
    }
    let once = output(&["run", "--once-per", "1h", &format!("{p}/job"), "--", "true"], LIMIT);
    assert_eq!(code(&once), 0, "{}", stderr(&once));
    // A registry instance as etcd's Go endpoints manager writes one: a key on a lease.
    let grant = shared().etcdctl(&["lease", "grant", "30"]);
    let lease = String::from_utf8_lossy(&grant.stdout).split_whitespace().nth(1).unwrap().to_string();
    shared().etcdctl(&["put", "--lease", &lease, &format!("{p}/svc/i-1"), r#"{"Addr":"127.0.0.1:1"}"#]);
    shared().etcdctl(&["put", &format!("{p}/plain"), "a key of the user's"]);
    assert!(
        eventually(LIMIT, || {
            let ks = keys_under(&format!("{p}/"));
            ["lock/", "sem/", "pool/slot/", "leader/"].iter().all(|k| ks.iter().any(|x| x.starts_with(&format!("{p}/{k}"))))
                && ks.iter().filter(|k| k.starts_with(&format!("{p}/lock/"))).count() == 2
        }),
        "the holders never queued: {:?}",
        keys_under(&format!("{p}/"))
    );

    let out = output(&["status", "--prefix", &format!("{p}/"), "--json"], LIMIT);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let json = String::from_utf8_lossy(&out.stdout).into_owned();
    let kind = |n: &str, want: &str| {
        let e = entry(&json, &format!("{p}/{n}"));
        assert!(e.contains(want), "{n}: {e}");
    };
    kind("lock", r#""kind":"lock","holders":1,"waiters":1"#);
    kind("leader", r#""kind":"lock","holders":1,"waiters":0"#);
    kind("sem", r#""kind":"semaphore","holders":1,"waiters":0,"permits":2"#);
    kind("pool", r#""kind":"pool","holders":1,"waiters":0"#);
    kind("q", r#""kind":"queue","holders":0,"waiters":0,"pending":2,"dead":0"#);
    kind("job", r#""kind":"once","holders":0,"waiters":0,"done_periods":1"#);
    kind("svc", r#""kind":"service","holders":1"#);
    assert_eq!(json.matches(r#""name":"#).count(), 7, "the plain key is no name: {json}");

    let table = output(&["status", "--prefix", &format!("{p}/")], LIMIT);
    let text = String::from_utf8_lossy(&table.stdout).into_owned();
    for word in ["lock", "semaphore(2)", "pool", "queue", "once", "service", "1 done", "0 dead", "7 names under"] {
        assert!(text.contains(word), "{word}: {text}");
    }
    // NAME and --prefix together are a usage error, as is neither.
    assert_eq!(code(&output(&["status", "--prefix", "x", "y"], LIMIT)), 2);
    assert_eq!(code(&output(&["status"], LIMIT)), 2);

    std::fs::write(dir.file("go"), "").unwrap();
    let leader = holders.pop().unwrap();
    signal(leader.id(), libc::SIGTERM);
    for h in holders {
        assert_eq!(code(&wait_output(h, LIMIT)), 0);
    }
    let _ = wait_output(leader, LIMIT);
}
