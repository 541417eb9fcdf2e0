//! Fences: what a holder passes to a database or another service so that it, not the holder,
//! refuses a write from an acquisition that no longer holds.
//!
//! A [`Fence`] is the lock's name, the acquisition's fencing token (its key's create revision)
//! and the identity of the etcd cluster that issued it (revisions of two clusters are not
//! comparable). Its string form is stable (`etcdlock-fence.v1.<kind>.<cluster hex>.<token>.<name
//! in hex>`), short enough for a request header, and [`Fence::parse`] reads it back.
//! [`Client::check_fence`] asks etcd whether that acquisition still holds (one linearizable read:
//! advisory, as Chubby's `CheckSequencer` — a database that checks the token itself, as
//! `docs/design.md` "Fencing at the database" shows, is what makes a late write fail).
//!
//! ```no_run
//! # async fn demo(client: etcdlock::Client) -> etcdlock::Result<()> {
//! let guard = client.mutex("accounts/7", 10)?.lock().await?;
//! let fence = guard.fence().await?;
//! let header = fence.to_string(); // e.g. for an X-Etcdlock-Fence header
//! let back: etcdlock::Fence = header.parse()?;
//! assert!(client.check_fence(&back).await?);
//! # Ok(()) }
//! ```

pub mod sql;
#[cfg(feature = "postgres")]
pub mod postgres;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::sync::guard::LockGuard;
use etcd_client::{GetOptions, SortOrder, SortTarget};

const PREFIX: &str = "etcdlock-fence.v1.";

/// What holds, for [`Client::check_fence`] to look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FenceKind {
    /// A key of the lock's queue (`<name>/…`) created at the token, with no older waiter: a
    /// mutex, a write lock, a leadership, a task's claim. (A semaphore permit or a read lock
    /// has a fence of this kind too, which `check_fence` answers as the queue's head only: they
    /// are not exclusive.)
    Queue,
    /// The key `<name>` itself, created at the token: a pool's slot.
    Key,
}

/// An acquisition, as a database or another service can check it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fence {
    /// What key the token is the create revision of, and so how a checker verifies it.
    pub kind: FenceKind,
    /// The lock's name (for [`FenceKind::Key`], the key).
    pub name: Vec<u8>,
    /// The acquisition's fencing token: larger for every later acquisition of the name.
    pub token: i64,
    /// The etcd cluster's ID (from its response headers).
    pub cluster: u64,
}

impl Fence {
    /// Reads a fence's string form.
    pub fn parse(s: &str) -> Result<Fence> {
        let bad = || Error::invalid(format!("not an etcdlock fence: {:?}", s.chars().take(80).collect::<String>()));
        let rest = s.strip_prefix(PREFIX).ok_or_else(bad)?;
        let mut parts = rest.splitn(4, '.');
        let kind = match parts.next() {
            Some("q") => FenceKind::Queue,
            Some("k") => FenceKind::Key,
            _ => return Err(bad()),
        };
        // Hex digits only (from_str_radix alone would take a leading '+'), as the bindings' parsers.
        let cluster = parts.next().filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit())).ok_or_else(bad)?;
        let cluster = u64::from_str_radix(cluster, 16).map_err(|_| bad())?;
        // Canonical decimal only (no sign, no leading zero), as every binding writes and reads it.
        let token = parts.next().filter(|t| t.bytes().all(|b| b.is_ascii_digit()) && !t.starts_with('0')).ok_or_else(bad)?;
        let token: i64 = token.parse().map_err(|_| bad())?;
        let name = unhex(parts.next().ok_or_else(bad)?).ok_or_else(bad)?;
        if token <= 0 || name.is_empty() {
            return Err(bad());
        }
        Ok(Fence { kind, name, token, cluster })
    }
}

impl std::fmt::Display for Fence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.kind {
            FenceKind::Queue => "q",
            FenceKind::Key => "k",
        };
        let name: String = self.name.iter().map(|b| format!("{b:02x}")).collect();
        write!(f, "{PREFIX}{kind}.{:x}.{}.{name}", self.cluster, self.token)
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

impl std::str::FromStr for Fence {
    type Err = Error;
    fn from_str(s: &str) -> Result<Fence> {
        Fence::parse(s)
    }
}

impl Client {
    /// The etcd cluster's ID, read once per client.
    pub async fn cluster_id(&self) -> Result<u64> {
        let per = crate::sync::PerClient::of(self);
        let id = per
            .cluster
            .get_or_try_init(|| async {
                let resp = self
                    .call(None, true, |rpc| {
                        let mut kv = rpc.kv.get();
                        async move { kv.get("etcdlock/cluster-id", Some(GetOptions::new().with_count_only())).await }
                    })
                    .await?;
                Ok::<u64, Error>(resp.header().map_or(0, |h| h.cluster_id()))
            })
            .await?;
        Ok(*id)
    }

    /// Whether the acquisition `fence` names still holds, now (one linearizable read). `false`
    /// for a fence of another etcd cluster. Advisory: it may stop holding right after.
    pub async fn check_fence(&self, fence: &Fence) -> Result<bool> {
        if fence.cluster != self.cluster_id().await? {
            return Ok(false);
        }
        match fence.kind {
            FenceKind::Key => Ok(self.get(&fence.name).await?.is_some_and(|kv| kv.create_revision == fence.token)),
            FenceKind::Queue => {
                let prefix = [fence.name.as_slice(), b"/"].concat();
                let o = GetOptions::new().with_prefix().with_sort(SortTarget::Create, SortOrder::Ascend).with_limit(8).with_max_create_revision(fence.token);
                let resp = self
                    .call(None, true, move |rpc| {
                        let (mut kv, prefix, o) = (rpc.kv.get(), prefix.clone(), o.clone());
                        async move { kv.get(prefix, Some(o)).await }
                    })
                    .await?;
                // The oldest waiter key must be the one created at the token.
                let prefix = [fence.name.as_slice(), b"/"].concat();
                let first = resp.kvs().iter().map(crate::client::kv::KeyValue::from).find(|kv| crate::sync::queue::is_waiter(&prefix, kv));
                Ok(first.is_some_and(|kv| kv.create_revision == fence.token))
            }
        }
    }
}

impl LockGuard {
    /// This acquisition's [`Fence`] (reads the cluster's ID on a client's first fence).
    pub async fn fence(&self) -> Result<Fence> {
        let cluster = self.client().cluster_id().await?;
        Ok(Fence { kind: FenceKind::Queue, name: self.name().to_vec(), token: self.fencing_token(), cluster })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_round_trips_through_its_string_form() {
        let f = Fence { kind: FenceKind::Queue, name: b"accounts/7".to_vec(), token: 1234, cluster: 0xdead_beef_0102 };
        let s = f.to_string();
        assert_eq!(s, "etcdlock-fence.v1.q.deadbeef0102.1234.6163636f756e74732f37");
        assert_eq!(Fence::parse(&s).unwrap(), f);
        let k = Fence { kind: FenceKind::Key, ..f };
        assert_eq!(k.to_string().parse::<Fence>().unwrap(), k);
        for bad in ["", "etcdlock-fence.v1.q.zz.1.61", "etcdlock-fence.v1.x.1.1.61", "etcdlock-fence.v1.q.1.0.61", "etcdlock-fence.v1.q.1.1.6", "etcdlock-fence.v1.q.1.1.", "etcdlock-fence.v1.q.1.01.61", "etcdlock-fence.v1.q.1.+1.61",
            "etcdlock-fence.v1.q.+1.1.61", "etcdlock-fence.v1.q.-1.1.61", "etcdlock-fence.v1.q..1.61", "etcdlock-fence.v1.q.11111111111111111.1.61",
            "etcdlock-fence.v1.q.1.9223372036854775808.61"] {
            assert!(Fence::parse(bad).is_err(), "{bad:?}");
        }
    }
}
