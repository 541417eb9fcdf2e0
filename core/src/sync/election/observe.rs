//! Following an election's leader: the current one first, then every change, including "no
//! leader", across reconnects and compaction.

use super::{read_leader, Leader};
use crate::client::{closed_error, Client};
use crate::error::{ErrorKind, Result};
use crate::transport::backoff::Backoff;
use crate::watch::event::EventType;
use crate::watch::{Watch, WatchOptions};

/// Leader changes of one election, from [`Election::observe`](super::Election::observe).
///
/// The first [`next`](Observer::next) returns the current leader, each later one the next
/// change: a new leader, a proclamation (same key, new value) or `None` when the last candidate
/// went. Changes that come faster than they are read may be merged into the latest state,
/// which is never skipped, and an observer never goes back to an older state. A watch that
/// breaks is resumed; one whose history was compacted away is replaced by a fresh read. `next`
/// fails only when the client is closed (`Closed`) or etcd refuses the watch for good (e.g.
/// `PermissionDenied`).
///
/// ```no_run
/// # async fn demo(client: etcdlock::Client) -> etcdlock::Result<()> {
/// let mut observer = client.election("svc/leader", 10)?.observe();
/// loop {
///     match observer.next().await? {
///         Some(leader) => println!("leader {}", String::from_utf8_lossy(&leader.value)),
///         None => println!("no leader"),
///     }
/// }
/// # }
/// ```
pub struct Observer {
    client: Client,
    prefix: Vec<u8>,
    watch: Option<Watch>,
    /// What the last `next` returned; `None` before the first.
    last: Option<Option<Leader>>,
    /// An event said the leader may have changed, and the read that tells is not done: a
    /// `next` dropped during that read (cancelled) leaves it for the next call.
    stale: bool,
    /// The revision of the last read: the watch's events at or below it are already in what
    /// that read returned, and are skipped (delivered after it, an older proclamation would
    /// take the observer back).
    read_at: i64,
    backoff: Backoff,
}

impl Observer {
    pub(super) fn new(client: Client, prefix: Vec<u8>) -> Observer {
        Observer { client, prefix, watch: None, last: None, stale: false, read_at: 0, backoff: Backoff::default() }
    }

    /// Waits for the next leader change (the current leader on the first call).
    pub async fn next(&mut self) -> Result<Option<Leader>> {
        loop {
            self.client.check_open()?;
            if self.watch.is_none() {
                let leader = match self.start().await {
                    Ok(started) => started,
                    Err(e) if e.is_unreachable() => {
                        self.client.sleep_unless_closed(self.backoff.next_delay()).await?;
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                self.stale = false;
                if let Some(changed) = self.report(leader) {
                    return Ok(changed);
                }
                continue;
            }
            if self.stale {
                match read_leader(&self.client, &self.prefix).await {
                    Ok((leader, revision)) => {
                        self.stale = false;
                        self.read_at = revision;
                        if let Some(changed) = self.report(leader) {
                            return Ok(changed);
                        }
                    }
                    Err(e) if e.is_unreachable() => self.watch = None,
                    Err(e) => return Err(e),
                }
                continue;
            }
            let Some(watch) = self.watch.as_mut() else { continue };
            let event = match watch.next().await {
                None => return Err(closed_error()),
                Some(Err(e)) if e.kind() == ErrorKind::Compacted || e.is_unreachable() => {
                    // Whatever happened in the history we cannot see, a fresh read tells.
                    self.watch = None;
                    continue;
                }
                Some(Err(e)) => return Err(e),
                Some(Ok(event)) => event,
            };
            self.backoff.reset();
            if event.revision() <= self.read_at {
                continue;
            }
            let current = self.last.clone().flatten();
            match (&current, event.event_type) {
                // A proclamation: the event has it all.
                (Some(l), EventType::Put) if event.kv.key == l.key && event.kv.create_revision == l.revision => {
                    if let Some(changed) = self.report(Some(Leader { value: event.kv.value.clone(), ..l.clone() })) {
                        return Ok(changed);
                    }
                }
                // A newer candidate, or another key under the prefix: no change of leader.
                (Some(l), _) if event.kv.key != l.key => {}
                // The leader went or was replaced, or someone came while nobody led: read.
                _ => self.stale = true,
            }
        }
    }

    /// Reads the leader and watches the prefix from just after that read.
    async fn start(&mut self) -> Result<Option<Leader>> {
        let (leader, revision) = read_leader(&self.client, &self.prefix).await?;
        self.read_at = revision;
        let opts = WatchOptions { prefix: true, start_revision: Some(revision + 1), prev_kv: false };
        self.watch = Some(self.client.watch(self.prefix.clone(), opts).await?);
        Ok(leader)
    }

    /// `leader` if it differs from what was last returned.
    fn report(&mut self, leader: Option<Leader>) -> Option<Option<Leader>> {
        if self.last.as_ref() == Some(&leader) {
            return None;
        }
        self.last = Some(leader.clone());
        Some(leader)
    }

}
