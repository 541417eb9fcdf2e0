//! The channel the KV requests take: each request goes straight onto one HTTP/2 connection
//! from the task that makes it.
//!
//! Why not tonic's Channel: it hands every request to a worker task (tower's Buffer, which
//! also runs the balancer), which hands it to hyper's connection task, which spawns a task to
//! send the body and another to wait for the response: three task hops and two spawns per
//! request before a byte is written. A raw put-if-absent/delete cycle took 170k client
//! instructions over it against 111k here, and ~110 us more of its ~700 us on 2 cores. Here
//! the calling task writes into h2's connection state itself and only the connection's own
//! I/O task remains in between.
//!
//! One connection at a time, to one endpoint. The next endpoint is used when connecting fails,
//! when the connection dies or its keepalive ping goes unanswered, and, with more than one
//! endpoint, when a member answers Unavailable (no leader, or leader changed: requests carry
//! `hasleader`, so a member cut off from the cluster says so at once instead of hanging) or
//! leaves a request unanswered for [`STALL`]. Watches and keepalives keep etcd-client's own
//! streams.

use bytes::Bytes;
use http::uri::{Authority, Scheme};
use http_body::{Body as _, Frame};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex as StdMutex, Weak};
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tonic::Status;

type Request = http::Request<tonic::body::Body>;
type Response = http::Response<tonic::body::Body>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Connection = h2::client::Connection<tokio::net::TcpStream, Bytes>;

/// Pings on an established connection, and how long a ping may go unanswered before the
/// connection counts as dead. etcd refuses pings more often than every 5 s.
const KEEPALIVE: Duration = Duration::from_secs(10);
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a request may go unanswered before new requests avoid its member (with more than
/// one endpoint). Far above any healthy answer, which takes milliseconds.
const STALL: Duration = Duration::from_secs(1);

/// A `tower::Service` for tonic's generated clients (via `etcd_client::Channel::Custom`).
#[derive(Clone)]
pub(crate) struct H2Channel {
    shared: Arc<Shared>,
}

struct Shared {
    endpoints: Vec<(Authority, String)>,
    connect_timeout: Duration,
    state: StdMutex<State>,
    /// One connection attempt at a time: 64 tasks finding no connection open one, not 64.
    connecting: tokio::sync::Mutex<()>,
    ids: AtomicU64,
}

#[derive(Default)]
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

impl H2Channel {
    /// `endpoints` are `http://host:port` URLs. Connects lazily.
    pub fn new(endpoints: &[String], connect_timeout: Duration) -> crate::Result<H2Channel> {
        let endpoints = endpoints
            .iter()
            .map(|e| {
                let hostport = e.trim_start_matches("http://");
                let authority = hostport.parse().map_err(|_| crate::Error::invalid(format!("endpoint {e:?} is not a valid URL")))?;
                Ok((authority, hostport.to_string()))
            })
            .collect::<crate::Result<_>>()?;
        Ok(H2Channel {
            shared: Arc::new(Shared {
                endpoints,
                connect_timeout,
                state: Default::default(),
                connecting: Default::default(),
                ids: AtomicU64::new(0),
            }),
        })
    }
}

/// An etcd-client client whose requests take an [`H2Channel`]. With a user and password set
/// in `opts`, this authenticates (through the channel).
pub async fn etcd_client(endpoints: &[String], connect_timeout: Duration, opts: etcd_client::ConnectOptions) -> crate::Result<etcd_client::Client> {
    let channel = etcd_client::Channel::Custom(tower::util::BoxCloneSyncService::new(H2Channel::new(endpoints, connect_timeout)?));
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
        // A unary request's body is one encoded message, ready at once.
        let body = collect(body).await?;
        let path = head.uri.path_and_query().cloned().ok_or_else(|| Status::internal("request without a path"))?;
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
            .scheme(Scheme::HTTP)
            .authority(self.endpoints[conn.endpoint].0.clone())
            .path_and_query(path)
            .build()
            .map_err(|e| Status::internal(e.to_string()))?;
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
            match self.connect(endpoint).await {
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
        Err(Status::unavailable(format!("tcp connect error: {}", last.unwrap_or_default())))
    }

    async fn connect(self: &Arc<Self>, endpoint: usize) -> Result<Conn, String> {
        let addr = self.endpoints[endpoint].1.clone();
        let limit = self.connect_timeout;
        let id = self.ids.fetch_add(1, Ordering::Relaxed);
        let home = Arc::downgrade(self);
        // On the shared runtime: a socket belongs to the reactor of the runtime that opened it,
        // and the caller's runtime may be gone long before the connection is.
        let opened = crate::runtime::spawn(async move {
            let (send, connection) = match tokio::time::timeout(limit, open(&addr)).await {
                Ok(r) => r.map_err(|e| format!("{addr}: {e}"))?,
                Err(_) => return Err(format!("{addr}: timed out")),
            };
            let waiting = Arc::new(AtomicUsize::new(0));
            tokio::spawn(drive(connection, waiting.clone(), home, id));
            Ok((send, waiting))
        });
        let (send, waiting) = opened.await.map_err(|e| e.to_string())??;
        Ok(Conn { send, endpoint, id, waiting })
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

async fn open(addr: &str) -> Result<(h2::client::SendRequest<Bytes>, Connection), String> {
    let tcp = tokio::net::TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let _ = tcp.set_nodelay(true);
    h2::client::Builder::new()
        // h2's 64 KiB defaults would take a round trip per 64 KiB of a large range.
        .initial_window_size(1 << 20)
        .initial_connection_window_size(4 << 20)
        .handshake(tcp)
        .await
        .map_err(|e| e.to_string())
}

/// A connection's I/O task. It ends when the connection does (also when the channel is gone
/// and no request is left on it: h2 closes a connection without handles), or when a ping
/// goes unanswered; then the channel stops using the connection.
async fn drive(mut connection: Connection, waiting: Arc<AtomicUsize>, home: Weak<Shared>, id: u64) {
    let keepalive = keepalive(connection.ping_pong(), waiting);
    tokio::select! {
        _ = connection => {}
        _ = keepalive => {}
    }
    if let Some(home) = home.upgrade() {
        home.forget_id(id);
    }
}

/// Returns when a ping goes unanswered (never, without pings). Pings only while a request
/// waits for its answer, which is when a dead connection costs something: etcd counts pings on
/// a connection without requests as abuse and closes it after the third (gRPC's keepalive
/// enforcement without `PermitWithoutStream`), and the next request would then fail with it.
async fn keepalive(pings: Option<h2::PingPong>, waiting: Arc<AtomicUsize>) {
    let Some(mut pings) = pings else { return std::future::pending().await };
    loop {
        tokio::time::sleep(KEEPALIVE).await;
        if waiting.load(Ordering::Relaxed) == 0 {
            continue;
        }
        match tokio::time::timeout(KEEPALIVE_TIMEOUT, pings.ping(h2::Ping::opaque())).await {
            Ok(Ok(_)) => {}
            _ => return,
        }
    }
}

async fn collect(mut body: tonic::body::Body) -> Result<Bytes, Status> {
    let mut out = Vec::new();
    let mut first = None;
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        if let Ok(data) = frame?.into_data() {
            // The usual case, one frame: no copy.
            if first.is_none() && out.is_empty() {
                first = Some(data);
                continue;
            }
            out.extend_from_slice(&first.take().unwrap_or_default());
            out.extend_from_slice(&data);
        }
    }
    Ok(first.unwrap_or_else(|| out.into()))
}

/// A response body: h2's data frames, then its trailers (where gRPC puts the status).
struct RecvBody {
    recv: h2::RecvStream,
    data_done: bool,
}

impl http_body::Body for RecvBody {
    type Data = Bytes;
    type Error = h2::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, h2::Error>>> {
        let this = self.get_mut();
        if !this.data_done {
            match ready!(this.recv.poll_data(cx)) {
                Some(Ok(data)) => {
                    let _ = this.recv.flow_control().release_capacity(data.len());
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => this.data_done = true,
            }
        }
        Poll::Ready(ready!(this.recv.poll_trailers(cx)).transpose().map(|t| t.map(Frame::trailers)))
    }

    fn is_end_stream(&self) -> bool {
        self.recv.is_end_stream()
    }
}
