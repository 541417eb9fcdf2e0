//! Following a service's instances: one read at revision R, a watch from R + 1, and the whole
//! set after each change, across reconnects and compaction.

use super::{instance, read, Instances};
use crate::client::{closed_error, Client};
use crate::error::{ErrorKind, Result};
use crate::transport::backoff::Backoff;
use crate::watch::event::EventType;
use crate::watch::{Watch, WatchOptions};

/// Events taken from the watch at once (then the rest of the last one's revision, so that no set
/// stops halfway through a revision's changes).
const BATCH: usize = 1024;

/// Instance sets of one service, from [`Client::discover`](crate::Client::discover).
///
/// The first [`next`](Discovery::next) returns the current set, each later one the set after
/// the next change (changes that arrive together are applied together; every set is the state
/// at its `revision`, none is skipped that a change made visible). A watch that breaks resumes
/// from the last revision seen, with no gap and no duplicate; one whose history was compacted
/// away is replaced by a fresh read, reported as a set only if it differs. `next` fails only
/// when the client is closed (`Closed`) or etcd refuses the watch for good (`Auth`).
///
/// ```no_run
/// # async fn demo(client: etcdlock::Client) -> etcdlock::Result<()> {
/// let mut discovery = client.discover("svc/api")?;
/// loop {
///     let set = discovery.next().await?;
///     let addrs: Vec<_> = set.instances.iter().filter_map(|i| etcdlock::grpc_endpoint_addr(&i.value)).collect();
///     println!("at revision {}: {addrs:?}", set.revision);
/// }
/// # }
/// ```
pub struct Discovery {
    client: Client,
    prefix: Vec<u8>,
    watch: Option<Watch>,
    current: Instances,
    /// `current` differs from what `next` last returned (or nothing was returned yet). Kept
    /// here, not in `next`'s locals, so that a `next` dropped halfway loses nothing.
    unreported: bool,
    /// What `next` last returned.
    last: Option<Vec<super::Instance>>,
    backoff: Backoff,
}

impl Discovery {
    pub(super) fn new(client: Client, prefix: Vec<u8>) -> Discovery {
        Discovery { client, prefix, watch: None, current: Instances::default(), unreported: false, last: None, backoff: Backoff::default() }
    }

    /// Waits for the next set (the current one on the first call). Cancel-safe: a call dropped
    /// before it returns leaves what it read for the next one.
    pub async fn next(&mut self) -> Result<Instances> {
        loop {
            self.client.check_open()?;
            if self.unreported {
                self.unreported = false;
                self.last = Some(self.current.instances.clone());
                crate::sync::PerClient::of(&self.client).metrics.discovered();
                return Ok(self.current.clone());
            }
            let Some(watch) = self.watch.as_mut() else {
                match self.start().await {
                    Ok(()) => self.backoff.reset(),
                    Err(e) if e.is_unreachable() => self.client.sleep_unless_closed(self.backoff.next_delay()).await?,
                    Err(e) => return Err(e),
                }
                continue;
            };
            let mut batch = match watch.next_batch(BATCH).await {
                None => return Err(closed_error()),
                Some(Err(e)) if e.kind() == ErrorKind::Compacted || e.is_unreachable() => {
                    // Whatever happened in the history we cannot see, a fresh read tells.
                    tracing::info!(target: "etcdlock", service = %self.service(), after = self.current.revision, error = %e, "discovery reads the instances again");
                    self.watch = None;
                    continue;
                }
                Some(Err(e)) => return Err(e),
                Some(Ok(batch)) => batch,
            };
            // A batch cut off at BATCH may stop inside a revision: the rest of it is already
            // here (never waited for: nothing more may come), and is applied with it.
            if let Some(last) = batch.last().map(|e| e.revision()) {
                batch.extend(watch.rest_of_revision(last));
            }
            self.backoff.reset();
            for event in &batch {
                if apply(&self.prefix, &mut self.current, event.event_type, &event.kv) {
                    self.unreported = self.last.as_ref() != Some(&self.current.instances);
                }
                self.current.revision = event.revision();
            }
        }
    }

    /// Reads the set and watches the prefix from just after that read; the set is reported
    /// if it differs from the last one returned.
    async fn start(&mut self) -> Result<()> {
        let set = read(&self.client, &self.prefix).await?;
        let opts = WatchOptions { prefix: true, start_revision: Some(set.revision + 1), prev_kv: false };
        let watch = self.client.watch(self.prefix.clone(), opts).await?;
        self.unreported = self.last.as_ref() != Some(&set.instances);
        tracing::debug!(target: "etcdlock", service = %self.service(), revision = set.revision, instances = set.instances.len(), "discovery read the instances, watching from the next revision");
        (self.current, self.watch) = (set, Some(watch));
        Ok(())
    }

}

impl Discovery {
    /// The service's name, for the logs.
    fn service(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.prefix.strip_suffix(b"/").unwrap_or(&self.prefix))
    }
}

/// Applies one change to `set` (kept ordered by name); whether the set changed.
fn apply(prefix: &[u8], set: &mut Instances, event: EventType, kv: &crate::client::kv::KeyValue) -> bool {
    let Some(name) = kv.key.strip_prefix(prefix) else { return false };
    let at = set.instances.binary_search_by(|i| i.name.as_slice().cmp(name));
    match (event, at) {
        (EventType::Put, found) => {
            let Some(new) = instance(prefix, kv) else { return false };
            match found {
                Ok(i) if set.instances[i] == new => return false,
                Ok(i) => set.instances[i] = new,
                Err(i) => set.instances.insert(i, new),
            }
            true
        }
        (EventType::Delete, Ok(i)) => {
            set.instances.remove(i);
            true
        }
        (EventType::Delete, Err(_)) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::kv::KeyValue;

    fn kv(key: &str, value: &str, rev: i64) -> KeyValue {
        KeyValue { key: key.into(), value: value.into(), create_revision: rev, mod_revision: rev, version: 1, lease: 7 }
    }

    #[test]
    fn changes_keep_the_set_ordered_and_say_whether_it_changed() {
        let mut set = Instances::default();
        assert!(apply(b"s/", &mut set, EventType::Put, &kv("s/b", "1", 2)));
        assert!(apply(b"s/", &mut set, EventType::Put, &kv("s/a", "1", 3)));
        assert!(!apply(b"s/", &mut set, EventType::Put, &kv("s/x/nested", "1", 4)), "not an instance");
        assert!(apply(b"s/", &mut set, EventType::Put, &kv("s/b", "2", 5)), "an update");
        let names: Vec<&[u8]> = set.instances.iter().map(|i| i.name.as_slice()).collect();
        assert_eq!(names, [&b"a"[..], b"b"]);
        assert!(apply(b"s/", &mut set, EventType::Delete, &kv("s/a", "", 6)));
        assert!(!apply(b"s/", &mut set, EventType::Delete, &kv("s/a", "", 7)));
        assert_eq!(set.instances.len(), 1);
    }
}
