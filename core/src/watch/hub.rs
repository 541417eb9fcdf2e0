//! One watch stream per client, multiplexing every watch of that client (user watches, lock
//! waiters, held-lock monitors) by client-chosen watch IDs.
//!
//! The hub does not resume anything itself. When the stream breaks (member down, no leader,
//! network), or a subscriber falls so far behind that its buffer fills, the hub drops that
//! subscriber's sender; the subscriber sees its channel close and re-subscribes from the
//! revision it needs. That keeps resume logic next to the state it depends on.
//!
//! A stream whose member went silent (its network drops everything, the connection stays
//! open) is noticed by asking for progress after [`IDLE`] without a message, and given up
//! when that gets no answer within [`SILENT`]; the next stream goes to the next member
//! ([`Paths`]).
//!
//! etcd checks a new watch against the auth token the stream was opened with. Once that token
//! expired, or a change to users or roles made it old, every new watch on the stream is refused
//! ("permission denied" on etcd 3.5, "invalid auth token" with watch ID -1 on 3.6), even for a
//! user who may watch the key. So a refusal is final only when the user may not read the
//! watch's range ([`permitted`]); otherwise the hub reopens the stream with the connection's
//! current token (every subscriber re-subscribes from where it is). etcd answers creates in the
//! order they were sent, which tells whose create a refusal without a watch ID was.

use crate::error::{Error, ErrorKind};
pub(crate) use crate::watch::event::{EventType, WatchEvent};
use crate::transport::health;
use crate::transport::paths::Paths;
use crate::runtime;
use crate::watch::channel::{self, Sender};
use crate::watch::dispatch::{dispatch, Next, Unconfirmed};
use crate::watch::permitted;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Responses buffered per subscriber before it counts as too slow and is cut off.
const BUFFER: usize = 256;

/// When a quiet stream is asked for progress, and how long the member may take to answer that
/// (or the opening of a stream): see transport/health.rs.
const IDLE: Duration = health::WATCH_IDLE;
const SILENT: Duration = health::WATCH;

/// What a subscriber wants watched.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub key: Vec<u8>,
    pub prefix: bool,
    /// 0 = from the server's current revision ("now").
    pub start_revision: i64,
    pub prev_kv: bool,
    pub only_deletes: bool,
}

#[derive(Debug)]
pub(crate) enum Msg {
    /// The server created the watch; events after `revision` will follow.
    Created { revision: i64 },
    Events(Vec<WatchEvent>),
    /// Every event of the watch up to `revision` was delivered: a stream resumed after it may
    /// start at `revision + 1`. Only from a member that answers progress requests only when
    /// every watch of the stream is synced (etcd ≥ 3.5.8, etcd-io/etcd#15220).
    Progress { revision: i64 },
    /// The watch ended for good (compaction, permission, bad request). Boxed: rare, and a
    /// message's size sets the size of every subscriber's queue.
    Failed(Box<Error>),
}

enum Cmd {
    Create { id: i64, spec: Spec, tx: Sender<Msg> },
    Cancel(i64),
}

pub(crate) struct Hub {
    tx: mpsc::UnboundedSender<Cmd>,
    next_id: AtomicI64,
    /// Subscriptions not dropped yet (`Client::metrics`'s `watches_open`).
    open: Arc<AtomicI64>,
}

/// A subscription; cancelled on the server when dropped.
pub(crate) struct Subscription {
    pub id: i64,
    pub rx: channel::Receiver<Msg>,
    hub: mpsc::UnboundedSender<Cmd>,
    open: Arc<AtomicI64>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let _ = self.hub.send(Cmd::Cancel(self.id));
        self.open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Hub {
    pub fn new(paths: Paths, closed: CancellationToken) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        runtime::spawn(run(paths, closed, rx));
        Hub { tx, next_id: AtomicI64::new(1), open: Default::default() }
    }

    /// Subscribes. The channel yields `Created` first, then events; it closes when the stream
    /// broke or the subscriber was too slow (re-subscribe), or after `Failed` (do not).
    pub fn subscribe(&self, spec: Spec) -> Subscription {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = channel::channel(BUFFER);
        let _ = self.tx.send(Cmd::Create { id, spec, tx });
        self.open.fetch_add(1, Ordering::Relaxed);
        Subscription { id, rx, hub: self.tx.clone(), open: self.open.clone() }
    }

    /// Subscriptions open now: each watch, each waiting acquire and each held lock's monitor
    /// has one.
    pub fn open(&self) -> i64 {
        self.open.load(Ordering::Relaxed)
    }
}

type Stream = (etcd_client::WatchRequestSender, etcd_client::WatchResponseStream);

/// Whether the member's progress answers can be passed on (see [`Msg::Progress`]): before etcd
/// 3.5.8 a member answered with its current revision even while some watches of the stream had
/// not caught up, and a watch resumed from there would skip events.
async fn progress_is_synced(etcd: &etcd_client::Client) -> bool {
    let mut m = etcd.maintenance_client();
    let Ok(Ok(status)) = tokio::time::timeout(SILENT, m.status()).await else { return false };
    let v: Vec<u32> = status.version().split('.').map_while(|p| p.parse().ok()).collect();
    v.as_slice() >= [3, 5, 8].as_slice()
}

fn options(id: i64, spec: &Spec) -> etcd_client::WatchOptions {
    let mut o = etcd_client::WatchOptions::new().with_watch_id(id).with_start_revision(spec.start_revision);
    if spec.prefix {
        o = o.with_prefix();
    }
    if spec.prev_kv {
        o = o.with_prev_key();
    }
    if spec.only_deletes {
        o = o.with_filters([etcd_client::WatchFilterType::NoPut]);
    }
    o
}

async fn run(mut paths: Paths, closed: CancellationToken, mut rx: mpsc::UnboundedReceiver<Cmd>) {
    let mut subs: HashMap<i64, Sender<Msg>> = HashMap::new();
    // Creates sent on the stream and not confirmed yet, in the order they were sent.
    let mut unconfirmed: VecDeque<Unconfirmed> = VecDeque::new();
    let mut stream: Option<Stream> = None;
    // When the stream was last heard from, and when progress was asked for since.
    let mut heard = Instant::now();
    let mut asked: Option<Instant> = None;
    // Whether the stream's member answers progress requests only for synced watches.
    let mut progress = false;
    loop {
        let check = match asked {
            Some(at) => at + SILENT,
            None => heard + IDLE,
        };
        let watching = stream.is_some() && !subs.is_empty();
        tokio::select! {
            _ = closed.cancelled() => return,
            cmd = rx.recv() => match cmd {
                None => return,
                Some(Cmd::Cancel(id)) => {
                    if subs.remove(&id).is_some() {
                        if let Some(s) = stream.as_mut() {
                            let _ = s.0.cancel(id).await;
                        }
                    }
                }
                Some(Cmd::Create { id, spec, tx }) => {
                    if tx.is_closed() {
                        continue;
                    }
                    let ok = match stream.as_mut() {
                        Some(s) => s.0.watch(spec.key.clone(), Some(options(id, &spec))).await.is_ok(),
                        None => match open(&mut paths, &spec, id).await {
                            Some((s, synced)) => {
                                stream = Some(s);
                                progress = synced;
                                (heard, asked) = (Instant::now(), None);
                                true
                            }
                            None => false,
                        },
                    };
                    if ok {
                        subs.insert(id, tx);
                        unconfirmed.push_back(Unconfirmed { id, key: spec.key, prefix: spec.prefix });
                    } else {
                        // Dropping `tx` tells the subscriber to try again (with backoff).
                        move_on(&mut paths, &mut stream, &mut subs, &mut unconfirmed);
                    }
                }
            },
            resp = next_response(&mut stream) => match resp {
                Some(resp) => {
                    (heard, asked) = (Instant::now(), None);
                    match dispatch(resp, &mut subs, &mut unconfirmed, progress) {
                        Next::Go => {}
                        Next::Cancel(id) => {
                            if let Some(s) = stream.as_mut() {
                                let _ = s.0.cancel(id).await;
                            }
                        }
                        Next::Refused { create, reason } => {
                            let may = match paths.client(SILENT).await {
                                Some(etcd) => permitted::may_read(&etcd, &create.key, create.prefix, SILENT).await,
                                None => None,
                            };
                            match may {
                                // A stale token: the same member, with the connection's token
                                // (valid, or refreshed by the check); every subscriber
                                // re-subscribes from where it is.
                                Some(true) => {
                                    tracing::debug!(target: "etcdlock", "a watch was refused for a stale auth token: the stream reopens with a valid one");
                                    stream = None;
                                    subs.clear();
                                    unconfirmed.clear();
                                }
                                Some(false) => {
                                    if let Some(tx) = subs.remove(&create.id) {
                                        let err = Error::new(ErrorKind::Auth, format!("watch cancelled by etcd: {reason}"));
                                        let _ = tx.try_send(Msg::Failed(Box::new(err)));
                                    }
                                }
                                None => move_on(&mut paths, &mut stream, &mut subs, &mut unconfirmed),
                            }
                        }
                    }
                }
                // Broken: every subscriber re-subscribes from where it is.
                None => move_on(&mut paths, &mut stream, &mut subs, &mut unconfirmed),
            },
            _ = tokio::time::sleep_until(check), if watching => {
                if asked.is_some() {
                    // No answer: the member is unreachable.
                    move_on(&mut paths, &mut stream, &mut subs, &mut unconfirmed);
                } else if let Some(s) = stream.as_mut() {
                    let _ = s.0.request_progress().await;
                    asked = Some(Instant::now());
                }
            }
        }
    }
}

/// Drops the stream and every subscriber (each re-subscribes from where it is, and with that
/// the next stream opens on the next member).
fn move_on(
    paths: &mut Paths,
    stream: &mut Option<Stream>,
    subs: &mut HashMap<i64, Sender<Msg>>,
    unconfirmed: &mut VecDeque<Unconfirmed>,
) {
    paths.next();
    *stream = None;
    subs.clear();
    unconfirmed.clear();
}

/// Opens a stream on the current member with the watch `id`, within [`SILENT`].
/// Also says whether the member's progress answers can be passed on.
async fn open(paths: &mut Paths, spec: &Spec, id: i64) -> Option<(Stream, bool)> {
    let etcd = paths.client(SILENT).await?;
    let synced = progress_is_synced(&etcd).await;
    for refreshed in [false, true] {
        let mut wc = etcd.watch_client();
        let open = wc.watch(spec.key.clone(), Some(options(id, spec)));
        match tokio::time::timeout(SILENT, open).await.ok()? {
            Ok(stream) => return Some((stream.split(), synced)),
            // The member's connection carries an auth token that expired: a new one, once.
            Err(e) if !refreshed && crate::error::stale_token(&e) => {
                tokio::time::timeout(SILENT, etcd.refresh_token()).await.ok()?.ok()?;
            }
            Err(_) => return None,
        }
    }
    None
}

async fn next_response(stream: &mut Option<Stream>) -> Option<etcd_client::WatchResponse> {
    match stream {
        Some(s) => s.1.message().await.ok().flatten(),
        None => std::future::pending().await,
    }
}
