//! User/password authentication against an etcd with auth enabled.
mod common;
use common::*;
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
