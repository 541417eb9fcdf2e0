//! Test fixture over `etcd-testkit`: the shared server, key prefixes, and raw checks.
//!
//! `shared()` starts one single-member server per test binary (stopped at process exit);
//! `Etcd::start(n)` starts a private cluster for a test that injects faults. Tests isolate
//! themselves by key prefix (`prefix()`), never by a fresh server.
#![allow(dead_code)]

pub use etcd_testkit::*;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// One server per test binary, killed by an atexit hook when the test process exits.
pub fn shared() -> &'static Etcd {
    static SHARED: OnceLock<Etcd> = OnceLock::new();
    SHARED.get_or_init(|| Etcd::start(1))
}

/// A key prefix unique to one test.
pub fn prefix(test: &str) -> String {
    format!("t/{test}-{}/", rand_suffix())
}

pub async fn client() -> etcdlock::Client {
    client_for(&shared().endpoints()).await
}

pub async fn client_for(endpoints: &[String]) -> etcdlock::Client {
    etcdlock::Client::connect(endpoints, etcdlock::ClientOptions::default()).await.expect("connect")
}

/// A plain etcd-client connection, for checking what is really in etcd.
pub async fn raw(endpoints: &[String]) -> etcd_client::Client {
    etcd_client::Client::connect(endpoints, None).await.unwrap()
}

/// A proxy in front of each member's client port, and the endpoints that go through them
/// (for network faults).
pub fn proxied(etcd: &Etcd) -> (Vec<proxy::Proxy>, Vec<String>) {
    let proxies: Vec<_> = etcd.members.iter().map(|m| proxy::Proxy::start(m.client_port)).collect();
    let via = proxies.iter().map(proxy::Proxy::endpoint).collect();
    (proxies, via)
}

/// Keys under `prefix`, as etcd has them now.
pub async fn keys_under(endpoints: &[String], prefix: &str) -> Vec<String> {
    let mut c = raw(endpoints).await;
    let r = c.get(prefix, Some(etcd_client::GetOptions::new().with_prefix().with_keys_only())).await.unwrap();
    r.kvs().iter().map(|kv| String::from_utf8_lossy(kv.key()).into_owned()).collect()
}

/// Every lease etcd knows of.
pub async fn lease_ids(endpoints: &[String]) -> Vec<i64> {
    let mut c = raw(endpoints).await;
    c.leases().await.unwrap().leases().iter().map(|l| l.id()).collect()
}

/// Polls `cond` every 20 ms for at most `limit`.
pub async fn eventually<F, Fut>(limit: Duration, mut cond: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cond().await
}

/// Fails at once, saying why, unless the etcd under test is at least `min`: a test that does not
/// apply to an older server is skipped by name (`cargo test -- --skip NAME`, as scripts/test.sh
/// does on 3.5.1 and says so), never passed without running.
pub fn require_server(min: (u32, u32, u32), why: &str) {
    let version = etcd_testkit::etcd_version();
    assert!(
        version >= min,
        "needs etcd {min:?} or later, not {version:?}: {why}. Skip it on this server with `-- --skip <test name>`, or set ETCD_BIN to a newer etcd (scripts/build-etcd.sh)"
    );
}

/// Compacts `etcd`'s history past the revision of a read whose reply `proxy` holds: call it
/// while a read through `proxy` (in `Mode::HoldReplies`) is on its way, so that the watch that
/// read is followed by (from the read's revision + 1) starts in compacted history. Two writes
/// after the read, compacted to the second: the read's revision + 1 is gone. Passes the
/// replies on at the end.
pub async fn compact_past_a_held_read(etcd: &Etcd, proxy: &proxy::Proxy) {
    // The read reached etcd and was answered; its reply waits at the proxy.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut raw = raw(&etcd.endpoints()).await;
    raw.put("t/compact-bump", "1", None).await.unwrap();
    let head = raw.put("t/compact-bump", "2", None).await.unwrap().header().unwrap().revision();
    raw.compact(head, None).await.unwrap();
    proxy.set(proxy::Mode::Pass);
}

/// A client of endpoints `[proxy, other]` whose requests go through `proxy` (a client starts at
/// a random endpoint: up to 16 are connected until one does). For faults on the link a client's
/// requests take while another endpoint stays reachable, as the channel's second member.
pub async fn client_through(proxy: &proxy::Proxy, other: &str) -> etcdlock::Client {
    for _ in 0..16 {
        let c = client_for(&[proxy.endpoint(), other.to_string()]).await;
        let before = proxy.sent();
        for _ in 0..5 {
            c.get(b"t/probe").await.unwrap();
        }
        // Five reads are a few hundred bytes; a keepalive ping is 17.
        if proxy.sent() - before > 150 {
            return c;
        }
        c.close().await;
    }
    panic!("no client's requests went through the proxy in 16 tries");
}
