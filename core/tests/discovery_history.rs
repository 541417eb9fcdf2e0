//! A discovery followed through a member restart, a cut-off and a compaction, judged against
//! etcd's own history of the service's keys (a raw watch on a member that stays up).
mod common;
use common::*;
use etcdlock::Instances;
use std::collections::BTreeMap;
use std::time::Duration;

/// etcd's history of the keys under `prefix`: (revision, key, Some(value) or None for a delete).
type History = Vec<(i64, Vec<u8>, Option<Vec<u8>>)>;

/// The instances (direct children of `prefix`) as they were at `revision`, by name.
fn state_at(history: &History, prefix: &[u8], revision: i64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut state = BTreeMap::new();
    for (_, key, value) in history.iter().take_while(|(rev, ..)| *rev <= revision) {
        let Some(name) = key.strip_prefix(prefix) else { continue };
        if name.contains(&b'/') {
            continue;
        }
        match value {
            Some(v) => state.insert(name.to_vec(), v.clone()),
            None => state.remove(name),
        };
    }
    state
}

fn as_map(set: &Instances) -> BTreeMap<Vec<u8>, Vec<u8>> {
    set.instances.iter().map(|i| (i.name.clone(), i.value.clone())).collect()
}

// covers: DISC-HISTORY-001
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_set_is_etcds_state_at_its_revision_across_a_member_restart_and_a_compaction() {
    let mut etcd = Etcd::start(3);
    let eps = etcd.endpoints();
    let svc = "svc/api";
    let prefix = b"svc/api/".to_vec();

    // etcd's history, from a member that is never restarted.
    let mut stream = raw(&eps[2..]).await.watch(prefix.clone(), Some(etcd_client::WatchOptions::new().with_prefix())).await.unwrap();
    let history = tokio::spawn(async move {
        let mut h: History = Vec::new();
        while let Ok(Some(r)) = stream.message().await {
            for e in r.events() {
                let kv = e.kv().unwrap();
                let value = (e.event_type() == etcd_client::EventType::Put).then(|| kv.value().to_vec());
                h.push((kv.mod_revision(), kv.key().to_vec(), value));
            }
            if h.iter().any(|(_, k, v)| k.ends_with(b"/end") && v.is_some()) {
                return h;
            }
        }
        h
    });

    // The discoverer goes through proxies (its first endpoint is member 0, the one restarted),
    // so that it can also be cut off across the compaction.
    let (proxies, via) = proxied(&etcd);
    let watcher = client_for(&via).await;
    let mut d = watcher.discover(svc).unwrap();
    let follower = tokio::spawn(async move {
        let mut sets = Vec::new();
        loop {
            let set = tokio::time::timeout(Duration::from_secs(30), d.next()).await.expect("no set in 30 s").unwrap();
            let done = set.instances.iter().any(|i| i.name == b"end");
            sets.push(set);
            if done {
                return sets;
            }
        }
    });

    let writer = client_for(&eps[1..]).await;
    let mut raw_writer = raw(&eps[1..]).await;
    let mut regs = std::collections::VecDeque::new();
    for step in 0..60 {
        match step % 4 {
            0 | 1 => regs.push_back(writer.register(svc, format!("n{step:02}"), format!("v{step}"), 10).await.unwrap()),
            2 => drop(regs.front().unwrap().update(format!("u{step}")).await.unwrap()),
            _ => regs.pop_front().unwrap().close().await.unwrap(),
        }
        // A key below an instance is not an instance.
        if step == 7 {
            raw_writer.put(format!("{svc}/n04/below"), "x", None).await.unwrap();
        }
        if step == 15 {
            etcd.kill(0);
        }
        if step == 25 {
            proxies.iter().for_each(|p| p.set(proxy::Mode::Blackhole));
        }
        if step == 30 {
            let head = raw_writer.put("other", "x", None).await.unwrap().header().unwrap().revision();
            raw_writer.compact(head, None).await.unwrap();
        }
        if step == 35 {
            proxies.iter().for_each(|p| {
                p.set(proxy::Mode::Pass);
                p.reset();
            });
        }
        if step == 40 {
            etcd.restart(0);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let end = writer.register(svc, "end", "", 10).await.unwrap();
    let sets = follower.await.unwrap();
    let history = tokio::time::timeout(Duration::from_secs(10), history).await.expect("history incomplete").unwrap();

    assert!(sets.len() >= 10, "only {} sets", sets.len());
    for pair in sets.windows(2) {
        assert!(pair[0].revision < pair[1].revision, "revisions go back: {} then {}", pair[0].revision, pair[1].revision);
    }
    for set in &sets {
        assert_eq!(as_map(set), state_at(&history, &prefix, set.revision), "the set at revision {} is not etcd's state then", set.revision);
    }
    let last = sets.last().unwrap();
    assert_eq!(as_map(last), state_at(&history, &prefix, i64::MAX), "the last set is not the final state");

    end.close().await.unwrap();
    for r in regs {
        r.close().await.unwrap();
    }
    watcher.close().await;
    writer.close().await;
}
