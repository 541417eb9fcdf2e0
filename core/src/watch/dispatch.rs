//! Where each answer on the watch stream goes: events, creations and cancellations to the
//! subscriber they belong to, progress to every confirmed one, and a refusal for auth back to
//! the hub, which finds out whether it was a stale token ([`crate::watch::permitted`]).

use crate::error::{etcd_says, Error, ErrorKind, Says};
use crate::watch::channel::Sender;
use crate::watch::event;
use crate::watch::hub::Msg;
use std::collections::{HashMap, VecDeque};

/// A create sent on the stream and not confirmed yet: what it asked to watch.
pub(super) struct Unconfirmed {
    pub id: i64,
    pub key: Vec<u8>,
    pub prefix: bool,
}

/// What the hub does after handing a response on.
pub(super) enum Next {
    Go,
    /// Cancel this watch on the server: its subscriber was cut off for being too slow.
    Cancel(i64),
    /// etcd refused this create for auth: for a stale token or for the user's permissions.
    Refused { create: Unconfirmed, reason: String },
}

/// Hands a response to its subscriber. `progress`: a progress answer is passed on to every
/// confirmed subscriber.
pub(super) fn dispatch(
    resp: etcd_client::WatchResponse,
    subs: &mut HashMap<i64, Sender<Msg>>,
    unconfirmed: &mut VecDeque<Unconfirmed>,
    progress: bool,
) -> Next {
    let mut id = resp.watch_id();
    // A progress answer (to the hub's question after a quiet spell) names no watch.
    if id == -1 && !resp.created() && !resp.canceled() && resp.events().is_empty() {
        if let (true, Some(revision)) = (progress, resp.header().map(|h| h.revision())) {
            for (_, tx) in subs.iter().filter(|(sub, _)| !unconfirmed.iter().any(|u| u.id == **sub)) {
                // A full buffer drops it: the next answer will do.
                let _ = tx.try_send(Msg::Progress { revision });
            }
        }
        return Next::Go;
    }
    let mut create = None;
    if resp.created() {
        create = match unconfirmed.iter().position(|u| u.id == id) {
            Some(at) => unconfirmed.remove(at),
            // Refused before it got its ID: the oldest create not yet answered.
            None if id < 0 => unconfirmed.pop_front(),
            None => None,
        };
        id = create.as_ref().map_or(id, |c| c.id);
    }
    let Some(tx) = subs.get(&id) else { return Next::Go };
    // A watch refused at creation was never created: the hub finds out why (`Client::watch`
    // fails with the reason if the user may not watch it).
    let refused = resp.canceled() && refused_for_auth(resp.cancel_reason());
    if let Some(create) = create.filter(|_| refused) {
        return Next::Refused { create, reason: resp.cancel_reason().to_owned() };
    }
    let revision = resp.header().map_or(0, |h| h.revision());
    let mut msgs = Vec::with_capacity(2);
    if resp.created() && !refused {
        msgs.push(Msg::Created { revision });
    }
    if !resp.events().is_empty() {
        msgs.push(Msg::Events(resp.events().iter().map(event::convert).collect()));
    }
    if resp.canceled() {
        let err = if resp.compact_revision() > 0 {
            Error::compacted(resp.compact_revision())
        } else if resp.cancel_reason().is_empty() {
            // Cancelled without a reason: the member lost its leader (require-leader).
            subs.remove(&id);
            return Next::Go;
        } else {
            let reason = resp.cancel_reason();
            let kind = if refused { ErrorKind::Auth } else { ErrorKind::InvalidArgument };
            Error::new(kind, format!("watch cancelled by etcd: {reason}"))
        };
        msgs.push(Msg::Failed(Box::new(err)));
    }
    for m in msgs {
        if matches!(m, Msg::Failed(_)) {
            // The server already ended it. If the buffer is full the subscriber sees a plain
            // close, re-subscribes, and gets the same answer again.
            let _ = tx.try_send(m);
            subs.remove(&id);
            return Next::Go;
        }
        if tx.try_send(m).is_err() {
            // Too slow (or gone): cut it off; it resumes from its last revision.
            subs.remove(&id);
            return Next::Cancel(id);
        }
    }
    Next::Go
}

/// Whether etcd refused a watch for its auth token or the user's permissions.
fn refused_for_auth(reason: &str) -> bool {
    matches!(etcd_says(reason), Some(Says::Auth | Says::StaleToken))
}
