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
//! [`STALL`]. Every request carries the caller's remaining time as `grpc-timeout`
//! ([`DEADLINE`]). Unary calls only: watches and keepalives keep etcd-client's own streams
//! (`paths.rs`).

mod conn;

use bytes::Bytes;
use conn::{collect, RecvBody};
use http::uri::{Authority, Scheme};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio_rustls::rustls::pki_types::ServerName;
use tonic::Status;
use crate::transport::tls::Tls;

type Request = http::Request<tonic::body::Body>;
type Response = http::Response<tonic::body::Body>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

tokio::task_local! {
    /// The deadline of the request being made (set by `Client::send` around each attempt),
    /// sent as `grpc-timeout` (the time left, which the server counts from the request's
    /// arrival): etcd's handler context then ends with the caller's patience, and a request
    /// still waiting at the server past it is dropped, not proposed after the caller gave up.
    pub(crate) static DEADLINE: tokio::time::Instant;
}

/// Bounds on one connection attempt with more than one endpoint; see [`attempt_limit`].
const ATTEMPT_MIN: Duration = Duration::from_millis(100);
const ATTEMPT_MAX: Duration = Duration::from_secs(1);

/// How long one connection attempt (TCP, HTTP/2 handshake, a ping answered) may take. With one
/// endpoint, all of `connect_timeout`: there is nowhere else to go. With more, a third of it
/// (the caller passes the shorter of the connect and request timeouts), at most
/// [`ATTEMPT_MAX`]: a member that accepts connections and stays silent, or drops SYNs, then
/// costs a request that long, and the next member is tried well within the request's deadline.
/// A second is several round trips even to a member on another continent; [`ATTEMPT_MIN`]
/// keeps very short timeouts from cutting off a connection that a near member makes in time.
pub fn attempt_limit(connect_timeout: Duration, endpoints: usize) -> Duration {
    if endpoints <= 1 {
        return connect_timeout;
    }
    (connect_timeout / 3).clamp(ATTEMPT_MIN, ATTEMPT_MAX).min(connect_timeout)
}

/// How long a request may go unanswered before new requests avoid its member (with more than
/// one endpoint). Far above any healthy answer, which takes milliseconds.
const STALL: Duration = Duration::from_secs(1);

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

/// Counts a request in [`Conn::waiting`] while it lives.
struct Waiting(Arc<AtomicUsize>);

impl Waiting {
    fn new(count: &Arc<AtomicUsize>) -> Waiting {
        count.fetch_add(1, Ordering::Relaxed);
        Waiting(count.clone())
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
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
    pub fn new(endpoints: &[String], connect_timeout: Duration, tls: Option<Arc<Tls>>) -> crate::Result<H2Channel> {
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
            }),
        })
    }
}

/// An etcd-client client whose requests take an [`H2Channel`]: unary calls only (KV, lease
/// grant, revoke, time-to-live; a watch or keepalive stream fails with Unimplemented). With a
/// user and password set in `opts`, this authenticates (through the channel).
pub async fn etcd_client(endpoints: &[String], connect_timeout: Duration, opts: etcd_client::ConnectOptions) -> crate::Result<etcd_client::Client> {
    client_over(endpoints, connect_timeout, opts, None).await
}

/// [`etcd_client`], over TLS when `tls` is given (the endpoints are then `https://`).
pub(crate) async fn client_over(
    endpoints: &[String],
    connect_timeout: Duration,
    opts: etcd_client::ConnectOptions,
    tls: Option<Arc<Tls>>,
) -> crate::Result<etcd_client::Client> {
    let channel = H2Channel::new(endpoints, connect_timeout, tls)?;
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
        let (mut head, body) = req.into_parts();
        let path = head.uri.path_and_query().cloned().ok_or_else(|| Status::internal("request without a path"))?;
        if matches!(path.path(), "/etcdserverpb.Watch/Watch" | "/etcdserverpb.Lease/LeaseKeepAlive") {
            // Its body would never end: streams need a connection that sends as they go.
            return Err(Status::unimplemented("the KV channel carries unary calls only; streams take paths.rs"));
        }
        // A unary request's body is one encoded message, ready at once.
        let body = collect(body).await?;
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
                        // The words tonic uses for a request that never left, which callers look for.
                        return Err(Status::unavailable(format!("error trying to connect: {e}")));
                    }
                }
            }
        };
        head.uri = http::Uri::builder()
            .scheme(if self.tls.is_some() { Scheme::HTTPS } else { Scheme::HTTP })
            .authority(self.endpoints[conn.endpoint].authority.clone())
            .path_and_query(path)
            .build()
            .map_err(|e| Status::internal(e.to_string()))?;
        // Measured now, after any wait for a connection.
        if let Some(t) = conn::grpc_timeout() {
            head.headers.insert("grpc-timeout", t);
        }
        let _waiting = Waiting::new(&conn.waiting);
        let (mut response, mut stream) = send.send_request(http::Request::from_parts(head, ()), false).map_err(|e| self.failed(&conn, e))?;
        stream.send_data(body, true).map_err(|e| self.failed(&conn, e))?;
        let response = if self.endpoints.len() > 1 {
            // A member that is stopped or cut off keeps its connection open and answers
            // nothing (until the keepalive ping gives up): after STALL without an answer, new
            // requests go to another member, while this one waits on.
            match tokio::time::timeout(STALL, &mut response).await {
                Ok(r) => r,
                Err(_) => {
                    self.forget(&conn);
                    response.await
                }
            }
        } else {
            response.await
        };
        let response = response.map_err(|e| self.failed(&conn, e))?;
        // grpc-status in the head: a trailers-only answer, the way etcd reports "no leader".
        if self.endpoints.len() > 1 && response.headers().get("grpc-status").is_some_and(|s| s == "14") {
            self.forget(&conn);
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
            // The words tonic uses for a request that never left, which callers look for.
            Some(conn::Failed::Io(e)) => Status::unavailable(format!("tcp connect error: {e}")),
            Some(conn::Failed::Tls(e)) => Status::unavailable(format!("error trying to connect: {e}")),
            Some(conn::Failed::Refused(e)) => Status::permission_denied(e),
            None => Status::unavailable("tcp connect error: no endpoint"),
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
        if let Some(c) = state.conn.as_ref().filter(|c| c.id == id) {
            state.next = c.endpoint + 1;
            state.conn = None;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}
