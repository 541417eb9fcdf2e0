//! Reading a whole prefix at one revision, a page at a time (every page at the first page's
//! revision, so the pages make one consistent picture even while others write).

use crate::client::kv::KeyValue;
use crate::client::Client;
use crate::error::Result;
use etcd_client::GetOptions;
use std::collections::BTreeMap;

/// Keys per page.
const PAGE: i64 = 1000;

/// Every key under `prefix` at one revision, and that revision.
pub(crate) async fn load(client: &Client, prefix: &[u8]) -> Result<(BTreeMap<Vec<u8>, KeyValue>, i64)> {
    let end = crate::client::kv::prefix_range_end(prefix);
    let mut map = BTreeMap::new();
    // The whole keyspace starts at "\0": etcd refuses an empty key.
    let start = if prefix.is_empty() { vec![0] } else { prefix.to_vec() };
    let (mut from, mut revision) = (start, 0i64);
    loop {
        let (f, e) = (from.clone(), end.clone());
        let resp = client
            .call(None, true, move |rpc| {
                let (mut kv, f, e) = (rpc.kv.get(), f.clone(), e.clone());
                let mut o = GetOptions::new().with_range(e).with_limit(PAGE);
                if revision > 0 {
                    o = o.with_revision(revision);
                }
                async move { kv.get(f, Some(o)).await }
            })
            .await?;
        if revision == 0 {
            revision = resp.header().map_or(0, |h| h.revision());
        }
        let kvs: Vec<KeyValue> = resp.kvs().iter().map(KeyValue::from).collect();
        let more = resp.more();
        if let Some(last) = kvs.last() {
            from = [last.key.as_slice(), &[0]].concat();
        }
        for kv in kvs {
            map.insert(kv.key.clone(), kv);
        }
        if !more {
            return Ok((map, revision));
        }
    }
}
