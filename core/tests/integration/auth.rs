//! User/password authentication against an etcd with auth enabled.
use crate::common::*;
use etcdlock::{ClientOptions, ErrorKind};
use std::time::Duration;

// covers: CONN-AUTH-001
#[tokio::test]
async fn user_and_password_are_used_and_bad_credentials_fail_with_auth() {
    let etcd = Etcd::start(1);
    for args in [
        &["user", "add", "root:rootpw"][..],
        &["user", "grant-role", "root", "root"],
        &["auth", "enable"],
    ] {
        let out = etcd.etcdctl(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let opts = |pw: &str| ClientOptions {
        user: Some(("root".into(), pw.into())),
        connect_timeout: Duration::from_secs(3),
        ..Default::default()
    };
    let client = etcdlock::Client::connect(etcd.endpoints(), opts("rootpw")).await.expect("connect with auth");
    let g = client.mutex("authlock", 5).unwrap().lock().await.unwrap();
    g.put(b"authdata", b"x").await.unwrap();
    g.release().await.unwrap();
    client.close().await;

    let e = etcdlock::Client::connect(etcd.endpoints(), opts("wrong")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Auth, "{e}");
    let e = etcdlock::Client::connect(etcd.endpoints(), ClientOptions::default()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Auth, "{e}");
}

/// Runs etcdctl against `etcd` (as root once auth is on), asserting success.
fn ctl(etcd: &Etcd, args: &[&str]) {
    let mut all = vec!["--user", "root:rootpw"];
    all.extend_from_slice(args);
    let out = etcd.etcdctl(&all);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// An etcd with auth on, root, and a user `app` with readwrite on `app/` only.
fn with_app_user(extra: &[&str]) -> Etcd {
    app_user_on(Etcd::start_with_args(1, extra))
}

fn app_user_on(etcd: Etcd) -> Etcd {
    for args in [
        &["user", "add", "root:rootpw"][..],
        &["user", "grant-role", "root", "root"],
        &["role", "add", "app"],
        &["role", "grant-permission", "app", "--prefix=true", "readwrite", "app/"],
        &["user", "add", "app:apppw"],
        &["user", "grant-role", "app", "app"],
        &["auth", "enable"],
    ] {
        ctl(&etcd, args);
    }
    etcd
}

fn app() -> ClientOptions {
    ClientOptions { user: Some(("app".into(), "apppw".into())), connect_timeout: Duration::from_secs(3), ..Default::default() }
}

// covers: AUTH-PREFIX-001
#[tokio::test]
async fn a_user_granted_one_prefix_connects_and_works_inside_it() {
    let etcd = with_app_user(&[]);
    let client = etcdlock::Client::connect(etcd.endpoints(), app()).await.expect("a least-privilege user connects");
    let mut w = client.watch("app/", etcdlock::WatchOptions { prefix: true, ..Default::default() }).await.unwrap();
    client.put(b"app/k", b"v", None).await.unwrap();
    let lease = client.lease(5).await.unwrap();
    client.put(b"app/leased", b"v", Some(&lease)).await.unwrap();
    let g = client.mutex("app/lock", 5).unwrap().lock().await.unwrap();
    g.put(b"app/data", b"1").await.unwrap();
    g.release().await.unwrap();
    let e = tokio::time::timeout(Duration::from_secs(5), w.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(e.kv.key, b"app/k");
    // Outside the prefix: Auth at once, not retried until a deadline.
    let started = std::time::Instant::now();
    assert_eq!(client.get(b"other").await.unwrap_err().kind(), ErrorKind::Auth);
    assert_eq!(client.mutex("other", 5).unwrap().lock().await.unwrap_err().kind(), ErrorKind::Auth);
    let denied = client.watch("other", Default::default()).await.err().expect("a watch outside the prefix fails");
    assert_eq!(denied.kind(), ErrorKind::Auth, "{denied}");
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    // The watch inside goes on (a read of the refused range told the denial from a stale token).
    client.put(b"app/k2", b"v", None).await.unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(5), async {
        for _ in 0..50 {
            if w.next().await.unwrap().unwrap().kv.key == b"app/k2" {
                return true;
            }
        }
        false
    });
    assert!(seen.await.unwrap(), "the watch inside did not deliver app/k2");
    lease.revoke().await.unwrap();
    client.close().await;
}

// covers: AUTH-REFRESH-001
#[tokio::test]
async fn expired_tokens_are_refreshed_for_requests_and_a_lock_held_past_them() {
    let etcd = with_app_user(&["--auth-token-ttl", "2"]);
    let (a, b) = (
        etcdlock::Client::connect(etcd.endpoints(), app()).await.unwrap(),
        etcdlock::Client::connect(etcd.endpoints(), app()).await.unwrap(),
    );
    // Idle past the token's lifetime.
    tokio::time::sleep(Duration::from_secs(4)).await;
    a.put(b"app/after-idle", b"1", None).await.expect("a request after the token expired");
    // A lock held past it, with only keepalives going, while another client waits.
    let g = a.mutex("app/held", 5).unwrap().lock().await.unwrap();
    let waiting = {
        let m = b.mutex("app/held", 5).unwrap();
        tokio::spawn(async move { m.lock_with(etcdlock::LockOptions { timeout: Some(Duration::from_secs(20)), cancel: None, ..Default::default() }).await })
    };
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(g.is_held());
    g.release().await.expect("the release after the token expired");
    let g2 = tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap().unwrap().expect("handed over");
    g2.release().await.unwrap();
    // A wrong password is Auth at once, with no loop of refreshes.
    let wrong = ClientOptions { user: Some(("app".into(), "nope".into())), ..app() };
    let started = std::time::Instant::now();
    assert_eq!(etcdlock::Client::connect(etcd.endpoints(), wrong).await.unwrap_err().kind(), ErrorKind::Auth);
    assert!(started.elapsed() < Duration::from_secs(2));
    a.close().await;
    b.close().await;
}

// covers: AUTH-REFRESH-002
#[tokio::test]
async fn a_token_made_old_by_a_role_change_is_refreshed_for_requests_watches_and_keepalives() {
    // JWTs: etcd checks the auth revision a JWT was issued at; simple tokens never go old.
    let etcd = app_user_on(Etcd::start_with_jwt(1, &[]));
    let client = etcdlock::Client::connect(etcd.endpoints(), app()).await.unwrap();
    // A watch stream and a keepalive stream opened with the token of the current auth revision.
    let mut before = client.watch("app/w1", Default::default()).await.unwrap();
    let g = client.mutex("app/held", 3).unwrap().lock().await.unwrap();
    // Any change to users or roles makes every token issued before it old.
    ctl(&etcd, &["role", "grant-permission", "app", "read", "elsewhere"]);
    client.put(b"app/after", b"1", None).await.expect("a request with an old token");
    // A new watch on the open stream: etcd checks the stream's (old) token.
    let mut after = client.watch("app/w2", Default::default()).await.expect("a watch created with an old token");
    client.put(b"app/w1", b"a", None).await.unwrap();
    client.put(b"app/w2", b"b", None).await.unwrap();
    for (w, key) in [(&mut before, &b"app/w1"[..]), (&mut after, b"app/w2")] {
        let e = tokio::time::timeout(Duration::from_secs(5), w.next()).await.expect("an event in time").unwrap().unwrap();
        assert_eq!(e.kv.key, key);
    }
    // Held past its TTL twice over: keepalives went on.
    tokio::time::sleep(Duration::from_secs(7)).await;
    assert!(g.is_held());
    g.release().await.expect("the release with an old token");
    let out = etcd.etcdctl(&["--user", "root:rootpw", "get", "--prefix", "--keys-only", "app/held"]);
    assert!(String::from_utf8_lossy(&out.stdout).trim().is_empty(), "queue key left");
    client.close().await;
}

// covers: AUTH-REFRESH-001
#[tokio::test]
async fn a_watch_created_on_a_stream_idle_past_the_token_lifetime_works() {
    let etcd = with_app_user(&["--auth-token-ttl", "2"]);
    let client = etcdlock::Client::connect(etcd.endpoints(), app()).await.unwrap();
    let mut before = client.watch("app/w1", Default::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut after = client.watch("app/w2", Default::default()).await.expect("a watch created with an expired token");
    client.put(b"app/w1", b"a", None).await.unwrap();
    client.put(b"app/w2", b"b", None).await.unwrap();
    for (w, key) in [(&mut before, &b"app/w1"[..]), (&mut after, b"app/w2")] {
        let e = tokio::time::timeout(Duration::from_secs(5), w.next()).await.expect("an event in time").unwrap().unwrap();
        assert_eq!(e.kv.key, key);
    }
    // The stream reopened with the token refreshed for `after` goes idle past that token's
    // lifetime too: a refusal on it is no more final than on the first (it came 3 s after the
    // refresh, where the hub used to take any refusal within 5 s of one as a denial).
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut third = client.watch("app/w3", Default::default()).await.expect("a watch created with the refreshed token expired");
    client.put(b"app/w3", b"c", None).await.unwrap();
    let e = tokio::time::timeout(Duration::from_secs(5), third.next()).await.expect("an event in time").unwrap().unwrap();
    assert_eq!(e.kv.key, b"app/w3");
}
