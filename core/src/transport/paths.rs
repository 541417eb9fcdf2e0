//! The member a client's long-lived stream (keepalive, watch) talks to.
//!
//! Such a stream talks to one member at a time over a connection of its own, not through the
//! client's balanced channel: a member whose network silently drops everything keeps its
//! connection open, so the balancer would go on choosing it (until HTTP/2 pings give up, after
//! 15 s), and a lease or a waiting lock would pay for it. The stream's owner notices the silence
//! (an unanswered keepalive, an unanswered progress request) and moves on with [`Paths::next`].

use crate::transport::backoff::retry;
use crate::error::{Error, ErrorKind, Result};
use crate::transport::stats::ConnStats;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The member the stream talks to, on a connection of its own (with only one endpoint, one
/// connection the client's streams share: [`single`]).
pub(crate) struct Paths {
    /// Which stream, for the events (`keepalive`, `watch`).
    stream: &'static str,
    shared: Option<etcd_client::Client>,
    endpoints: Vec<String>,
    opts: etcd_client::ConnectOptions,
    current: usize,
    conn: Option<etcd_client::Client>,
    /// The client's connection counters (reopens here; keepalive round trips by the keeper).
    pub stats: Arc<ConnStats>,
}

impl Paths {
    /// `shared`: the connection to use when there is only one endpoint.
    pub fn new(
        stream: &'static str,
        shared: Option<etcd_client::Client>,
        endpoints: Vec<String>,
        opts: etcd_client::ConnectOptions,
        stats: Arc<ConnStats>,
    ) -> Paths {
        // A random first member spreads the streams of many clients.
        let current = rand::random_range(0..endpoints.len().max(1));
        Paths { stream, shared, endpoints, opts, current, conn: None, stats }
    }

    /// A connection to the current member, made within `limit`.
    pub async fn client(&mut self, limit: Duration) -> Option<etcd_client::Client> {
        if self.endpoints.len() <= 1 && self.shared.is_some() {
            return self.shared.clone();
        }
        if self.conn.is_none() {
            let ep = [self.endpoints[self.current].clone()];
            self.conn = tokio::time::timeout(limit, etcd_client::Client::connect(ep, Some(self.opts.clone()))).await.ok()?.ok();
        }
        self.conn.clone()
    }

    /// The current member failed or went silent: the next one, on a fresh connection.
    pub fn next(&mut self) {
        self.conn = None;
        let from = self.current;
        self.current = (self.current + 1) % self.len();
        self.stats.reopened(self.stream);
        let member = |i: usize| self.endpoints.get(i).map_or("", String::as_str);
        tracing::info!(target: "etcdlock", stream = self.stream, from = member(from), to = member(self.current), "stream broke or went silent: reopening it on the next member");
    }

    /// How many members there are to try.
    pub fn len(&self) -> usize {
        self.endpoints.len().max(1)
    }
}

/// etcd-client's own client to a single endpoint, which that endpoint's streams share. Made on
/// the shared runtime, so that its connection's tasks live there and outlive the caller's.
pub(crate) async fn single(eps: &[String], copts: &etcd_client::ConnectOptions, deadline: Instant) -> Result<etcd_client::Client> {
    let connect = {
        let (eps, copts) = (eps.to_vec(), copts.clone());
        move || {
            let (eps, copts) = (eps.clone(), copts.clone());
            async move { Ok(etcd_client::Client::connect(eps, Some(copts)).await?) }
        }
    };
    crate::runtime::spawn(async move { retry(Some(deadline), connect).await })
        .await
        .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?
        .map_err(crate::error::unreachable)
}

/// Whether requests and streams carry etcd's `hasleader` metadata: always, except in the
/// negative control of the minority-member fault test (tests/history/test_partition.py), which
/// sets `ETCDLOCK_TEST_NO_REQUIRE_LEADER=1` to show that the test catches a client without it.
/// A test-only switch, deliberately not a client option: no user should run without it.
fn require_leader() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("ETCDLOCK_TEST_NO_REQUIRE_LEADER").map_or(true, |v| v != "1"))
}

/// The options of every etcd-client connection of a client.
pub(crate) fn connect_options(connect_timeout: Duration, user: Option<&(String, String)>) -> etcd_client::ConnectOptions {
    let copts = etcd_client::ConnectOptions::new()
        .with_connect_timeout(connect_timeout)
        // Without it a member cut off from the leader keeps watch and keepalive streams open
        // but silent forever.
        .with_require_leader(require_leader())
        // etcd refuses client pings more often than every 5 s (GOAWAY "too many pings").
        .with_keep_alive(Duration::from_secs(10), Duration::from_secs(5))
        .with_keep_alive_while_idle(true);
    match user {
        Some((user, password)) => copts.with_user(user.clone(), password.clone()),
        None => copts,
    }
}
