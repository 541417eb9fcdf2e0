//! The member a client's long-lived stream (keepalive, watch) talks to.
//!
//! Such a stream talks to one member at a time over a connection of its own, not through the
//! client's balanced channel: a member whose network silently drops everything keeps its
//! connection open, so the balancer would go on choosing it (until HTTP/2 pings give up, after
//! 15 s), and a lease or a waiting lock would pay for it. The stream's owner notices the silence
//! (an unanswered keepalive, an unanswered progress request) and moves on with [`Paths::next`].

use std::time::Duration;

/// The member the stream talks to, on a connection of its own (the client's own connection
/// when there is only one endpoint).
pub(crate) struct Paths {
    shared: etcd_client::Client,
    endpoints: Vec<String>,
    opts: etcd_client::ConnectOptions,
    current: usize,
    conn: Option<etcd_client::Client>,
}

impl Paths {
    pub fn new(shared: etcd_client::Client, endpoints: Vec<String>, opts: etcd_client::ConnectOptions) -> Paths {
        // A random first member spreads the streams of many clients.
        let current = rand::random_range(0..endpoints.len().max(1));
        Paths { shared, endpoints, opts, current, conn: None }
    }

    /// A connection to the current member, made within `limit`.
    pub async fn client(&mut self, limit: Duration) -> Option<etcd_client::Client> {
        if self.endpoints.len() <= 1 {
            return Some(self.shared.clone());
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
        self.current = (self.current + 1) % self.len();
    }

    /// How many members there are to try.
    pub fn len(&self) -> usize {
        self.endpoints.len().max(1)
    }
}
