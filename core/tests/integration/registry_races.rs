//! A registration's `close` and `update` while it registers the instance again after a loss.
//! The client's one link is delayed by 600 ms each way, so that registering again (a lease
//! grant, then the put) takes 2.4 s: both calls come while the put is on its way.

use crate::common::*;
use etcdlock::RegistrationEvent;
use std::time::Duration;

const LINK: Duration = Duration::from_millis(600);

/// A registration of `svc/n1` = "v1" through a delayed link, lost (its lease revoked by etcdctl)
/// and 1.6 s into registering again: the new lease is granted, its put not yet answered.
async fn registering_again(etcd: &Etcd, proxy: &proxy::Proxy, svc: &str) -> (etcdlock::Client, etcdlock::Registration) {
    let client = client_for(&[proxy.endpoint()]).await;
    let reg = client.register(svc, "n1", "v1", 10).await.unwrap();
    let mut events = reg.events();
    proxy.delay(LINK);
    let out = etcd.etcdctl(&["lease", "revoke", &format!("{:x}", reg.lease_id().unwrap())]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lost = tokio::time::timeout(Duration::from_secs(10), events.next()).await.expect("lost within 10 s");
    assert!(matches!(lost, Some(RegistrationEvent::Lost(_))), "{lost:?}");
    tokio::time::sleep(Duration::from_millis(1600)).await;
    (client, reg)
}

// covers: REG-CLOSE-RACE-001
#[tokio::test]
async fn close_while_registering_again_returns_with_nothing_left() {
    let etcd = Etcd::start(1);
    let proxy = proxy::Proxy::start(etcd.members[0].client_port);
    let svc = prefix("reg-close-race") + "api";
    let (client, reg) = registering_again(&etcd, &proxy, &svc).await;
    reg.close().await.unwrap();
    // Nothing now, and nothing later: the put under way lands on a lease already revoked, or
    // is removed with it before close returns.
    let eps = etcd.endpoints();
    for _ in 0..40 {
        assert_eq!(keys_under(&eps, &format!("{svc}/")).await, Vec::<String>::new(), "a key outlived close()");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(eventually(Duration::from_secs(3), || async { lease_ids(&eps).await.is_empty() }).await, "a lease outlived close()");
    proxy.set(proxy::Mode::Pass);
    client.close().await;
}

// covers: REG-UPDATE-RACE-001
#[tokio::test]
async fn an_update_while_registering_again_is_not_lost() {
    let etcd = Etcd::start(1);
    let proxy = proxy::Proxy::start(etcd.members[0].client_port);
    let svc = prefix("reg-update-race") + "api";
    let (client, reg) = registering_again(&etcd, &proxy, &svc).await;
    let e = reg.update("v2").await.unwrap_err();
    assert_eq!(e.kind(), etcdlock::ErrorKind::NotHeld, "{e}");
    let direct = client_for(&etcd.endpoints()).await;
    let value = || async { direct.instances(&svc).await.unwrap().instances.first().map(|i| i.value.clone()) };
    assert!(eventually(Duration::from_secs(10), || async { value().await == Some(b"v2".to_vec()) }).await, "the update was lost: {:?}", value().await);
    proxy.set(proxy::Mode::Pass);
    reg.close().await.unwrap();
    client.close().await;
    direct.close().await;
}
