//! The client's metrics in a registry of the `prometheus` crate (`etcdlock::PrometheusCollector`,
//! cargo feature `prometheus`): two clients' collectors in one registry, gathered and encoded by
//! the crate itself.
//!
//! A test binary of its own: it needs the feature, which every other build of the workspace
//! leaves off (`required-features` in core/Cargo.toml; scripts/test.sh builds and runs it with
//! the PostgreSQL one, `cargo test --release -p etcdlock --features postgres,prometheus`).

#[path = "common/mod.rs"]
mod common;

use common::*;
use etcdlock::{Client, ClientOptions, PrometheusCollector};
use prometheus::{Encoder, Registry, TextEncoder};

async fn named(name: &str) -> Client {
    let opts = ClientOptions { name: Some(name.into()), ..Default::default() };
    Client::connect(shared().endpoints(), opts).await.expect("connect")
}

fn text(registry: &Registry) -> String {
    let mut out = Vec::new();
    TextEncoder::new().encode(&registry.gather(), &mut out).expect("encode");
    String::from_utf8(out).unwrap()
}

// covers: METRICS-REGISTRY-001
#[tokio::test]
async fn two_clients_share_one_registry_under_their_own_label() {
    let (a, b) = (named("orders").await, named("billing").await);
    let defaulted = client().await;
    let guard = a.mutex(prefix("prom") + "job", 10).unwrap().lock().await.unwrap();
    guard.release().await.unwrap();

    let registry = Registry::new();
    for c in [&a, &b, &defaulted] {
        registry.register(Box::new(PrometheusCollector::new(c))).expect("register: no duplicate series");
    }
    let families = registry.gather();
    let want = a.metrics();
    assert_eq!(families.len(), want.entries().len(), "one family per metric, merged across clients");
    for e in want.entries() {
        let f = families.iter().find(|f| f.name() == format!("etcdlock_{}", e.prometheus)).unwrap_or_else(|| panic!("no family {}", e.prometheus));
        assert_eq!(f.help(), e.help);
        let clients: std::collections::BTreeSet<_> =
            f.get_metric().iter().map(|m| m.get_label().iter().find(|l| l.name() == "client").unwrap().value().to_string()).collect();
        assert_eq!(clients, [a.name(), b.name(), defaulted.name()].iter().map(|s| s.to_string()).collect(), "{}", e.prometheus);
    }
    let text = text(&registry);
    assert!(text.contains("# TYPE etcdlock_lock_acquisitions_total counter\n"), "{text}");
    assert!(text.contains("# TYPE etcdlock_lock_wait_seconds histogram\n"), "{text}");
    assert!(text.contains("# TYPE etcdlock_leases_alive gauge\n"), "{text}");
    assert!(text.contains("etcdlock_lock_acquisitions_total{client=\"orders\"} 1\n"), "{text}");
    assert!(text.contains("etcdlock_lock_acquisitions_total{client=\"billing\"} 0\n"), "{text}");
    assert!(text.contains("etcdlock_lock_wait_seconds_count{client=\"orders\"} 1\n"), "{text}");
    assert!(text.contains("etcdlock_lock_wait_seconds_bucket{client=\"orders\",le=\"+Inf\"} 1\n"), "{text}");
    assert!(text.contains("etcdlock_lock_losses_total{client=\"billing\",reason=\"expired\"} 0\n"), "{text}");
    assert_eq!(text.matches("# TYPE etcdlock_lock_acquisitions_total ").count(), 1, "one family");

    // A second collector of the same client is the same series: refused, as the crate does.
    assert!(registry.register(Box::new(PrometheusCollector::new(&a))).is_err());
    registry.unregister(Box::new(PrometheusCollector::new(&b))).expect("unregister");
    let text = crate::text(&registry);
    assert!(!text.contains("client=\"billing\"") && text.contains("client=\"orders\""), "{text}");
    for c in [a, b, defaulted] {
        c.close().await;
    }
}
