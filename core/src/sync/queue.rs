//! Which keys under a lock's prefix are waiters.
//!
//! A lock `N` queues its waiters as keys directly under `N/`, as etcd's Go `concurrency.Mutex`
//! and `etcdctl lock` do. The same prefix range also holds keys that are no waiters at all: a
//! user's key written under `N/`, or the queue keys of a lock named `N/a`. Taking those for
//! waiters would make `N` look busy for as long as they exist, which for a key without a lease
//! is forever. So a key counts as a waiter only if it is what a waiter writes:
//! `N/<lease hex>` or `N/<lease hex>-<n hex>`, bound to that same lease. Every other key is
//! skipped by every queue read (enqueue, try-lock, handoff, the holder check).
//!
//! The reads stay one round trip while the queue holds only waiters: each asks for one key,
//! and only when that key turns out not to be a waiter does a paged read go past it.

use crate::transport::backoff::Backoff;
use crate::client::Client;
use crate::error::Result;
use crate::client::kv::KeyValue;
use crate::lease::LeaseState;
use crate::runtime;
use etcd_client::{GetOptions, SortOrder, SortTarget};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Keys per page when reading past keys that are not waiters.
const PAGE: i64 = 64;

/// Whether `key` lies under the queue prefix `<name>/` of lock `name`.
pub(crate) fn in_queue(name: &[u8], key: &[u8]) -> bool {
    key.len() > name.len() && key.starts_with(name) && key[name.len()] == b'/'
}

/// Whether `kv`, found under `prefix` (`<name>/`), is a waiter of that lock.
pub(crate) fn is_waiter(prefix: &[u8], kv: &KeyValue) -> bool {
    let Some(rest) = kv.key.strip_prefix(prefix) else { return false };
    if kv.lease <= 0 {
        return false;
    }
    let (id, slot) = match rest.iter().position(|&b| b == b'-') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    parse_hex(id) == Some(kv.lease as u64) && slot.map_or(true, |s| parse_hex(s).is_some_and(|n| n > 0))
}

/// `s` as a lower-case hex number: as Go's `%x` writes it, or zero-padded to 16 digits, as
/// `etcdctl lease grant` prints a lease ID (an operator who names a holder's key from that
/// output makes a waiter too: counting one key too many as a waiter can only make the lock
/// busier, never let two hold it).
fn parse_hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    s.iter().try_fold(0u64, |n, &c| {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => return None,
        };
        Some(n << 4 | d as u64)
    })
}

/// Where to look from, relative to a key found first that is not a waiter.
#[derive(Clone, Copy)]
pub(crate) enum Toward {
    /// Newest first: the predecessor of a waiter.
    Older,
    /// Oldest first: the holder.
    Newer,
}

/// The waiter a one-key queue read should have found: `first` itself when it is a waiter (or
/// there was none), else the next waiter past it in the read's order, read now. Returns the
/// waiter and the revision the answer is valid at (`revision`, or that of the later read).
pub(crate) async fn resolve(
    client: &Client,
    prefix: &[u8],
    first: Option<KeyValue>,
    revision: i64,
    toward: Toward,
) -> Result<(Option<KeyValue>, i64)> {
    match first {
        Some(kv) if !is_waiter(prefix, &kv) => Box::pin(read_past(client, prefix, kv.create_revision, revision, toward)).await,
        first => Ok((first, revision)),
    }
}

/// Reads pages of keys under `prefix` beyond create revision `bound` until a waiter turns up.
async fn read_past(client: &Client, prefix: &[u8], mut bound: i64, revision: i64, toward: Toward) -> Result<(Option<KeyValue>, i64)> {
    loop {
        let mut o = GetOptions::new().with_prefix().with_keys_only().with_limit(PAGE);
        o = match toward {
            // etcd reads a bound of 0 as "no bound".
            Toward::Older if bound <= 1 => return Ok((None, revision)),
            Toward::Older => o.with_sort(SortTarget::Create, SortOrder::Descend).with_max_create_revision(bound - 1),
            Toward::Newer => o.with_sort(SortTarget::Create, SortOrder::Ascend).with_min_create_revision(bound + 1),
        };
        let key = prefix.to_vec();
        let resp = client
            .call(None, true, move |rpc| {
                let (mut kv, key, o) = (rpc.kv.get(), key.clone(), o.clone());
                async move { kv.get(key, Some(o)).await }
            })
            .await?;
        let revision = resp.header().map_or(0, |h| h.revision());
        let kvs: Vec<KeyValue> = resp.kvs().iter().map(KeyValue::from).collect();
        if let Some(kv) = kvs.iter().find(|kv| is_waiter(prefix, kv)) {
            return Ok((Some(kv.clone()), revision));
        }
        match kvs.last() {
            Some(last) if resp.more() => bound = last.create_revision,
            _ => return Ok((None, revision)),
        }
    }
}

/// Deletes a queue key in the background: the one policy for every key a lock may have left
/// (an abandoned acquire's, a release that did not get through). `delete` is retried with
/// backoff while etcd does not answer, until it succeeds, the key's lease is lost (the key went
/// with it) or the client closes (which revokes the lease). With `again_after`, it deletes once
/// more that long after the first success: an enqueue abandoned in flight may still be applied
/// after the first delete (up to its own deadline), and its key would then be a ghost holder.
/// The caller keeps the key's name reserved until `delete` has run for the last time.
pub(crate) fn delete_in_background<F, Fut>(client: Client, key: &[u8], lease: Arc<LeaseState>, again_after: Option<Duration>, mut delete: F)
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = Result<()>> + Send,
{
    let key = String::from_utf8_lossy(key).into_owned();
    runtime::spawn_cleanup(async move {
        for pause in [None, again_after] {
            if let Some(pause) = pause {
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = client.inner.closed.cancelled() => return,
                }
            }
            let mut backoff = Backoff::default();
            while let Err(e) = delete().await {
                if client.is_closed() || lease.check_deadline() {
                    return;
                }
                if !e.is_unreachable() {
                    tracing::warn!(target: "etcdlock", key = %key, error = %e, "a queue key could not be deleted: it stays until its lease ends");
                    return;
                }
                tracing::debug!(target: "etcdlock", key = %key, error = %e, "deleting a queue key in the background: etcd did not answer, trying again");
                tokio::time::sleep(backoff.next_delay()).await;
            }
            if again_after.is_none() {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(key: &str, lease: i64) -> KeyValue {
        KeyValue { key: key.into(), lease, create_revision: 5, ..Default::default() }
    }

    #[test]
    fn only_waiter_keys_are_waiters() {
        let p = b"jobs/";
        assert!(is_waiter(p, &kv("jobs/694d8a1b", 0x694d8a1b)));
        assert!(is_waiter(p, &kv("jobs/694d8a1b-2", 0x694d8a1b)));
        assert!(is_waiter(p, &kv("jobs/694d8a1b-1f", 0x694d8a1b)));
        // Zero-padded, as `etcdctl lease grant` prints lease IDs.
        assert!(is_waiter(p, &kv("jobs/00000000694d8a1b", 0x694d8a1b)));
        assert!(is_waiter(p, &kv("jobs/0694d8a1b", 0x694d8a1b)));
        for (key, lease) in [
            ("jobs/694d8a1b", 0),            // no lease: a user's key
            ("jobs/694d8a1b", 0x694d8a1c),   // another lease's name
            ("jobs/last", 0x694d8a1b),       // a user's key on a lease
            ("jobs/a/694d8a1b", 0x694d8a1b), // the queue of lock "jobs/a"
            ("jobs/00000000694d8a1b0", 0x694d8a1b), // more than 16 digits
            ("jobs/694D8A1B", 0x694d8a1b),
            ("jobs/694d8a1b-", 0x694d8a1b),
            ("jobs/694d8a1b-0", 0x694d8a1b),
            ("jobs/694d8a1b-x", 0x694d8a1b),
            ("jobs/", 0x694d8a1b),
            ("jobsx/694d8a1b", 0x694d8a1b),
        ] {
            assert!(!is_waiter(p, &kv(key, lease)), "{key} on {lease:x}");
        }
    }
}
