//! The channel the KV requests take: each request goes straight onto one HTTP/2 connection
//! from the task that makes it.
//!
//! Why not tonic's Channel: it hands every request to a worker task (tower's Buffer, which
//! also runs the balancer), which hands it to hyper's connection task, which spawns a task to
//! send the body and another to wait for the response: three task hops and two spawns per
//! request before a byte is written, which cost a raw put-if-absent/delete cycle a large share
//! more client CPU and time. Here the calling task writes into h2's connection state itself and
//! only the connection's own I/O task remains in between.
//!
//! One connection at a time, to one endpoint; each channel starts at a random one, so that the
//! clients of a cluster spread over its members. The next endpoint is used when connecting fails
//! or takes longer than the attempt bound ([`attempt_limit`]), when the connection dies or its
//! keepalive ping goes unanswered, and, with more than one endpoint, when a member answers
//! Unavailable (no leader, or leader changed: requests carry `hasleader`, so a member cut off
//! from the cluster says so at once instead of hanging) or leaves a request unanswered for
//! `STALL`. A request that may be applied twice is then also sent to the next member, and
//! the first answer wins; any other waits on for its deadline. Every request carries the
//! caller's remaining time as `grpc-timeout` (`CALL`). Unary calls only: watches and
//! keepalives keep etcd-client's own streams (`paths.rs`).

mod conn;
mod request;

use bytes::Bytes;
use conn::{collect, RecvBody};
use request::{first_ok, Pending, Unary};
use http::uri::{Authority, Scheme};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio_rustls::rustls::pki_types::ServerName;
use tonic::Status;
use crate::error::fate::{self, Fate};
use crate::transport::stats::ConnStats;
use crate::transport::tls::Tls;

type Request = http::Request<tonic::body::Body>;
type Response = http::Response<tonic::body::Body>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the channel needs to know of the request being made, beyond its bytes.
#[derive(Clone, Copy)]
pub(crate) struct Call {
    /// Sent as `grpc-timeout` (the time left, which the server counts from the request's
    /// arrival): etcd's handler context then ends with the caller's patience, and a request
    /// still waiting at the server past it is dropped, not proposed after the caller gave up.
    pub deadline: tokio::time::Instant,
    /// Whether applying the request twice does no harm (a read, a delete, a Txn whose
    /// comparison makes the second a no-op): only then may a second member be asked too.
    pub idempotent: bool,
}

tokio::task_local! {
    /// The request being made (set by `Client::send` around each attempt).
    pub(crate) static CALL: Call;
    /// Set when the request went to a second member too (see `Shared::send`), for a caller
    /// that asks with [`noting_second_send`].
    static SENT_TWICE: std::cell::Cell<bool>;
}

/// Runs `f` (a request on this channel) and says whether it went to a second member too: then
/// the answer may be the second copy's, which finds the work already done by the first (a
/// fenced delete whose compare fails because its own first copy deleted the key).
pub(crate) async fn noting_second_send<F: Future>(f: F) -> (F::Output, bool) {
    SENT_TWICE.scope(std::cell::Cell::new(false), async move {
        let out = f.await;
        (out, SENT_TWICE.with(std::cell::Cell::get))
    })
    .await
}

/// Bounds on one connection attempt with more than one endpoint; see [`attempt_limit`].
const ATTEMPT_MIN: Duration = Duration::from_millis(100);
const ATTEMPT_MAX: Duration = Duration::from_secs(1);

/// How long one connection attempt (TCP, HTTP/2 handshake, a ping answered) may take. With one
/// endpoint, all of `connect_timeout`: there is nowhere else to go. With more, a third of it
/// (the caller passes the shorter of the connect and request timeouts), at most
/// `ATTEMPT_MAX`: a member that accepts connections and stays silent, or drops SYNs, then
/// costs a request that long, and the next member is tried well within the request's deadline.
/// A second is several round trips even to a member on another continent; `ATTEMPT_MIN`
/// keeps very short timeouts from cutting off a connection that a near member makes in time.
pub fn attempt_limit(connect_timeout: Duration, endpoints: usize) -> Duration {
    if endpoints <= 1 {
        return connect_timeout;
    }
    (connect_timeout / 3).clamp(ATTEMPT_MIN, ATTEMPT_MAX).min(connect_timeout)
}

/// How long a request may go unanswered before new requests avoid its member, and an
/// idempotent one is sent to the next member too (with more than one endpoint): see
/// transport/health.rs.
const STALL: Duration = crate::transport::health::REQUEST;

/// A `tower::Service` for tonic's generated clients (via `etcd_client::Channel::Custom`).
#[derive(Clone)]
pub(crate) struct H2Channel {
    shared: Arc<Shared>,
}

struct Shared {
    endpoints: Vec<Endpoint>,
    /// With TLS: `https` requests over TLS connections.
    tls: Option<Arc<Tls>>,
    /// Bound on one connection attempt ([`attempt_limit`]).
    attempt: Duration,
    state: StdMutex<State>,
    /// One connection attempt at a time: 64 tasks finding no connection open one, not 64.
    connecting: tokio::sync::Mutex<()>,
    ids: AtomicU64,
    /// Counts the moves to another member.
    stats: Arc<ConnStats>,
}

struct State {
    /// Index into `endpoints` of the one to use (or try) next.
    next: usize,
    conn: Option<Conn>,
}

#[derive(Clone)]
struct Conn {
    send: h2::client::SendRequest<Bytes>,
    endpoint: usize,
    id: u64,
    /// Requests waiting for their answer on this connection.
    waiting: Arc<AtomicUsize>,
}

/// One member's address, as the channel needs it.
struct Endpoint {
    authority: Authority,
    /// `host:port`, to connect to.
    addr: String,
    /// With TLS: the name its certificate must carry.
    server_name: Option<ServerName<'static>>,
}

impl H2Channel {
    /// `endpoints` are `http://host:port` (or, with `tls`, `https://`) URLs. Connects lazily,
    /// first to a random endpoint. `connect_timeout` bounds connecting to all of them; see
    /// [`attempt_limit`].
    pub fn new(endpoints: &[String], connect_timeout: Duration, tls: Option<Arc<Tls>>, stats: Arc<ConnStats>) -> crate::Result<H2Channel> {
        let endpoints = endpoints
            .iter()
            .map(|e| {
                let hostport = e.trim_start_matches("http://").trim_start_matches("https://");
                let authority: Authority =
                    hostport.parse().map_err(|_| crate::Error::invalid(format!("endpoint {e:?} is not a valid URL")))?;
                let server_name = tls.as_ref().map(|t| t.server_name(authority.host())).transpose()?;
                Ok(Endpoint { authority, addr: hostport.to_string(), server_name })
            })
            .collect::<crate::Result<Vec<_>>>()?;
        let first = rand::random_range(0..endpoints.len().max(1));
        Ok(H2Channel {
            shared: Arc::new(Shared {
                attempt: attempt_limit(connect_timeout, endpoints.len()),
                tls,
                endpoints,
                state: StdMutex::new(State { next: first, conn: None }),
                connecting: Default::default(),
                ids: AtomicU64::new(0),
                stats,
            }),
        })
    }
}

/// An etcd-client client whose requests take an `H2Channel`: unary calls only (KV, lease
/// grant, revoke, time-to-live; a watch or keepalive stream fails with Unimplemented). With a
/// user and password set in `opts`, this authenticates (through the channel).
pub async fn etcd_client(endpoints: &[String], connect_timeout: Duration, opts: etcd_client::ConnectOptions) -> crate::Result<etcd_client::Client> {
    client_over(endpoints, connect_timeout, opts, None, Default::default()).await
}

/// [`etcd_client`], over TLS when `tls` is given (the endpoints are then `https://`).
pub(crate) async fn client_over(
    endpoints: &[String],
    connect_timeout: Duration,
    opts: etcd_client::ConnectOptions,
    tls: Option<Arc<Tls>>,
    stats: Arc<ConnStats>,
) -> crate::Result<etcd_client::Client> {
    let channel = H2Channel::new(endpoints, connect_timeout, tls, stats)?;
    let channel = etcd_client::Channel::Custom(tower::util::BoxCloneSyncService::new(channel));
    Ok(etcd_client::Client::from_channel(channel, Some(opts)).await?)
}

impl tower::Service<Request> for H2Channel {
    type Response = Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move { shared.send(req).await.map_err(|s| Box::new(s) as BoxError) })
    }
}

impl Shared {
    async fn send(self: &Arc<Self>, req: Request) -> Result<Response, Status> {
        let (head, body) = req.into_parts();
        let path = head.uri.path_and_query().cloned().ok_or_else(|| Status::internal("request without a path"))?;
        if matches!(path.path(), "/etcdserverpb.Watch/Watch" | "/etcdserverpb.Lease/LeaseKeepAlive") {
            // Its body would never end: streams need a connection that sends as they go.
            return Err(Status::unimplemented("the KV channel carries unary calls only; streams take paths.rs"));
        }
        // A unary request's body is one encoded message, ready at once.
        let body = collect(body).await?;
        let req = Unary { head, path, body };
        let (conn, mut response) = self.start(&req).await?;
        if self.endpoints.len() == 1 {
            return self.answered(&conn, response.await);
        }
        // A member that is stopped or cut off keeps its connection open and answers nothing
        // (until the keepalive ping gives up): after STALL without an answer, new requests go
        // to another member.
        if let Ok(r) = tokio::time::timeout(STALL, &mut response).await {
            return self.answered(&conn, r);
        }
        self.forget(&conn);
        if !conn::idempotent() {
            return self.answered(&conn, response.await);
        }
        // Applying it twice does no harm: ask the next member too, and take the first answer.
        // A member that is only slow still gets to answer, and the request is not lost when
        // the next member cannot be reached.
        let first = async { self.answered(&conn, response.await) };
        let second = async {
            let (conn, response) = self.start(&req).await?;
            let _ = SENT_TWICE.try_with(|c| c.set(true));
            self.answered(&conn, response.await)
        };
        first_ok(first, second).await
    }

    /// Sends `req` on the current connection (or a new one) and returns the pending answer.
    async fn start(self: &Arc<Self>, req: &Unary) -> Result<(Conn, Pending), Status> {
        // A connection found closed (etcd said GOAWAY, or it died idle) has sent nothing yet:
        // one more try on a fresh one before the caller hears of it.
        let mut tries = 2;
        let (conn, mut send) = loop {
            let conn = self.conn().await?;
            match conn.send.clone().ready().await {
                Ok(send) => break (conn, send),
                Err(e) => {
                    self.forget(&conn);
                    tries -= 1;
                    if tries == 0 {
                        return Err(fate::status(Fate::Unsent, format!("no connection to etcd: {e}")));
                    }
                }
            }
        };
        let scheme = if self.tls.is_some() { Scheme::HTTPS } else { Scheme::HTTP };
        let head = req.head(scheme, self.endpoints[conn.endpoint].authority.clone())?;
        let (response, mut stream) = send.send_request(head, false).map_err(|e| self.failed(&conn, e))?;
        stream.send_data(req.body.clone(), true).map_err(|e| self.failed(&conn, e))?;
        let pending = Pending::new(response, &conn.waiting);
        Ok((conn, pending))
    }

    /// The caller's view of an answer that came on `conn`.
    fn answered(&self, conn: &Conn, response: Result<http::Response<h2::RecvStream>, h2::Error>) -> Result<Response, Status> {
        let response = response.map_err(|e| self.failed(conn, e))?;
        // grpc-status in the head: a trailers-only answer, the way etcd reports "no leader".
        if self.endpoints.len() > 1 && response.headers().get("grpc-status").is_some_and(|s| s == "14") {
            self.forget(conn);
        }
        Ok(response.map(|recv| tonic::body::Body::new(RecvBody { recv, data_done: false })))
    }

    /// The current connection, or a new one to the next endpoint that accepts one.
    async fn conn(self: &Arc<Self>) -> Result<Conn, Status> {
        if let Some(c) = self.lock().conn.clone() {
            return Ok(c);
        }
        let _one = self.connecting.lock().await;
        if let Some(c) = self.lock().conn.clone() {
            return Ok(c);
        }
        let mut last = None;
        for _ in 0..self.endpoints.len() {
            let endpoint = self.lock().next % self.endpoints.len();
            match conn::connect(self, endpoint, self.attempt).await {
                Ok(c) => {
                    self.lock().conn = Some(c.clone());
                    return Ok(c);
                }
                Err(e) => {
                    self.lock().next = endpoint + 1;
                    last = Some(e);
                }
            }
        }
        Err(match last {
            Some(conn::Failed::Io(e)) => fate::status(Fate::Unsent, format!("cannot connect to etcd: {e}")),
            Some(conn::Failed::Tls(e)) => fate::status(Fate::UnsentForGood, format!("cannot connect to etcd: {e}")),
            Some(conn::Failed::Refused(e)) => Status::permission_denied(e),
            None => fate::status(Fate::Unsent, "cannot connect to etcd: no endpoint"),
        })
    }

    fn failed(&self, conn: &Conn, e: h2::Error) -> Status {
        if e.is_io() || e.is_go_away() {
            self.forget(conn);
        }
        Status::unavailable(format!("etcd connection failed: {e}"))
    }

    /// Stops using `conn` for new requests: the next one connects to the next endpoint.
    fn forget(&self, conn: &Conn) {
        self.forget_id(conn.id);
    }

    fn forget_id(&self, id: u64) {
        let mut state = self.lock();
        if let Some(endpoint) = state.conn.as_ref().filter(|c| c.id == id).map(|c| c.endpoint) {
            state.next = endpoint + 1;
            state.conn = None;
            self.stats.member_switches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tracing::info!(target: "etcdlock", member = %self.endpoints[endpoint].addr, "KV requests leave a member that failed, went silent or has no leader");
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}
