//! TLS and mTLS against a real etcd serving certificates made at test time.
use crate::common::*;
use etcdlock::{Client, ClientOptions, ErrorKind, Pem, TlsOptions, WatchOptions};
use std::time::{Duration, Instant};
use crate::common::tls::TlsEtcd;

fn opts(tls: TlsOptions) -> ClientOptions {
    ClientOptions { tls: Some(tls), connect_timeout: Duration::from_secs(3), ..Default::default() }
}

fn ca(etcd: &TlsEtcd) -> Option<Pem> {
    Some(Pem::File(etcd.certs.pem("ca")))
}

/// Connects, expecting an error of `kind` within the connect timeout; returns its message.
async fn refused(endpoint: String, o: ClientOptions, kind: ErrorKind) -> String {
    let started = Instant::now();
    let e = Client::connect([endpoint], o).await.expect_err("must not connect");
    assert!(started.elapsed() < Duration::from_millis(3500), "took {:?}", started.elapsed());
    assert_eq!(e.kind(), kind, "{e}");
    eprintln!("{:?}: {e}", started.elapsed());
    e.message().to_string()
}

/// Everything a user does, over the client's channels (KV, leases, keepalive, watch).
async fn exercise(client: &Client) {
    let p = prefix("tls");
    let mut w = client.watch(p.clone(), WatchOptions { prefix: true, ..Default::default() }).await.unwrap();
    client.put(format!("{p}k").as_bytes(), b"v", None).await.unwrap();
    assert_eq!(client.get(format!("{p}k").as_bytes()).await.unwrap().unwrap().value, b"v");
    let lease = client.lease(2).await.unwrap();
    let g = client.mutex(format!("{p}lock"), 5).unwrap().lock().await.unwrap();
    g.put(format!("{p}guarded").as_bytes(), b"1").await.unwrap();
    // Kept alive past its TTL (the keepalive stream works).
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(lease.is_alive() && g.is_held());
    g.release().await.unwrap();
    lease.revoke().await.unwrap();
    let event = tokio::time::timeout(Duration::from_secs(5), w.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(event.kv.key, format!("{p}k").into_bytes());
}

// covers: TLS-CA-001
#[tokio::test]
async fn over_tls_with_a_ca_everything_works() {
    let etcd = TlsEtcd::start("server", false, &[]);
    let client = Client::connect([etcd.https()], opts(TlsOptions { ca: ca(&etcd), ..Default::default() })).await.unwrap();
    exercise(&client).await;
    client.close().await;
    // The CA as PEM bytes, and the member by its DNS name (sent as SNI).
    let pem = std::fs::read(etcd.certs.pem("ca")).unwrap();
    let by_name = format!("https://localhost:{}", etcd.tls_port);
    let client = Client::connect([by_name], opts(TlsOptions { ca: Some(Pem::Bytes(pem)), ..Default::default() })).await.unwrap();
    client.put(b"tls-bytes", b"1", None).await.unwrap();
    client.close().await;
}

// covers: TLS-MTLS-001
#[tokio::test]
async fn mtls_needs_a_client_certificate_the_member_trusts() {
    let etcd = TlsEtcd::start("server", true, &[]);
    let with = |who: &str| TlsOptions {
        ca: ca(&etcd),
        cert: Some(Pem::File(etcd.certs.pem(who))),
        key: Some(Pem::File(etcd.certs.key(who))),
        server_name: None,
    };
    let client = Client::connect([etcd.https()], opts(with("client"))).await.unwrap();
    exercise(&client).await;
    client.close().await;
    let m = refused(etcd.https(), opts(TlsOptions { ca: ca(&etcd), ..Default::default() }), ErrorKind::Auth).await;
    assert!(m.contains("certificate"), "{m}");
    let m = refused(etcd.https(), opts(with("other-ca-client")), ErrorKind::Auth).await;
    assert!(m.contains("certificate"), "{m}");
}

// covers: TLS-BADCERT-001
#[tokio::test]
async fn an_untrusted_member_or_the_wrong_scheme_fails_clearly_and_in_time() {
    let etcd = TlsEtcd::start("other-ca-server", false, &[]);
    let m = refused(etcd.https(), opts(TlsOptions { ca: ca(&etcd), ..Default::default() }), ErrorKind::Unavailable).await;
    assert!(m.contains("certificate") && m.contains("UnknownIssuer"), "{m}");
    // Plain HTTP against the TLS port, and TLS against the plain one.
    let plain = ClientOptions { connect_timeout: Duration::from_secs(3), ..Default::default() };
    let m = refused(format!("http://127.0.0.1:{}", etcd.tls_port), plain, ErrorKind::Unavailable).await;
    assert!(m.contains("TLS") || m.contains("https"), "{m}");
    let to_plain = format!("https://127.0.0.1:{}", etcd.plain_port);
    let m = refused(to_plain, opts(TlsOptions { ca: ca(&etcd), ..Default::default() }), ErrorKind::Unavailable).await;
    assert!(m.contains("TLS"), "{m}");
}

// covers: TLS-NAME-001
#[tokio::test]
async fn a_certificate_for_another_name_needs_server_name() {
    let etcd = TlsEtcd::start("other-name", false, &[]);
    let m = refused(etcd.https(), opts(TlsOptions { ca: ca(&etcd), ..Default::default() }), ErrorKind::Unavailable).await;
    assert!(m.contains("server_name"), "{m}");
    let named = TlsOptions { ca: ca(&etcd), server_name: Some("other.example".into()), ..Default::default() };
    let client = Client::connect([etcd.https()], opts(named)).await.unwrap();
    exercise(&client).await;
    client.close().await;
}

// covers: TLS-ARGS-001
#[tokio::test]
async fn tls_options_are_checked_before_anything_is_sent() {
    let tls = TlsOptions { ca: Some(Pem::File("/nonexistent/ca.pem".into())), ..Default::default() };
    let e = Client::connect(["https://127.0.0.1:1"], opts(tls.clone())).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("/nonexistent/ca.pem"), "{e}");
    let e = Client::connect(["http://127.0.0.1:1"], opts(TlsOptions::default())).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e = Client::connect(["https://127.0.0.1:1", "http://127.0.0.1:2"], ClientOptions::default()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let garbage = TlsOptions { ca: Some(Pem::Bytes(b"-----BEGIN CERTIFICATE-----\nnot base64\n".to_vec())), ..Default::default() };
    let e = Client::connect(["https://127.0.0.1:1"], opts(garbage)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}
