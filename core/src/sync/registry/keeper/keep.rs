//! Keeping an instance registered: noticing that its key stopped being this registration's,
//! and registering it again.

use super::*;

/// How the key stopped being this registration's.
pub(super) enum Gone {
    Lost(LostReason),
    TakenOver,
}

impl Shared {
    /// Waits until the key stops being on `lease`: the lease lost, the key deleted, or put by
    /// another registrant. Watches the key from `after` + 1.
    async fn gone(&self, lease: &Lease, mut after: i64) -> Gone {
        let lost = lease.lost();
        let mut backoff = Backoff::default();
        loop {
            let opts = WatchOptions { prefix: false, start_revision: Some(after + 1), prev_kv: false };
            let watching = async {
                let mut w = self.client.watch(self.key.clone(), opts).await?;
                loop {
                    let e = match w.next().await {
                        None => return Err(closed_error()),
                        Some(e) => e?,
                    };
                    after = e.revision();
                    match e.event_type {
                        EventType::Delete => return Ok(Gone::Lost(LostReason::KeyDeleted)),
                        EventType::Put if e.kv.lease != lease.id() => return Ok(Gone::TakenOver),
                        EventType::Put => {}
                    }
                }
            };
            let ended: Result<Gone> = tokio::select! {
                reason = lost.wait() => return Gone::Lost(reason),
                r = watching => r,
            };
            match ended {
                Ok(gone) => return gone,
                Err(e) if e.kind() == ErrorKind::Closed => return Gone::Lost(LostReason::Closed),
                Err(e) => {
                    // Compacted or unreachable: the key as it is now tells.
                    tracing::debug!(target: "etcdlock", key = %self.name(), error = %e, "registration watch restarts");
                    match self.client.get(&self.key).await {
                        Ok(None) => return Gone::Lost(LostReason::KeyDeleted),
                        Ok(Some(kv)) if kv.lease != lease.id() => return Gone::TakenOver,
                        Ok(Some(kv)) => after = kv.mod_revision,
                        Err(_) => tokio::time::sleep(backoff.next_delay()).await,
                    }
                }
            }
        }
    }
}

/// Keeps the instance registered until the task is aborted, the client closes or another
/// registrant takes the name.
pub(super) async fn keep(shared: Arc<Shared>, mut lease: Lease, mut rev: i64) {
    loop {
        let reason = match shared.gone(&lease, rev).await {
            // The client's close revokes the lease, which must stay in its list until then:
            // dropped here it would be revoked by a detached task that an exit's runtime
            // shutdown may drop first (the key then outlived the process by its TTL).
            Gone::Lost(LostReason::Closed) => return,
            Gone::Lost(r) => r,
            Gone::TakenOver => {
                tracing::warn!(target: "etcdlock", key = %shared.name(), "instance taken over by another registrant: registration ended");
                shared.set_lease(None);
                let _ = shared.events.send(RegistrationEvent::TakenOver);
                return;
            }
        };
        tracing::warn!(target: "etcdlock", key = %shared.name(), reason = %reason, "instance registration lost: registering again");
        let stale = lease.id();
        shared.set_lease(None);
        drop(lease); // revoked in the background if it still exists
        let _ = shared.events.send(RegistrationEvent::Lost(reason));
        let mut backoff = Backoff::default();
        let put;
        (lease, rev, put) = loop {
            if shared.client.is_closed() {
                return;
            }
            match shared.put(false, Some(stale)).await {
                Ok(done) => break done,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    tracing::warn!(target: "etcdlock", key = %shared.name(), "instance taken over by another registrant: registration ended");
                    let _ = shared.events.send(RegistrationEvent::TakenOver);
                    return;
                }
                Err(e) if e.kind() == ErrorKind::Closed => return,
                Err(e) => {
                    tracing::debug!(target: "etcdlock", key = %shared.name(), error = %e, "registering again failed, retrying");
                    tokio::time::sleep(backoff.next_delay()).await;
                }
            }
        };
        shared.done_registering(&lease, put).await;
        crate::sync::PerClient::of(&shared.client).metrics.reregistered(reason);
        tracing::info!(target: "etcdlock", key = %shared.name(), lease = format_args!("{:x}", lease.id()), "instance registered again");
        let _ = shared.events.send(RegistrationEvent::Restored { lease: lease.id() });
    }
}
