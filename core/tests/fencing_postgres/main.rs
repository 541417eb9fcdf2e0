//! Fencing at the database from Rust (`etcdlock::fencing::postgres`, cargo feature `postgres`):
//! fences of real locks checked and written through the mark inside the writer's own
//! tokio-postgres transaction, on a real PostgreSQL (`tests/pg_harness.py start`: initdb in a
//! temp dir, 127.0.0.1, a free port, as a non-root user; stopped at this process's exit).
//!
//! A test binary of its own: it needs the feature, which every other build of the workspace
//! leaves off (`required-features` in core/Cargo.toml; scripts/test.sh builds and runs it with
//! `cargo test --release -p etcdlock --features postgres --test fencing_postgres`). Without
//! PostgreSQL's binaries it fails, saying how to install them; it is never skipped.
//! FENCE-CONCURRENT-001 is in concurrent.rs.

#[path = "../common/mod.rs"]
mod common;
mod concurrent;

use common::*;
use etcdlock::fencing::{postgres, Fence};
use etcdlock::ErrorKind;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

/// The server's state file (`pg_harness.py stop` stops it by the PID in it).
static STATE: OnceLock<PathBuf> = OnceLock::new();

extern "C" fn stop_postgres() {
    if let Some(state) = STATE.get() {
        let _ = Command::new("python3").arg(harness()).args(["stop", "--state"]).arg(state).status();
        let _ = std::fs::remove_dir_all(state.parent().unwrap());
    }
}

fn harness() -> PathBuf {
    repo_root().join("tests").join("pg_harness.py")
}

/// The DSN of this binary's PostgreSQL, started on first use, with the fence table and a ledger
/// (created once here: concurrent `CREATE TABLE IF NOT EXISTS` of one table can fail in
/// PostgreSQL).
fn dsn() -> &'static str {
    static DSN: OnceLock<String> = OnceLock::new();
    DSN.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("etcdlock-rust-pg-{}-{}", std::process::id(), rand_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        let state = dir.join("pg.json");
        let out = Command::new("python3").arg(harness()).args(["start", "--state"]).arg(&state).output().expect("run python3 tests/pg_harness.py");
        assert!(
            out.status.success(),
            "cannot start PostgreSQL (scripts/install-deps.sh installs Debian's postgresql): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        STATE.set(state).unwrap();
        unsafe { libc::atexit(stop_postgres) };
        let dsn = String::from_utf8(out.stdout).unwrap().trim().to_string();
        // A runtime of its own: the first test to get here may be on any test's runtime.
        let setup = dsn.clone();
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
                let db = connect(&setup).await;
                postgres::install(&db).await.unwrap();
                db.batch_execute("CREATE TABLE ledger (resource TEXT, writer TEXT, token BIGINT)").await.unwrap();
                // FENCE-CONCURRENT-001's (concurrent.rs): seq numbers the rows in commit order.
                db.batch_execute("CREATE TABLE busy (seq BIGSERIAL PRIMARY KEY, resource TEXT, writer TEXT, token BIGINT)").await.unwrap();
            })
        })
        .join()
        .unwrap();
        dsn
    })
}

async fn connect(dsn: &str) -> tokio_postgres::Client {
    let (db, conn) = tokio_postgres::connect(dsn, tokio_postgres::NoTls).await.expect("connect to PostgreSQL");
    tokio::spawn(conn);
    db
}

/// One transaction: the fence's check, then the write (the ledger's row).
async fn write(db: &mut tokio_postgres::Client, fence: &Fence, resource: Option<&str>, writer: &str) -> etcdlock::Result<()> {
    let txn = db.transaction().await.unwrap();
    let mark = postgres::check(&txn, fence, resource).await?; // a dropped transaction rolls back
    assert_eq!(mark, fence.token);
    let resource = resource.map_or_else(|| String::from_utf8(fence.name.clone()).unwrap(), str::to_string);
    txn.execute("INSERT INTO ledger VALUES ($1, $2, $3)", &[&resource, &writer, &fence.token]).await.unwrap();
    txn.commit().await.unwrap();
    Ok(())
}

/// The writers of `resource`'s rows, in the order they committed.
async fn writers(db: &tokio_postgres::Client, resource: &str) -> Vec<String> {
    let rows = db.query("SELECT writer FROM ledger WHERE resource = $1 ORDER BY ctid", &[&resource]).await.unwrap();
    rows.iter().map(|r| r.get(0)).collect()
}

/// The mark of `resource`: (cluster in hex, token).
async fn mark(db: &tokio_postgres::Client, resource: &str) -> Option<(String, i64)> {
    let row = db.query_opt(etcdlock::fencing::MARK, &[&resource]).await.unwrap();
    row.map(|r| (r.get(0), r.get(1)))
}

// covers: FENCE-DB-001
#[tokio::test]
async fn holders_in_turn_commit_the_same_holder_writes_again_and_an_older_token_is_refused() {
    let (c, mut db) = (client().await, connect(dsn()).await);
    postgres::install(&db).await.unwrap(); // again: a no-op
    let name = prefix("fence-pg") + "acct";
    let lock = c.mutex(name.clone(), 10).unwrap();
    let a = lock.lock().await.unwrap();
    let first = a.fence().await.unwrap();
    write(&mut db, &first, None, "a").await.unwrap();
    write(&mut db, &first, None, "a-again").await.unwrap(); // >=: the same holder writes again
    a.release().await.unwrap();
    let b = lock.lock().await.unwrap();
    // The string form, as another process would get it.
    let second: Fence = b.fence().await.unwrap().to_string().parse().unwrap();
    assert!(second.token > first.token);
    write(&mut db, &second, None, "b").await.unwrap();
    b.release().await.unwrap();
    let e = write(&mut db, &first, None, "late").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotHeld, "{e}");
    let why = format!("stale fence for {name:?}: token {}, but a newer holder wrote with token {}", first.token, second.token);
    assert_eq!(e.message(), why);
    assert_eq!(writers(&db, &name).await, ["a", "a-again", "b"], "the refused transaction committed");
    assert_eq!(mark(&db, &name).await, Some((format!("{:x}", second.cluster), second.token)), "the refused check moved the mark");
    // A resource named by the caller has a mark of its own: the older fence writes there.
    let other = format!("{name}-ledger");
    write(&mut db, &first, Some(&other), "a-other").await.unwrap();
    assert_eq!(writers(&db, &other).await, ["a-other"]);
    let e = write(&mut db, &first, Some(""), "nowhere").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    c.close().await;
}

// covers: FENCE-DB-001
#[tokio::test]
async fn two_lock_names_keep_independent_marks() {
    let (c, mut db) = (client().await, connect(dsn()).await);
    let (one, two) = (prefix("fence-pg") + "one", prefix("fence-pg") + "two");
    // `two` is taken first, so its token is older than `one`'s: a mark shared by the two names
    // would refuse it.
    let held_two = c.mutex(two.clone(), 10).unwrap().lock().await.unwrap();
    let held_one = c.mutex(one.clone(), 10).unwrap().lock().await.unwrap();
    let (f_two, f_one) = (held_two.fence().await.unwrap(), held_one.fence().await.unwrap());
    assert!(f_two.token < f_one.token);
    write(&mut db, &f_one, None, "one").await.unwrap();
    write(&mut db, &f_two, None, "two").await.unwrap();
    assert_eq!((writers(&db, &one).await, writers(&db, &two).await), (vec!["one".to_string()], vec!["two".to_string()]));
    assert_eq!(mark(&db, &one).await.unwrap().1, f_one.token);
    assert_eq!(mark(&db, &two).await.unwrap().1, f_two.token);
    held_one.release().await.unwrap();
    held_two.release().await.unwrap();
    c.close().await;
}

// covers: FENCE-DB-001
#[tokio::test]
async fn a_fence_of_another_cluster_is_refused_until_an_operator_resets_the_mark() {
    let (c, mut db) = (client().await, connect(dsn()).await);
    let name = prefix("fence-pg") + "restored";
    let held = c.mutex(name.clone(), 10).unwrap().lock().await.unwrap();
    let ours = held.fence().await.unwrap();
    write(&mut db, &ours, None, "ours").await.unwrap();
    // A restored or replaced etcd: another cluster's ID, and a token that looks newer.
    let alien = Fence { cluster: ours.cluster ^ 1, token: ours.token + 1000, ..ours.clone() };
    let e = write(&mut db, &alien, None, "alien").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotHeld, "{e}");
    assert!(e.message().contains(&format!("is of etcd cluster {:x}, but the mark was set by cluster {:x}", alien.cluster, ours.cluster)), "{e}");
    let reset = format!("DELETE FROM etcdlock_fence WHERE resource = '{name}'");
    assert!(e.message().contains("an operator must reset the mark") && e.message().ends_with(&reset), "{e}");
    assert_eq!(writers(&db, &name).await, ["ours"]);
    assert_eq!(mark(&db, &name).await, Some((format!("{:x}", ours.cluster), ours.token)));
    // The reset the message names: then the new cluster's fences write.
    db.batch_execute(&reset).await.unwrap();
    write(&mut db, &alien, None, "alien").await.unwrap();
    assert_eq!(writers(&db, &name).await, ["ours", "alien"]);
    held.release().await.unwrap();
    c.close().await;
}

/// Set in the child process that is the paused holder: endpoints, lock name and DSN, one a line.
const HOLDER: &str = "ETCDLOCK_TEST_PAUSED_HOLDER";

/// SIGCONTs and ends the holder process however the test ends.
struct Holder(Child);

impl Drop for Holder {
    fn drop(&mut self) {
        unsafe { libc::kill(self.0.id() as i32, libc::SIGCONT) };
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The holder's stdout, line by line, read on a thread of its own (so that a silent holder fails
/// the test rather than hanging it).
fn lines_of(out: ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// What the holder says after `tag` on its next line that has it (libtest's "test NAME ... "
/// may come first on the line).
fn line_of(lines: &mpsc::Receiver<String>, tag: &str) -> String {
    loop {
        match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                if let Some((_, said)) = line.trim_end().split_once(tag) {
                    return said.to_string();
                }
            }
            Err(e) => panic!("the holder process did not say {tag:?}: {e}"),
        }
    }
}

// covers: FENCE-PAUSE-001
#[tokio::test]
async fn a_holder_paused_past_its_ttl_is_refused_by_the_database() {
    if let Ok(args) = std::env::var(HOLDER) {
        return paused_holder(&args).await;
    }
    let (c, mut db) = (client().await, connect(dsn()).await);
    let name = prefix("fence-pg") + "paused";
    // This test again, as the holder: a process of its own, to be SIGSTOPped.
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["a_holder_paused_past_its_ttl_is_refused_by_the_database", "--exact", "--nocapture", "--test-threads", "1"])
        .env(HOLDER, format!("{}\n{name}\n{}", shared().endpoints()[0], dsn()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut holder = Holder(child);
    let lines = lines_of(holder.0.stdout.take().unwrap());
    // It holds (TTL 2), has its fence, and has begun its transaction.
    let fence_a: Fence = line_of(&lines, "holder-fence: ").parse().unwrap();
    assert_eq!(unsafe { libc::kill(holder.0.id() as i32, libc::SIGSTOP) }, 0);
    assert!(c.check_fence(&fence_a).await.unwrap());
    let lock = c.mutex(name.clone(), 10).unwrap();
    let next = tokio::time::timeout(Duration::from_secs(15), lock.lock()).await.expect("the paused holder's lease did not end").unwrap();
    assert!(!c.check_fence(&fence_a).await.unwrap(), "an expired holder's fence still checks");
    let fence_b = next.fence().await.unwrap();
    assert!(fence_b.token > fence_a.token);
    write(&mut db, &fence_b, None, "next").await.unwrap();
    next.release().await.unwrap();
    // The holder wakes and writes through its fence, in the transaction it began before.
    assert_eq!(unsafe { libc::kill(holder.0.id() as i32, libc::SIGCONT) }, 0);
    holder.0.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    let said = line_of(&lines, "holder-result: ");
    assert!(said.starts_with("refused NOT_HELD: stale fence"), "the paused holder's write: {said}");
    assert!(holder.0.wait().unwrap().success());
    assert_eq!(writers(&db, &name).await, ["next"], "the paused holder's write committed");
    c.close().await;
}

/// The paused holder, in its own process: takes the lock with TTL 2, opens its connection and
/// its transaction, says its fence, and after a line on stdin (it was frozen meanwhile) checks
/// and writes, and says what the database answered.
async fn paused_holder(args: &str) {
    let [endpoint, name, dsn] = args.split('\n').collect::<Vec<_>>()[..] else { panic!("{HOLDER}: {args:?}") };
    let c = client_for(&[endpoint.to_string()]).await;
    let guard = c.mutex(name, 2).unwrap().lock().await.unwrap();
    let fence = guard.fence().await.unwrap();
    let mut db = connect(dsn).await;
    let txn = db.transaction().await.unwrap();
    say(&format!("holder-fence: {fence}"));
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    match postgres::check(&txn, &fence, None).await {
        Ok(_) => {
            txn.execute("INSERT INTO ledger VALUES ($1, 'paused', $2)", &[&name, &fence.token]).await.unwrap();
            txn.commit().await.unwrap();
            say("holder-result: committed");
        }
        Err(e) => say(&format!("holder-result: refused {e}")),
    }
}

/// A line to the test that started this process: to stdout itself, flushed (libtest's capture
/// takes what `println!` prints).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}
