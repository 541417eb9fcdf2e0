//! A discovery followed through a member's restart, a cut-off and a compaction, judged against
//! etcd's own history of the service's keys (a raw watch on a member that stays up).
use crate::common::*;
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
    // A follower is restarted: the cluster keeps its leader, so that the writes go on.
    let leader = etcd.leader().await;
    let (victim, other) = ((leader + 1) % 3, (leader + 2) % 3);
    let live = [eps[leader].clone(), eps[other].clone()];

    // etcd's history, from a member that is never restarted.
    let mut stream = raw(&eps[other..=other]).await.watch(prefix.clone(), Some(etcd_client::WatchOptions::new().with_prefix())).await.unwrap();
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

    // The discoverer goes through proxies (its first endpoint is the member restarted), so that
    // it can also be cut off across the compaction.
    let (proxies, via) = proxied(&etcd);
    let watcher = client_for(&[via[victim].clone(), via[leader].clone(), via[other].clone()]).await;
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

    let writer = client_for(&live).await;
    let mut raw_writer = raw(&live).await;
    let mut regs = std::collections::VecDeque::new();
    // What the history shows is what is checked, not what was meant: a write that fails (a
    // slow cluster on 2 cores) is only counted.
    let mut failed = 0;
    for step in 0..60 {
        let done = match step % 4 {
            0 | 1 => writer.register(svc, format!("n{step:02}"), format!("v{step}"), 10).await.map(|r| regs.push_back(r)),
            2 => match regs.front() {
                Some(r) => r.update(format!("u{step}")).await.map(drop),
                None => Ok(()),
            },
            _ => match regs.pop_front() {
                Some(r) => r.close().await,
                None => Ok(()),
            },
        };
        failed += done.is_err() as usize;
        // A key below an instance is not an instance.
        if step == 7 {
            raw_writer.put(format!("{svc}/n04/below"), "x", None).await.unwrap();
        }
        if step == 15 {
            etcd.kill(victim);
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
            etcd.restart(victim);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let end = writer.register(svc, "end", "", 10).await.unwrap();
    let sets = follower.await.unwrap();
    let history = tokio::time::timeout(Duration::from_secs(10), history).await.expect("history incomplete").unwrap();

    assert!(failed <= 10, "{failed} of 60 writes failed");
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
        let _ = r.close().await;
    }
    watcher.close().await;
    writer.close().await;
}
